import DiskCache
import Foundation
import HTTPCaching
import Loader
import Testing
import TestSupport

/// The whole output of `cache list` and `cache verify` for a real cache
/// directory (no binary): what a Swift program that maintains a cache prints
/// to print what the tool prints; and `-o FILE` in the cache directory refused.
@Suite(.timeLimit(.minutes(3))) struct CacheCommandLinesTests {
    let temp: TempDirectory
    let store: DiskCacheStore

    init() throws {
        temp = try TempDirectory(prefix: "asyncfetch-lines")
        store = try DiskCacheStore(directory: temp.file("cache"))
    }

    @discardableResult
    private func put(_ url: String, _ bytes: [UInt8], type: String) throws -> CacheEntry {
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: key.normalizedURL, status: 200, requestTime: 1, responseTime: 2,
                                               headers: [.init("Content-Type", type), .init("Cache-Control", "max-age=100")]))
    }

    @Test func aListingIsSortedByURLThenTheBrokenEntriesInJSONOrNot() throws {
        try put("http://127.0.0.1/b.png", Array(repeating: 1, count: 10), type: "image/png")
        try put("http://127.0.0.1/a.svg", Array(repeating: 2, count: 20), type: "image/svg+xml")
        let broken = try put("http://127.0.0.1/c.png", Array(repeating: 3, count: 30), type: "image/png")
        #expect(truncate(broken.bodyPath, 5) == 0)
        let scan = try store.scan()
        func listed(now: Double, json: Bool) -> [String] {
            var lines: [String] = []
            CacheEntryLine.listing(scan, directory: store.directory, freshness: Freshness(), now: now, json: json) { lines.append($0) }
            return lines
        }
        let human = listed(now: 50, json: false)
        #expect(human.count == 3)
        #expect(human[0].hasPrefix("fresh  ") && human[0].hasSuffix("  image/svg+xml  http://127.0.0.1/a.svg"), "\(human)")
        #expect(human[1].hasPrefix("fresh  ") && human[1].hasSuffix("  image/png      http://127.0.0.1/b.png"), "the type column lines up: \(human)")
        #expect(human[2].hasPrefix("broken ") && human[2].contains("http://127.0.0.1/c.png"), "\(human)")
        #expect(listed(now: 1_000, json: false).prefix(2).allSatisfy { $0.hasPrefix("stale  ") })
        let json = listed(now: 50, json: true)
        #expect(json.count == 3 && json.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "\(json)")
        #expect(json[0].contains("\"url\":\"http://127.0.0.1/a.svg\"") && json[0].contains("\"fresh\":true"), "\(json[0])")
        #expect(json[2].contains("\"broken\""), "\(json[2])")
    }

    @Test func verifyLinesNameEachRemovalThenTheSummary() throws {
        try put("http://127.0.0.1/a.png", Array(repeating: 1, count: 10), type: "image/png")
        let corrupt = try put("http://127.0.0.1/b.png", Array(repeating: 2, count: 10), type: "image/png")
        try Data(repeating: 9, count: 10).write(to: URL(fileURLWithPath: corrupt.bodyPath))
        let foreign = store.directory + "/" + String(repeating: "0", count: 32)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: foreign))
        let report = try store.verify()
        let lines = CacheReportLine.verifiedLines(report, directory: store.directory, json: false)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasPrefix("removed  http://127.0.0.1/b.png  "), "\(lines)")
        #expect(lines[1] == CacheReportLine.unowned(foreign), "\(lines)")
        #expect(lines[2] == CacheReportLine.verified(report) && lines[2].hasPrefix("verified 2 entries: 1 intact, 1 corrupt removed"), "\(lines)")
        #expect(CacheReportLine.verifiedLines(report, directory: store.directory, json: true)
                == CacheReportLine.verifiedJSON(report, directory: store.directory))
    }

    @Test func anOutputFileDirectlyInTheCacheDirectoryIsAUsageProblem() throws {
        let entry = try put("http://127.0.0.1/a.png", [1, 2, 3], type: "image/png")
        let inCache = Delivery.file(store.directory + "/cat.png").problem(cacheDirectory: store.directory)
        #expect(inCache?.kind == .usage)
        #expect(inCache?.message == "-o \(store.directory)/cat.png is in the cache directory; a file there could replace a cache entry (a folder inside it is fine)")
        // A link to an entry's own body, elsewhere, is in the cache too.
        let link = temp.file("link.png")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: entry.bodyPath)
        #expect(Delivery.file(link).problem(cacheDirectory: store.directory)?.kind == .usage)
        #expect(Delivery.file(store.directory + "/photos/cat.png").problem(cacheDirectory: store.directory)?.message == nil)
        #expect(Delivery.file(temp.file("cat.png")).problem(cacheDirectory: store.directory)?.message == nil)
        #expect(Delivery.standardOutput.problem(cacheDirectory: store.directory)?.message == nil)
    }
}
