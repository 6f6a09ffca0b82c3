import Foundation
import Testing
import TestSupport

/// `cache verify`, `prune` and `clear` take `--json` as `list` and `stats`
/// do (SPEC §7): JSON Lines a script reads, the summary last as a fetch
/// run's is (`jq '.summary | select(.)'`).
@Suite struct CacheMaintenanceJSONE2ETests {
    @Test func verifyPruneAndClearPrintJSONLinesWithASummaryLast() throws {
        let (server, cli) = try FixtureSite.start()
        let urls = ["/images/red-64x48.png", "/images/photo-120x80.jpg", "/images/anim-33x17.gif"].map { server.url($0) }
        #expect(try cli.run(urls).status == 0)
        let corrupt = cli.cacheDir + "/" + (try CacheE2E.key(urls[0]))
        #expect(truncate(corrupt, 10) == 0)
        let foreign = cli.cacheDir + "/" + String(repeating: "ab", count: 16)
        #expect(FileManager.default.createFile(atPath: foreign, contents: Data("mine".utf8)))

        let verify = try cli.run(["cache", "verify", "--json"])
        #expect(verify.status == 0, "\(verify.stderr)")
        let lines = try #require(CLI.jsonLines(verify.stdout), "\(verify.stdout)")
        #expect(lines.count == 3, "\(verify.stdout)")
        let removed = try #require(lines.first { $0["action"] as? String == "removed" })
        #expect(removed["url"] as? String == urls[0] && removed["path"] as? String == corrupt)
        #expect(removed["key"] as? String == (try CacheE2E.key(urls[0])) && removed["reason"] is String)
        let kept = try #require(lines.first { $0["action"] as? String == "kept" })
        #expect(kept["path"] as? String == foreign)
        let summary = try #require(lines.last?["summary"] as? [String: Any])
        #expect(summary["checked"] as? Int == 3 && summary["intact"] as? Int == 2 && summary["removed"] as? Int == 1)
        #expect(summary["kept"] as? Int == 1 && summary["failures"] as? Int == 0, "\(summary)")
        #expect(try cli.run(["--json", "cache", "verify"]).stdout.contains("\"intact\":2"), "--json before the command works too")

        let prune = try cli.run(["cache", "prune", "--max-age", "1d", "--json"])
        #expect(prune.status == 0, "\(prune.stderr)")
        let pruned = try #require(CLI.jsonLines(prune.stdout)?.first?["summary"] as? [String: Any], "\(prune.stdout)")
        #expect(pruned["removed"] as? Int == 0 && pruned["remaining"] as? Int == 2 && (pruned["remainingBytes"] as? Int ?? 0) > 0)

        let clear = try cli.run(["cache", "clear", "--json"])
        #expect(clear.status == 0, "\(clear.stderr)")
        let clearLines = try #require(CLI.jsonLines(clear.stdout), "\(clear.stdout)")
        let cleared = try #require(clearLines.first?["summary"] as? [String: Any])
        #expect(clearLines.count == 1 && cleared["removed"] as? Int == 2 && cleared["remaining"] as? Int == 0)
        #expect(cleared["dir"] as? String == cli.cacheDir && cleared["failures"] as? Int == 0, "\(cleared)")
        #expect(FileManager.default.fileExists(atPath: foreign), "a file that is not the cache's stays")
    }
}
