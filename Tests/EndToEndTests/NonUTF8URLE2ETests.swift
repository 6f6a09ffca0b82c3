import Foundation
import Testing
import TestSupport

/// A URL with a byte that is not UTF-8 (a Latin-1 list, a stray 0xFF) is
/// the same URL in a list and as an argument: the byte percent-encoded
/// (`%E9`), printed so, keyed so and sent so; never U+FFFD.
@Suite struct NonUTF8URLE2ETests {
    @Test func aByteThatIsNotUTF8IsPercentEncodedAlikeInAListAndAnArgument() async throws {
        let (server, cli) = try FixtureSite.start()
        let prefix = server.url("/images/red-64x48.png?name=caf")
        let encoded = prefix + "%E9"
        let list = try cli.cache.write("latin1.txt", Array(prefix.utf8) + [0xE9] + Array("\n".utf8))
        let fetched = try await cli.run(["--json", "--input", list])
        #expect(fetched.status == 0, "\(fetched.stdout)\(fetched.stderr)")
        let lines = try #require(CLI.jsonLines(fetched.stdout))
        let success = try #require(lines.first { $0["phase"] as? String == "success" })
        #expect(success["url"] as? String == encoded, "printed with %E9, not U+FFFD: \(fetched.stdout)")
        let path = try #require(success["path"] as? String)
        #expect(path.hasSuffix("/" + (try CLI.md5sum(encoded))), "keyed by the %E9 form")
        #expect(server.requests("/images/red-64x48.png").map(\.path) == ["/images/red-64x48.png?name=caf%E9"],
                "the server is asked for the byte, percent-encoded")

        // The same bytes as an argument (a shell hands them over raw): the same URL and entry.
        let environment = ["ASYNCFETCH_CACHE_DIR": cli.cacheDir]
        let script = "exec \"$0\" \"$@\" \"$(printf '%s\\351' \"$PREFIX\")\""
        func run(_ arguments: [String]) throws -> ProcessResult {
            try runProcess("/bin/sh", ["-c", script, CLI.binary] + arguments, environment: environment.merging(["PREFIX": prefix]) { a, _ in a })
        }
        let offline = try run(["--offline", "--json"])
        #expect(offline.status == 0, "\(offline.stdout)\(offline.stderr)")
        let hit = try #require(CLI.jsonLines(offline.stdout)?.first)
        #expect(hit["url"] as? String == encoded && hit["path"] as? String == path && hit["source"] as? String == "cache",
                "\(offline.stdout)")
        let cachePath = try run(["cache", "path"])
        #expect(cachePath.status == 0 && cachePath.stdout == path + "\n", "\(cachePath.stdout)\(cachePath.stderr)")
    }
}
