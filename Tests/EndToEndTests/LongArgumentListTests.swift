import Foundation
import Testing
import TestSupport

/// `asyncfetch $(cat urls.txt)`: thousands of URL arguments keep their order
/// and their meaning next to options that take values. (How fast they parse is
/// the benchmarks' business: a timed bound here measured the machine's load.)
@Suite struct LongArgumentListTests {
    @Test func tenThousandURLArgumentsAreHandledInOrder() throws {
        let cli = try CLI()
        let urls = (0..<10_000).map { "http://127.0.0.1:9/never/\($0).png" }
        let result = try cli.run(["--offline", "--json", "-H", "Referer: http://127.0.0.1/page"] + urls)
        #expect(result.status == 1)
        let lines = try #require(CLI.jsonLines(result.stdout))
        #expect(lines.count == 10_001)
        #expect(lines.first?["url"] as? String == urls.first)
        #expect(lines[9_999]["url"] as? String == urls.last)
        #expect(lines.dropLast().allSatisfy { $0["phase"] as? String == "empty" })
    }

    @Test func aURLAfterAValueOptionStaysItsValue() throws {
        let cli = try CLI()
        let urls = (0..<20).map { "http://127.0.0.1:9/n/\($0).png" }
        let result = try cli.run(["--offline", "-o", "http://127.0.0.1:9/as-a-file-name"] + urls)
        #expect(result.status == 2, "-o takes exactly one URL, so 20 URLs are a usage error")
        #expect(result.stderr.contains("-o"))
    }
}
