import DiskCache
import Foundation
import Testing
import TestSupport

/// The store as a library user meets it (no `@testable`): the URL a caller
/// hands to `CacheMetadata` is the URL as given, not `CacheKey.storedURL`.
@Suite struct DiskCacheAPITests {
    static let url = "HTTPS://alice:secret@X.test:443/p.png#top"

    /// Every byte of `path`'s record: the extended attribute (`getRecordBytes`), and a sidecar if there is one.
    static func recordBytes(_ path: String) -> [UInt8] {
        (getRecordBytes(path) ?? []) + (FileManager.default.contents(atPath: path + ".meta").map { [UInt8]($0) } ?? [])
    }

    /// The README's lines, in a temporary directory: the body byte for byte at `DIR/<md5>`.
    @Test func theReadmeSnippetStoresABodyAndFindsItAgain() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let body: [UInt8] = Array(repeating: 7, count: 153)
        let store = try DiskCacheStore(directory: CacheDirectory.resolve(explicit: temp.path + "/cache"))
        let key = try CacheKey(url: "https://example.com/cat.png")
        let writer = try store.makeWriter(for: key.hex)
        try writer.append(body)
        let now = Date().timeIntervalSince1970
        _ = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: now, responseTime: now,
                                            headers: [.init("Content-Type", "image/png")]))
        let entry = try #require(store.lookup(key.hex, url: key.storedURL))
        #expect(entry.bodyPath == temp.path + "/cache/a892c86a9d186f74f9a1196a10f5a505" && entry.metadata.bodyLength == 153)
        #expect(FileManager.default.contents(atPath: entry.bodyPath).map { [UInt8]($0) } == body)
    }

    /// It is recorded as the loader records it: normalised (so the loader,
    /// `asyncfetch cache list` and `lookup(key, url: key.storedURL)` find
    /// it) and without the password (SPEC §4: no secret at rest).
    @Test func anEntryCommittedWithTheURLAsGivenIsRecordedNormalisedWithoutItsPassword() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let key = try CacheKey(url: Self.url)
        let writer = try store.makeWriter(for: key.hex)
        try writer.append([1, 2, 3])
        let entry = try writer.commit(CacheMetadata(url: Self.url, status: 200, requestTime: 1, responseTime: 2, headers: []))
        #expect(entry.metadata.url == "https://alice@x.test/p.png")
        #expect(store.lookup(key.hex, url: key.storedURL)?.bodyPath == entry.bodyPath)
        let record = String(decoding: Self.recordBytes(entry.bodyPath), as: UTF8.self)
        #expect(!record.isEmpty && !record.contains("secret"))
    }

    /// The loader's way (a writer made for the key itself, its record's URL the key's `storedURL`,
    /// said so at the commit) stores what the hex and the URL as given store: the same entry, the
    /// same record but for its times.
    @Test func aWriterMadeForAKeyStoresWhatOneMadeForItsHexStores() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let key = try CacheKey(url: Self.url)
        var records: [String] = []
        for loaderWay in [false, true] {
            let store = try DiskCacheStore(directory: temp.path + (loaderWay ? "/loader" : "/hex"))
            let writer = try loaderWay ? store.makeWriter(for: key) : store.makeWriter(for: key.hex)
            try writer.append([1, 2, 3])
            let meta = CacheMetadata(url: loaderWay ? key.storedURL : Self.url, status: 200, requestTime: 1, responseTime: 2,
                                     headers: [.init("ETag", "\"a\"")])
            let entry = try writer.commit(meta, urlIsStored: loaderWay)
            #expect(entry.metadata.url == "https://alice@x.test/p.png" && entry.key == key.hex)
            let found = try #require(store.lookup(key.hex, url: key.storedURL))
            #expect(found.bodyPath == entry.bodyPath && found.metadata.bodyLength == 3)
            records.append(String(decoding: Self.recordBytes(entry.bodyPath), as: UTF8.self)
                .split(separator: "\n").filter { !$0.hasPrefix("stored-time") && !$0.hasPrefix("body-mtime-ns") }
                .joined(separator: "\n"))
        }
        #expect(records[0] == records[1] && records[0].contains("url https://alice@x.test/p.png"))
    }

    @Test func aRememberedStatusStoredWithTheURLAsGivenIsRecordedTheSameWay() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let key = try CacheKey(url: Self.url)
        let meta = CacheMetadata(url: Self.url, status: 404, requestTime: 1, responseTime: 2,
                                 headers: [.init("Cache-Control", "max-age=60")])
        let entry = try store.storeWithoutBody(meta, key: key.hex)
        #expect(entry.metadata.url == key.storedURL)
        #expect(store.lookup(key.hex, url: key.storedURL)?.metadata.status == 404)
        #expect(!String(decoding: Self.recordBytes(entry.bodyPath), as: UTF8.self).contains("secret"))
    }

    /// A directory written with a trailing slash (or `//`, `/./`) is the
    /// same directory, and the paths the store hands out say so: no `//`.
    @Test func aDirectoryWithATrailingSlashGivesCleanPaths() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let clean = temp.path + "/cache"
        for given in [clean + "/", temp.path + "//./cache//"] {
            #expect(try CacheDirectory.resolve(explicit: given) == clean)
            let store = try DiskCacheStore(directory: given)
            #expect(store.directory == clean)
            let key = try CacheKey(url: "https://example.com/cat.png")
            let writer = try store.makeWriter(for: key.hex)
            try writer.append([1, 2, 3])
            let entry = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2, headers: []))
            #expect(entry.bodyPath == clean + "/" + key.hex)
            #expect(store.lookup(key.hex, url: key.storedURL)?.bodyPath == clean + "/" + key.hex)
            #expect(try store.scan().intact.map(\.bodyPath) == [clean + "/" + key.hex])
        }
        #expect(CacheDirectory.normalized("/") == "/" && CacheDirectory.normalized("./") == "." && CacheDirectory.normalized("a/./b/") == "a/b")
        #expect(CacheDirectory.normalized("/a/../b") == "/a/../b", "`..` may pass through a symbolic link: kept")
    }

    /// `/a/missing/../b` could not be followed (`missing` is not there): `cache
    /// list` found no cache while a run made `/a/missing` to use `/a/b` and
    /// printed its paths through it. The `..` now goes with the missing name
    /// it follows, and only with one: through a name that is there (a
    /// symbolic link, perhaps) it is kept.
    @Test func aParentStepAfterAMissingNameGoesWithIt() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let cache = temp.path + "/b"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: false)
        #expect(try CacheDirectory.resolve(explicit: temp.path + "/missing/../b") == cache)
        #expect(try CacheDirectory.resolve(explicit: temp.path + "/missing/x/./../../b/") == cache)
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["ASYNCFETCH_CACHE_DIR": temp.path + "/m/../b"]) == cache)
        #expect(try CacheDirectory.resolve(explicit: temp.path + "/b/../missing/../b") == temp.path + "/b/../b", "b is there: kept")
        #expect(try CacheDirectory.resolve(explicit: temp.path + "/missing/../../x") == temp.path + "/../x", "only as far as it is missing")
        let store = try DiskCacheStore(directory: try CacheDirectory.resolve(explicit: temp.path + "/missing/../b"))
        #expect(store.directory == cache)
        #expect(!CacheDirectory.isAbsent(try CacheDirectory.resolve(explicit: temp.path + "/missing/../b")))
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/missing"), "nothing made on the way")
    }

    /// The root as the cache directory (`--cache-dir /`, or `"$DIR/"` with
    /// DIR empty) gives `/<md5>`, not `//<md5>`. Opening it writes nothing.
    @Test func theRootDirectoryGivesCleanPaths() throws {
        #expect(try CacheDirectory.resolve(explicit: "/") == "/")
        #expect(try CacheDirectory.resolve(explicit: "//") == "/")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["ASYNCFETCH_CACHE_DIR": "/"]) == "/")
        let store = try DiskCacheStore(directory: "/")
        let key = try CacheKey(url: "https://example.com/cat.png")
        #expect(store.directory == "/")
        #expect(store.bodyPath(key.hex) == "/" + key.hex)
        #expect(store.metadataPath(key.hex) == "/" + key.hex + ".meta")
    }
}
