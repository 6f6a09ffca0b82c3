@testable import DiskCache
import CCrypto
import Foundation
import Testing
import TestSupport

/// One file per entry: the metadata lives on the body's inode (the extended
/// attribute `user.asyncfetch.meta`), published with it by one rename.
@Suite struct DiskCacheRecordTests {
    let temp: TempDirectory
    let store: DiskCacheStore
    var directory: String { store.directory }

    init() throws {
        temp = try TempDirectory(prefix: "asyncfetch-record")
        store = try DiskCacheStore(directory: temp.path + "/cache")
    }

    @discardableResult
    func put(_ url: String, _ bytes: [UInt8], into store: DiskCacheStore? = nil,
             headers: [CacheMetadata.Header] = [.init("ETag", "\"v1\"")]) throws -> CacheEntry {
        let store = store ?? self.store
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2, headers: headers))
    }

    func record(_ entry: CacheEntry) -> CacheMetadata? {
        guard case .record(let meta) = store.readRecord(key: entry.key) else { return nil }
        return meta
    }

    func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func anEntryIsOneFileWithItsMetadataOnIt() throws {
        let body = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let entry = try put("https://x.test/a.png", body)
        #expect(entry.recordOnBody)
        #expect(try names() == [entry.key], "no sidecar, nothing else")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory + "/.tmp")) ?? []).isEmpty)
        #expect(try bytes(of: entry.bodyPath) == body, "the body byte for byte")
        #expect(record(entry) == entry.metadata)
        #expect(entry.metadata.key == entry.key && entry.metadata.digestAlgorithm == .xxh3)
        #expect(try entry.metadata.bodyDigest == ReferenceDigest.xxh3(body))
        let hit = try #require(store.lookup(entry.key, url: "https://x.test/a.png"))
        #expect(hit.metadata == entry.metadata && hit.recordOnBody)
        #expect(store.lookup(entry.key, url: "https://x.test/other.png") == nil)
        // The directory's choice is kept for later processes.
        #expect(try String(contentsOfFile: directory + "/.asyncfetch-store", encoding: .utf8) == "metadata=xattr\n")
    }

    @Test func aPasswordIsNeverStoredAndTwoUsersNeverShareAnEntry() throws {
        let alice = try CacheKey(url: "https://alice:secret@x.test/p.png")
        let bob = try CacheKey(url: "https://bob:hunter2@x.test/p.png")
        #expect(alice.hex != bob.hex)
        #expect(alice.storedURL == "https://alice@x.test/p.png")
        let entry = try put("https://alice:secret@x.test/p.png", [1, 2, 3])
        #expect(store.lookup(alice.hex, url: alice.storedURL) != nil)
        #expect(store.lookup(bob.hex, url: bob.storedURL) == nil)
        let raw = try #require(getRecordBytes(entry.bodyPath))
        #expect(!String(decoding: raw, as: UTF8.self).contains("secret"))
        #expect(CacheKey.removingPassword("http://u:p@h:8080/a@b?c=d:e") == "http://u@h:8080/a@b?c=d:e")
        #expect(CacheKey.removingPassword("http://h/a:b@c") == "http://h/a:b@c")
    }

    /// Where the kernel has no `getxattrat`, the record is read by its whole path.
    @Test func theRecordIsReadByPathOnOlderKernels() throws {
        DiskCacheStore.readAttributesByPath()
        let entry = try put("https://x.test/old-kernel.png", Array(repeating: 1, count: 500))
        #expect(store.lookup(entry.key)?.metadata == entry.metadata)
        let link = directory + "/" + MD5.hex("https://x.test/link.png")
        #expect(symlink(entry.bodyPath, link) == 0)
        #expect(store.lookup(MD5.hex("https://x.test/link.png")) == nil, "a symlink is not followed")
    }

    /// An entry names its cache directory and key; its path is built from
    /// them when asked (a hit builds none), the same for every way an entry
    /// is made.
    @Test func anEntryNamesItsDirectoryAndKey() throws {
        let entry = try put("https://x.test/d.png", [1, 2, 3])
        let hit = try #require(store.lookup(entry.key))
        let errorKey = MD5.hex("https://x.test/e.png")
        let remembered = try store.storeWithoutBody(
            CacheMetadata(url: "https://x.test/e.png", status: 404, requestTime: 1, responseTime: 2, headers: []), key: errorKey)
        let updated = try store.updateMetadata(of: entry, to: entry.metadata)
        for made in [entry, hit, remembered, updated] {
            #expect(made.directory == store.directory)
            #expect(made.bodyPath == store.directory + "/" + made.key)
            #expect(made.bodyPath == store.bodyPath(made.key))
            #expect(FileManager.default.fileExists(atPath: made.bodyPath))
        }
        #expect(hit.key == entry.key && remembered.key == errorKey)
    }

    /// A lookup keeps the key as its digest (no key string per hit): what
    /// the entry and its record say is the same text all the same, the
    /// record compares equal to the one written, and a record written back
    /// (a 304) names the key.
    @Test func aLookedUpEntrysKeyIsTheKeysText() throws {
        let url = "https://x.test/k.png"
        let key = try CacheKey(url: url)
        let entry = try put(url, [7, 8, 9])
        for hit in [try #require(store.lookup(key, accessTime: true, answerOnly: false)), try #require(store.lookup(key.hex))] {
            #expect(hit.key == key.hex && hit.keyDigest == key.digest)
            #expect(hit.metadata.key == key.hex)
            #expect(hit.metadata == entry.metadata && entry.metadata == hit.metadata)
            var renamed = hit.metadata
            renamed.key = MD5.hex("another")
            #expect(renamed != hit.metadata && renamed.key == MD5.hex("another"))
            let reread = try #require(hit.metadata.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            #expect(reread.key == key.hex && reread == hit.metadata)
        }
        let hit = try #require(store.lookup(key.hex))
        var meta = hit.metadata
        meta.headers = [.init("ETag", "\"v2\"")]
        let updated = try store.updateMetadata(of: hit, to: meta)
        #expect(record(entry)?.key == key.hex && updated.metadata.key == key.hex)
        #expect(store.lookup(key.hex)?.metadata.header("ETag") == "\"v2\"")
    }

    @Test func aRevalidationReplacesTheRecordInPlace() throws {
        let entry = try put("https://x.test/r.png", Array(repeating: 4, count: 200))
        var meta = entry.metadata
        meta.headers = [.init("ETag", "\"v1\""), .init("Cache-Control", "max-age=60")]
        let updated = try store.updateMetadata(of: entry, to: meta)
        #expect(record(entry) == updated.metadata)
        let hit = try #require(store.lookup(entry.key))
        #expect(hit.inode == entry.inode, "the same file")
        #expect(hit.metadata.header("Cache-Control") == "max-age=60" && hit.metadata.bodyDigest == entry.metadata.bodyDigest)
        #expect(try names() == [entry.key])
    }

    /// A body moved to another key's name carries its record along: the
    /// record names another key, so it is not that key's entry.
    @Test func aBodyRenamedToAnotherKeyIsNotThatKeysEntry() throws {
        let a = try put("https://x.test/a.png", Array(repeating: 5, count: 100))
        let b = try put("https://x.test/b.png", Array(repeating: 6, count: 100))
        #expect(rename(a.bodyPath, b.bodyPath) == 0)
        #expect(store.lookup(b.key) == nil)
        let report = try store.verify()
        #expect(report.removed.map(\.key) == [b.key])
        #expect(report.removed.first?.reason.contains("another key") == true)
    }

    /// What a power loss can leave: a body cut short (its size is not the
    /// recorded one: a miss), or one of the right size whose blocks never
    /// reached the disk (only the digest shows it: `cache verify` removes it).
    @Test func aBodyCutShortIsAMissAndWrongBytesAreFoundByVerify() throws {
        let cut = try put("https://x.test/cut.png", Array(repeating: 7, count: 8000))
        let torn = try put("https://x.test/torn.png", Array(repeating: 8, count: 8000))
        #expect(truncate(cut.bodyPath, 4096) == 0)
        #expect(store.lookup(cut.key) == nil)
        // Same size and mtime, other bytes (as ext4 data=writeback may leave them).
        var info = stat()
        #expect(stat(torn.bodyPath, &info) == 0)
        let handle = try #require(FileHandle(forWritingAtPath: torn.bodyPath))
        handle.write(Data(count: 4096))
        try handle.close()
        let times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, torn.bodyPath, times, 0) == 0)
        #expect(store.lookup(torn.key) != nil, "size and mtime cannot tell")
        let report = try store.verify()
        #expect(Set(report.removed.map(\.key)) == [cut.key, torn.key])
        #expect(report.removed.first { $0.key == torn.key }?.reason.contains("xxh3-128") == true)
        #expect(try names().isEmpty)
    }

    /// A record too large for one attribute (ext4 takes about 4 KiB) goes to a
    /// sidecar for that entry alone, written with the two-file protocol.
    @Test func aRecordTooLargeForAnAttributeGoesToASidecar() throws {
        let headers: [CacheMetadata.Header] = (0..<60).map { .init("X-Header-\($0)", String(repeating: "v", count: 100)) }
        let large = try put("https://x.test/large.png", Array(repeating: 3, count: 100), headers: headers)
        let small = try put("https://x.test/small.png", Array(repeating: 3, count: 100))
        #expect(!large.recordOnBody && small.recordOnBody)
        #expect(FileManager.default.fileExists(atPath: large.metadataPath))
        #expect(store.lookup(large.key)?.metadata == large.metadata)
        var meta = large.metadata
        meta.headers.append(.init("Cache-Control", "max-age=5"))
        try store.updateMetadata(of: large, to: meta)
        #expect(store.lookup(large.key)?.metadata.header("Cache-Control") == "max-age=5")
        // A smaller new version puts the record back on the (new) body; the old sidecar is a leftover verify removes.
        let again = try put("https://x.test/large.png", Array(repeating: 4, count: 50))
        #expect(again.recordOnBody && store.lookup(again.key)?.metadata == again.metadata)
        let report = try store.verify()
        #expect(report.intact == 2 && report.removed.isEmpty && report.straySidecars == 1)
        #expect(!FileManager.default.fileExists(atPath: large.metadataPath))
    }

    @Test func aRememberedErrorIsAnEmptyFileCarryingItsRecord() throws {
        let entry = try put("https://x.test/gone.png", Array(repeating: 9, count: 100))
        let gone = try store.storeWithoutBody(CacheMetadata(url: entry.metadata.url, status: 404, requestTime: 1, responseTime: 2,
                                                            headers: []), key: entry.key)
        #expect(gone.recordOnBody)
        let hit = try #require(store.lookup(entry.key))
        #expect(!hit.metadata.hasBody && hit.metadata.status == 404)
        #expect(try bytes(of: entry.bodyPath).isEmpty)
        #expect(try store.verify().intact == 1)
    }

    /// A directory whose file system refuses user extended attributes keeps
    /// sidecars (forced here; the end-to-end suite runs the binary on ramfs).
    @Test func aSidecarDirectoryKeepsTheTwoFileProtocol() throws {
        let sidecars = try DiskCacheStore(directory: temp.path + "/sidecars", metadataAttributes: false)
        let entry = try put("https://x.test/s.png", Array(repeating: 2, count: 300), into: sidecars)
        #expect(!entry.recordOnBody && entry.metadata.bodyInode != 0)
        #expect(FileManager.default.fileExists(atPath: entry.metadataPath))
        #expect(getRecordBytes(entry.bodyPath) == nil)
        #expect(sidecars.lookup(entry.key)?.metadata == entry.metadata)
        // Another store on the same directory reads it too.
        #expect(try DiskCacheStore(directory: sidecars.directory).lookup(entry.key)?.metadata == entry.metadata)
        try sidecars.storeWithoutBody(CacheMetadata(url: entry.metadata.url, status: 410, requestTime: 1, responseTime: 2,
                                                    headers: []), key: entry.key)
        #expect(sidecars.lookup(entry.key)?.metadata.status == 410)
        #expect(!FileManager.default.fileExists(atPath: entry.bodyPath))
    }

    /// Entries written by the previous format (a body with an MD5, a `.meta`
    /// file and a copy of it on the body) are read correctly; a sidecar-only
    /// one is a miss, and `verify` checks the MD5s and sweeps the rest.
    @Test func entriesOfThePreviousFormatAreReadOrSwept() throws {
        let body = Array("previous format".utf8)
        let url = "https://x.test/v1.png"
        let key = MD5.hex(url)
        let path = directory + "/" + key
        try Data(body).write(to: URL(fileURLWithPath: path))
        var info = stat()
        #expect(stat(path, &info) == 0)
        let mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let v1 = "asyncfetch-meta 1\nurl \(url)\nstatus 200\nrequest-time 1\nresponse-time 2\nstored-time 3\nhas-body 1\n"
            + "body-length \(body.count)\nbody-md5 \(MD5.hex(body))\nbody-inode \(info.st_ino)\nbody-mtime-ns \(mtime)\n"
            + "h ETag \"old\"\nend\n"
        try Data(v1.utf8).write(to: URL(fileURLWithPath: path + ".meta"))
        #expect(setRecordBytes(path, Array(v1.utf8)))
        let goneURL = "https://x.test/v1-404.png"
        let gone = "asyncfetch-meta 1\nurl \(goneURL)\nstatus 404\nrequest-time 1\nresponse-time 2\nhas-body 0\n"
            + "body-length 0\nbody-md5 \nbody-inode 0\nbody-mtime-ns 0\nend\n"
        try Data(gone.utf8).write(to: URL(fileURLWithPath: directory + "/" + MD5.hex(goneURL) + ".meta"))
        _ = try put("https://x.test/new.png", [1])   // decides the directory: records

        let hit = try #require(store.lookup(key, url: url))
        #expect(hit.metadata.digestAlgorithm == .md5 && hit.metadata.header("ETag") == "\"old\"")
        #expect(hit.metadata.key == key && hit.metadata.url == url)
        #expect(store.lookup(key, url: "https://x.test/v2.png") == nil, "an old record names its URL too")
        #expect(store.lookup(MD5.hex(goneURL)) == nil, "a sidecar-only entry of the old format is a miss")
        let report = try store.verify()
        #expect(report.intact == 2 + 1, "the old entry's MD5 checks out (and the new entry)")
        #expect(report.removed.isEmpty, "\(report.removed.map(\.reason))")
        // Corrupt the old body (same size and mtime): verify's MD5 finds it.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.write(Data("X".utf8))
        try handle.close()
        #expect(utimensat(AT_FDCWD, path, [info.st_atim, info.st_mtim], 0) == 0)
        #expect(try store.verify().removed.first?.reason.contains("md5") == true)
    }

    /// Writers of one key race 304 updates and removals: every hit is a body
    /// its metadata describes (each writer's body is one repeated byte and its
    /// ETag names it), and nothing is left in `.tmp`.
    @Test func writersRaceRevalidationsAndRemovals() async throws {
        let url = "https://x.test/race.png"
        let key = MD5.hex(url)
        let store = self.store
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<150 {
                        let byte = UInt8(worker * 50 + round % 50)
                        do {
                            let writer = try store.makeWriter(for: key)
                            try [UInt8](repeating: byte, count: 3000 + Int(byte)).withUnsafeBytes { try writer.append($0) }
                            _ = try writer.commit(CacheMetadata(url: url, status: 200, requestTime: 1, responseTime: 2,
                                                                headers: [.init("ETag", "\"\(byte)\"")]))
                        } catch {
                            Issue.record("a writer failed: \(error)")
                        }
                    }
                }
            }
            group.addTask {
                for round in 0..<600 {
                    guard let entry = store.lookup(key) else { continue }
                    var meta = entry.metadata
                    meta.headers.append(.init("Cache-Control", "max-age=\(round)"))
                    _ = try? store.updateMetadata(of: entry, to: meta)
                }
            }
            group.addTask {
                for _ in 0..<100 {
                    _ = try? store.remove(key)
                    usleep(200)
                }
            }
            group.addTask {
                for _ in 0..<2000 {
                    guard let hit = store.lookup(key), let onDisk = try? bytes(of: hit.bodyPath) else { continue }
                    guard onDisk.count == hit.metadata.bodyLength else { continue }   // replaced after the lookup
                    let etag = hit.metadata.header("ETag").map { String($0.dropFirst().dropLast()) }
                    if etag != String(onDisk[0]) || onDisk.count != 3000 + Int(onDisk[0]) {
                        Issue.record("a hit whose body does not match its metadata")
                    }
                }
            }
        }
        if let entry = store.lookup(key) {
            #expect(try ReferenceDigest.xxh3(bytes(of: entry.bodyPath)) == entry.metadata.bodyDigest)
        }
        let report = try store.verify()
        #expect(report.removed.isEmpty && report.failures.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: directory + "/.tmp")) ?? []).isEmpty)
    }
}

/// The raw record on a file (`getxattrat`, or `lgetxattr` of the whole path), or nil.
func getRecordBytes(_ path: String) -> [UInt8]? {
    guard let slash = path.lastIndex(of: "/") else { return nil }
    let directory = String(path[..<slash]), name = String(path[path.index(after: slash)...])
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = cdisk_getxattrat(fd, directory, name, "user.asyncfetch.meta", &buffer, buffer.count)
    return n < 0 ? nil : Array(buffer[0..<n])
}

func setRecordBytes(_ path: String, _ bytes: [UInt8]) -> Bool {
    cdisk_lsetxattr(path, "user.asyncfetch.meta", bytes, bytes.count) == 0
}
