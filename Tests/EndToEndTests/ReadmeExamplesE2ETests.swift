import Foundation
import Glibc
import Testing
import TestSupport

/// Every command example in README.md runs as written (issue 20, item 8).
///
/// The README's ```sh and ```console blocks run in order, in one bash each,
/// in one working folder with one `$HOME` (so the cache is
/// `$HOME/.cache/asyncfetch`, as a user's would be) and the built binary on
/// `PATH`. Only two addresses are rewritten: `https://example.com/` becomes a
/// server on 127.0.0.1 serving the README's images, and the remote tier's
/// `https://cache.example.internal/asyncfetch/` an nginx WebDAV store. An sh
/// block must exit 0 (`bash -e -o pipefail`); a console block's commands must
/// print the lines shown, up to paths, cache keys and times, and exit 1 when
/// they show a `failure` or `empty` line, else 0.
@Suite(.serialized) struct ReadmeExamplesE2ETests {
    /// Blocks the test cannot run, by a line they contain, and why. Keep it short.
    static let skipped: [(line: String, reason: String)] = [
        ("make demo", "the set-up commands build, test and install this project itself; CI runs them"),
    ]

    struct Block {
        let language: String
        let text: String
        let line: Int
    }

    /// The ```sh and ```console blocks (or those of `languages`) of a Markdown text, in order.
    static func blocks(_ markdown: String, languages: Set<String> = ["sh", "console"]) -> [Block] {
        var blocks: [Block] = []
        var open: (language: String, line: Int, lines: [String])?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if var current = open {
                if line == "```" {
                    if languages.contains(current.language) {
                        blocks.append(Block(language: current.language, text: current.lines.joined(separator: "\n"), line: current.line))
                    }
                    open = nil
                } else {
                    current.lines.append(String(line))
                    open = current
                }
            } else if line.hasPrefix("```") {
                open = (String(line.dropFirst(3)), index + 1, [])
            }
        }
        return blocks
    }

    /// A console block: each `$ ` line and the lines shown after it.
    static func commands(_ console: String) -> [(command: String, shown: [String])] {
        var commands: [(command: String, shown: [String])] = []
        for line in console.split(separator: "\n").map(String.init) {
            if line.hasPrefix("$ ") {
                commands.append((String(line.dropFirst(2)), []))
            } else if !commands.isEmpty {
                commands[commands.count - 1].shown.append(line)
            }
        }
        return commands
    }

    /// What may differ between the README's lines and a run's: the cache keys
    /// (the URLs differ) and the times (`1.2 ms`, or `1.25 s` on a slow day).
    static func shape(_ line: String) -> String {
        line.replacing(/[0-9a-f]{32}/, with: "<md5>").replacing(/\b[0-9]+\.[0-9]+ m?s\b/, with: "<time>")
    }

    /// Every ```swift block of the README type-checks against the library
    /// modules this build made, as an app importing them would (no
    /// `@testable`, Swift 6 mode): an example that stopped compiling fails
    /// here, not in a user's editor. A block without `import` lines goes on
    /// from the one before (its `loader`); what a README leaves to the reader
    /// (a UI's `show`, `showError`, the `body` to store) is declared for it.
    @Test func everySwiftExampleInTheReadmeCompiles() throws {
        let readme = try String(contentsOfFile: Paths.packageRoot + "/README.md", encoding: .utf8)
        var programs: [(line: Int, text: String)] = []
        for block in Self.blocks(readme, languages: ["swift"]) {
            if !block.text.contains("import "), let last = programs.popLast() {
                programs.append((last.line, last.text + "\n" + block.text))
            } else {
                programs.append((block.line, block.text))
            }
        }
        #expect(programs.count >= 4, "the loader's, Fetch's, DiskCache's and ImageFormats' examples")
        let products = Paths.buildProductsDirectory
        let moduleMaps = try FileManager.default.contentsOfDirectory(atPath: products)
            .map { products + "/" + $0 + "/module.modulemap" }
            .filter { FileManager.default.fileExists(atPath: $0) }
        let temp = try TempDirectory(prefix: "asyncfetch-readme-swift")
        for (index, program) in programs.enumerated() {
            let file = temp.file("example\(index)/main.swift")   // a main file: top-level code, as in the README
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try (Self.readerDeclarations(for: program.text) + program.text).write(toFile: file, atomically: true, encoding: .utf8)
            let arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", products + "/Modules"]
                + moduleMaps.flatMap { ["-Xcc", "-fmodule-map-file=" + $0] } + [file]
            let result = try runProcess("/usr/bin/env", arguments, timeout: 300)
            #expect(result.status == 0, "README.md line \(program.line):\n\(result.stderr)")
        }
    }

    /// What the README's Swift examples leave to the reader's app.
    static func readerDeclarations(for program: String) -> String {
        var lines = ["func show(_ path: String?) {}", "func showPlaceholder() {}", "func showError(_ message: String) {}"]
        if program.contains("(body)") && !program.contains("let body") { lines.append("let body: [UInt8] = []") }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func everyCommandExampleInTheReadmeRunsAsWritten() throws {
        let readme = try String(contentsOfFile: Paths.packageRoot + "/README.md", encoding: .utf8)
        let blocks = Self.blocks(readme)
        #expect(blocks.count >= 8, "the README's examples: \(blocks.count) blocks")

        // The images the README's URLs name; owl.png is the one that is never there.
        let site = try TempDirectory(prefix: "asyncfetch-readme-site")
        let png = Paths.fixtures + "/images/red-64x48.png", jpeg = Paths.fixtures + "/images/photo-120x80.jpg"
        try FileManager.default.createDirectory(atPath: site.file("img"), withIntermediateDirectories: true)
        for (source, name) in [(png, "cat.png"), (png, "a"), (jpeg, "img/dog.jpg")] {
            try FileManager.default.copyItem(atPath: source, toPath: site.file(name))
        }
        let origin = try ScriptedServer()
        origin.serveDirectory(site.path)
        let tier = try RemoteCacheE2ETests.Store()
        let home = try TempDirectory(prefix: "asyncfetch-readme-home")
        let work = home.file("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)

        let readmeSite = "https://example.com/", local = origin.url("/")
        let tierURL = "https://cache.example.internal/asyncfetch/"
        let binDirectory = (CLI.binary as NSString).deletingLastPathComponent
        let environment = ["HOME": home.path, "PATH": binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        let preamble = """
            unset ASYNCFETCH_CACHE_DIR XDG_CACHE_HOME ASYNCFETCH_REMOTE_CACHE http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY
            cd '\(work)'

            """
        func rewrite(_ text: String) -> String {
            text.replacingOccurrences(of: readmeSite, with: local).replacingOccurrences(of: tierURL, with: tier.url)
        }
        func back(_ text: String) -> String {
            text.replacingOccurrences(of: local, with: readmeSite).replacingOccurrences(of: home.path, with: "/home/me")
        }

        var skips: [String: Int] = [:]
        for block in blocks {
            if let skip = Self.skipped.first(where: { block.text.contains($0.line) }) {
                skips[skip.line, default: 0] += 1
                continue
            }
            let label = "README.md line \(block.line)"
            if block.language == "sh" {
                let result = try runProcess("/bin/bash", ["-e", "-o", "pipefail", "-c", preamble + rewrite(block.text)],
                                            environment: environment, timeout: 120)
                #expect(result.status == 0, "\(label) exits \(result.status):\n\(block.text)\n\(result.stdout)\(result.stderr)")
                continue
            }
            // A console block: run its commands in one shell, each followed by a
            // marker with its status (restored, so that `echo $?` sees it).
            let commands = Self.commands(block.text)
            var script = preamble + "exec 2>&1\n"
            for entry in commands {
                script += rewrite(entry.command) + "\n__s=$?; printf '\\n@@@ %d\\n' \"$__s\"; (exit $__s)\n"
            }
            let result = try runProcess("/bin/bash", ["-c", script], environment: environment, timeout: 120)
            var outputs: [(status: Int, lines: [String])] = []
            var lines: [String] = []
            for line in back(result.stdout).split(separator: "\n").map(String.init) {
                if line.hasPrefix("@@@ "), let status = Int(line.dropFirst(4)) {
                    outputs.append((status, lines))
                    lines = []
                } else {
                    lines.append(line)
                }
            }
            try #require(outputs.count == commands.count, "\(label): every command ran:\n\(result.stdout)")
            for (entry, output) in zip(commands, outputs) {
                #expect(output.lines.map(Self.shape) == entry.shown.map(Self.shape),
                        "\(label): `\(entry.command)` prints\n\(output.lines.joined(separator: "\n"))")
                if entry.command.hasPrefix("echo ") { continue }
                let failing = entry.shown.contains { $0.hasPrefix("failure ") || $0.hasPrefix("empty ") }
                #expect(output.status == (failing ? 1 : 0), "\(label): `\(entry.command)` exits \(output.status)")
                // A cache path shown is the MD5 of its URL, as the README says.
                for shown in entry.shown {
                    let fields = shown.components(separatedBy: "  ").filter { !$0.isEmpty }
                    guard fields.count >= 3, fields[2].hasPrefix("/"), let key = fields[2].split(separator: "/").last else { continue }
                    #expect(String(key) == (try CLI.md5sum(fields[1].trimmingCharacters(in: .whitespaces))), "\(label): \(shown)")
                }
            }
        }
        for skip in Self.skipped {
            #expect(skips[skip.line] == 1, "the skipped block with `\(skip.line)` (\(skip.reason)) is in the README once")
        }

        // What the examples' comments promise.
        for file in ["cat.png", "cat.jpg", "photos/cat.png", "photos/dog.jpg", "photos/seven.png"] {
            #expect(FileManager.default.fileExists(atPath: work + "/" + file), "\(file)")
        }
        #expect(tier.objects().count == 2, "the shards uploaded both entries to the tier: \(tier.objects())")
    }
}
