import Foundation
import Testing
import TestSupport

/// Short command lines skip swift-argument-parser (start-up time). The same
/// command lines with one more option the fast reader does not take
/// (`--retries 2`, the default) go through swift-argument-parser: both must
/// give the same output and exit status.
@Suite struct QuickParseE2ETests {
    /// JSON lines without their timings, in sorted order: what differs
    /// from run to run (durations, the order concurrent downloads finish)
    /// is left out.
    static func comparable(_ result: ProcessResult) -> [String] {
        result.stdout.split(separator: "\n").map { line in
            line.replacingOccurrences(of: #""durationMs":[0-9.]+"#, with: "", options: .regularExpression)
        }.sorted()
    }

    @Test func bothParsersAgree() throws {
        let server = try FixtureSite.server()
        let image = server.url("/images/red-64x48.png")
        let other = server.url("/images/anim-33x17.gif")
        let missing = server.url("/images/missing.png")
        let html = server.url("/not-an-image.html")
        let temp = try TempDirectory()
        let list = try temp.write("urls.txt", Array("# list\n\(other)\n\n  \(image)  \nnot a url\n".utf8))
        let cases: [[String]] = [
            ["--json", image, missing, html, "ftp://127.0.0.1/x", "not-a-url"],
            ["--json", "--offline", image, server.url("/never.png")],
            ["--offline", image],
            ["-q", "--offline", image, server.url("/never.png")],
            ["--json", "--input", list],
            ["--json", "-i", list, "--refresh", image],
            ["--json", "--no-progress", "--offline", image],
            ["--json", "--jobs", "8", "--jobs-per-host", "8", "--offline", "--input", list, image],
            ["--json", "--jobs=3", "--jobs-per-host=1", image, other],
            ["--json", "--jobs", "0", image],
            ["--json", "--jobs-per-host", "0", image],
        ]
        for arguments in cases {
            // Each parser gets its own cache, warmed the same way, so the runs see the same state.
            let quick = try CLI(), full = try CLI()
            for cli in [quick, full] { _ = try cli.run(["--retries", "2", image]) }
            let a = try quick.run(arguments)
            let b = try full.run(arguments + ["--retries", "2"])
            #expect(a.status == b.status, "\(arguments)")
            if a.status == 2 { #expect(a.stderr == b.stderr, "\(arguments)") }   // the same usage message
            #expect(Self.comparable(a).map { $0.replacingOccurrences(of: quick.cacheDir, with: "CACHE") }
                    == Self.comparable(b).map { $0.replacingOccurrences(of: full.cacheDir, with: "CACHE") }, "\(arguments)")
        }
    }

    @Test func outputFileAndCacheDirWorkOnTheFastPath() throws {
        let (server, cli) = try FixtureSite.start()
        let dir = cli.cache.path + "/explicit"
        let out = cli.cache.path + "/copy.png"
        let result = try cli.run(["--cache-dir=" + dir, "-o", out, server.url("/images/red-64x48.png")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(dir + "/"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: out))
                == Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/images/red-64x48.png")))
    }

    @Test func whatTheFastReaderDoesNotTakeStillWorks() throws {
        let cli = try CLI()
        // A repeat is a usage error (issue 16); a combined short flag, --help and a missing value go to swift-argument-parser.
        #expect(try cli.run(["--offline", "--offline", "http://127.0.0.1:9/x.png"]).status == 2)
        #expect(try cli.run(["-qv", "--offline", "http://127.0.0.1:9/x.png"]).status == 1)
        #expect(try cli.run(["--help"]).stdout.contains("USAGE"))
        let missingValue = try cli.run(["--cache-dir"])
        #expect(missingValue.status == 2)
        #expect(missingValue.stderr.contains("--cache-dir"))
        // `--cache-dir=` has no value: swift-argument-parser takes the next argument as it.
        let emptyValue = try cli.run(["--cache-dir=", "http://127.0.0.1:9/x.png", "--offline"])
        #expect(emptyValue.status == 2, "\(emptyValue.stdout)\(emptyValue.stderr)")
        let noURL = try cli.run(["--json"])
        #expect(noURL.status == 2 && noURL.stderr.contains("no URL given"))
    }
}
