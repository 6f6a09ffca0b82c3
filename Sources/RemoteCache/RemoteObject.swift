import DiskCache
#if canImport(Glibc)
import Glibc
#endif
import Fetch

/// One cache entry as one remote object, so that a PUT publishes metadata
/// and body together (the store's PUT is atomic per object):
///
/// ```
/// asyncfetch-object 1 <record length>\n
/// <the metadata record, exactly as DiskCache stores it in user.asyncfetch.meta>
/// <the body, byte for byte>
/// ```
///
/// The record names the key, the URL (without password), the status and
/// times, the stored headers, `body-length` and `body-digest xxh3-128 <hex>`.
/// A reader streams the body straight into a `CacheWriter` and commits only
/// when the key and URL are the ones asked for and the length and XXH3-128
/// it computed on the way match the record (`RemoteObjectSink.finish`).
enum RemoteObject {
    static let magic = "asyncfetch-object 1 "
    private static let magicBytes = Array(magic.utf8)
    /// The header line is at most this long (magic, up to 20 digits, newline).
    static let headerLimit = 64

    /// What precedes the body in the object: the header line and the record.
    static func header(record: [UInt8]) -> [UInt8] {
        Array((magic + String(record.count) + "\n").utf8) + record
    }

    /// The record length a header line (without its newline) names, or nil
    /// when it is not `magic` followed by a length in 1...`recordLimit`.
    static func recordLength(_ line: UnsafeRawBufferPointer) -> Int? {
        let prefix = magicBytes.count
        guard line.count > prefix, line.count <= headerLimit else { return nil }
        for index in 0..<prefix where line[index] != magicBytes[index] { return nil }
        var length = 0
        for byte in line[prefix...] {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            length = length * 10 + Int(byte - 0x30)
            guard length <= RemoteDefaults.recordLimit else { return nil }
        }
        return length > 0 ? length : nil
    }

    /// The object for a stored entry whose body is `body`.
    static func encode(record: [UInt8], body: [UInt8]) -> [UInt8] {
        header(record: record) + body
    }
}

/// Receives a remote object: parses the header line, holds the record,
/// streams the body into a cache writer (hashing it on the way).
/// Threading: as every `BodySink`, one call at a time.
final class RemoteObjectSink: BodySink, @unchecked Sendable {
    private let store: DiskCacheStore
    private let key: CacheKey
    private let hex: String
    private var header: [UInt8] = []
    private var recordLength = -1
    private var record: [UInt8] = []
    private var writer: CacheWriter?
    /// Why `write` refused the object, if it did. The fetch then fails as any
    /// write that fails (kind `io`, "I/O error"); the read reports this instead:
    /// the tier sent something else than an object, the local disk is fine.
    private(set) var refusal: RemoteCacheError?

    /// `hex`: `key.hex`, made once by the caller (it names the object too).
    init(store: DiskCacheStore, key: CacheKey, hex: String) {
        self.store = store
        self.key = key
        self.hex = hex
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes[...]
        if recordLength < 0 {
            guard let newline = rest.firstIndex(of: 0x0A) else {
                header += rest
                if header.count > RemoteObject.headerLimit { throw refused("no object header line") }
                return
            }
            // The whole line in this piece (the common case) is read in place.
            let length = header.isEmpty
                ? RemoteObject.recordLength(UnsafeRawBufferPointer(rebasing: rest[..<newline]))
                : (header + rest[..<newline]).withUnsafeBytes(RemoteObject.recordLength)
            guard let length else {
                let line = header.isEmpty ? Array(rest[..<newline]) : header + rest[..<newline]
                let shown = String(decoding: line.prefix(RemoteObject.headerLimit), as: UTF8.self)
                throw refused("not an asyncfetch object (header '\(shown)')")
            }
            rest = rest[(newline + 1)...]
            recordLength = length
            record.reserveCapacity(length)
        }
        if record.count < recordLength {
            let take = min(recordLength - record.count, rest.count)
            record += rest.prefix(take)
            rest = rest.dropFirst(take)
        }
        guard !rest.isEmpty else { return }
        try openedWriter().append(UnsafeRawBufferPointer(rebasing: rest))
    }

    func reset() throws {
        header = []
        recordLength = -1
        record = []
        refusal = nil
        try writer?.reset()
    }

    /// The error of an object refused as it streams, kept as `refusal`.
    private func refused(_ reason: String) -> RemoteCacheError {
        let error = RemoteCacheError.refusedObject(reason)
        refusal = error
        return error
    }

    private func openedWriter() throws(DiskCacheError) -> CacheWriter {
        if let writer { return writer }
        let made = try store.makeWriter(for: key)
        made.keepsHead = false   // the record names the format: nothing sniffs the body
        writer = made
        return made
    }

    /// Checks the object against what was asked for and what arrived, and
    /// commits it to the local cache. Nothing is committed on any mismatch.
    func finish(url storedURL: String) throws -> CacheEntry {
        guard recordLength > 0, record.count == recordLength else {
            throw RemoteCacheError.refusedObject("object cut short in its record")
        }
        guard let meta = record.withUnsafeBytes({ CacheMetadata.decode($0) }) else {
            throw RemoteCacheError.refusedObject("unreadable metadata record")
        }
        guard meta.key == hex, meta.url == storedURL else {
            throw RemoteCacheError.refusedObject("the object names another URL (\(meta.url))")
        }
        guard meta.hasBody else { throw RemoteCacheError.refusedObject("the object has no body") }
        let writer = try openedWriter()
        guard writer.bytesWritten == meta.bodyLength else {
            throw RemoteCacheError.refusedObject("body of \(writer.bytesWritten) bytes, the record says \(meta.bodyLength)")
        }
        let digest = writer.digest
        guard digest.algorithm == meta.digestAlgorithm, digest.hex == meta.bodyDigest else {
            throw RemoteCacheError.refusedObject("body digest \(digest.algorithm.rawValue) \(digest.hex), the record says \(meta.digestAlgorithm.rawValue) \(meta.bodyDigest)")
        }
        // Its URL is `storedURL` (compared above): not normalised again.
        return try writer.commit(meta, urlIsStored: true)
    }

    /// Deletes whatever was written (a refused or failed object).
    func abandon() {
        writer?.abandon()
    }
}
