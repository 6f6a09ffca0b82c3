import Foundation
import TestSupport

/// Runs the built `asyncfetch` binary with a private cache directory.
struct CLI {
    let cache: TempDirectory
    var cacheDir: String { cache.path + "/cache" }
    static var binary: String { Paths.builtProduct("asyncfetch") }

    init() throws { cache = try TempDirectory(prefix: "asyncfetch-e2e") }

    func run(_ arguments: [String], environment: [String: String] = [:], stdin: [UInt8]? = nil, timeout: Double = 60) throws -> ProcessResult {
        var env = environment
        if env["ASYNCFETCH_CACHE_DIR"] == nil { env["ASYNCFETCH_CACHE_DIR"] = cacheDir }
        return try runProcess(Self.binary, arguments, environment: env, stdin: stdin, timeout: timeout)
    }

    /// Every stdout line parsed as a JSON object (fails the caller's #require on invalid JSON).
    static func jsonLines(_ text: String) -> [[String: Any]]? {
        var out: [[String: Any]] = []
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            out.append(object)
        }
        return out
    }

    static func md5sum(_ text: String) throws -> String {
        let result = try runProcess("/usr/bin/md5sum", [], stdin: Array(text.utf8))
        return String(result.stdout.prefix(32))
    }
}
