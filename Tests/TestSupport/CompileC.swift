import Foundation

/// Writes `source` to `NAME.c` in `folder` and compiles it with the toolchain's
/// `clang` into `folder`'s `NAME` (`flags`: `-shared -fPIC` for a preload
/// library, include paths; `libraries`, after the source: `-ldl`). Returns the output's path and the
/// compiler's result, for the caller to require a zero status (its stderr says why not).
public func compileC(_ source: String, named name: String, in folder: TempDirectory,
                     flags: [String] = [], libraries: [String] = []) throws -> (path: String, compiled: ProcessResult) {
    let file = folder.file("\(name).c"), output = folder.file(name)
    try source.write(toFile: file, atomically: true, encoding: .utf8)
    let compiled = try runProcess("/usr/bin/env", ["clang"] + flags + ["-o", output, file] + libraries)
    return (output, compiled)
}
