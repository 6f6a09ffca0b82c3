import DiskCache
import Fetch
import HTTPCaching
import ImageFormats
import Support
import Synchronization

/// Feeds a transfer's body into a cache writer (unpublished file + digest)
/// and, unless any content may be stored, into the image structure check,
/// which so sees every byte once, as it is written (no second read; only a
/// resumed body's kept part is read once more, see `begin`).
///
/// The writer is created on the first body byte, not before the request: a
/// 304, an error status or a failed connection never creates one. With a
/// kept partial body (`partial`), a `206` that continues it exactly resumes
/// it; any other 2xx starts over (the partial is dropped).
///
/// When the cache cannot be written (`makeWriter` fails with `io`: a
/// read-only directory; or a write fails part way: a full disk), the body
/// goes to a `SpoolFile` outside the cache instead, so that `-o` and
/// `--output-dir` still get it; or, when nobody would take it (`spools`
/// false: `LoaderOptions.keepsUnstoredBodies`) and the response could have
/// been stored, the cache's error ends the transfer at once (a `no-store`
/// body is never stored, so it succeeds from the spool all the same).
///
/// Threading: the fetch engine calls `begin`/`write`/`reset` from its loop
/// thread, from the awaiting task or from a completion worker, one at a
/// time, and only while the fetch runs; `received`, `keepPartial` and
/// `abandon` are called after it, by the awaiting task or by
/// `FetchClient.start`'s completion (on the completion worker that
/// finished the transfer).
///
/// Not final: a network load's `ImageLoader.NetworkExchange` is its own sink
/// (one object per load, not an exchange holding a sink: an allocation and a
/// free fewer per cold URL). Nothing is overridden.
class CacheSink: BodySink, @unchecked Sendable {
    private let cache: DiskCacheStore
    /// The URL's key (its text, `key.hex`, is made only to resume a kept partial body).
    let key: CacheKey
    /// The kept partial body this transfer may continue. Boxed, as `keptStructure`: most
    /// sinks resume nothing, and a nil reference is freed with no value witness (a nil
    /// `PartialBody?` or `ImageStructure?` is destroyed through them, ~260 instructions each).
    private let resuming: Box<PartialBody>?
    private final class Box<Value> {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
    // What changes is used by one thread at a time (above): no dynamic exclusivity check
    // (a `swift_beginAccess` per read or change, ~60 instructions each).
    @exclusivity(unchecked) private var writer: CacheWriter?
    @exclusivity(unchecked) private var spool: SpoolFile?
    /// The body's structure so far, when it is checked (`checksStructure`; not with `--any`).
    /// Not an `ImageStructure?`: that was copied and destroyed through its value witnesses.
    @exclusivity(unchecked) private var structure: ImageStructure
    private let checksStructure: Bool
    /// Whether a body the cache refuses goes on into a `SpoolFile` (else the refusal ends the transfer).
    private let spools: Bool
    /// `structure.hasEnded`, for the transfer loop to read while the writes
    /// run on a completion worker (`hasEnded(held:)`).
    private let structureEnded = Atomic<Bool>(false)
    /// The structure after a resumed body's kept part: where a retried attempt starts over.
    @exclusivity(unchecked) private var keptStructure: Box<ImageStructure>?
    /// The 2xx response being received (its validators are what a kept partial needs).
    @exclusivity(unchecked) private(set) var status = 0
    @exclusivity(unchecked) private(set) var headers = HTTPHeaders()
    /// A 206 did not continue the kept part (`begin` refused it).
    @exclusivity(unchecked) private(set) var partialRefused = false
    /// `--max-size` (`FetchConfiguration.maxSize`; `Int64.max`: none). The
    /// transfer counts only the bytes it receives, so a resumed body's kept
    /// part is counted here.
    private let limit: Int64
    /// The cache's refusal that ended the transfer, when the body was not spooled (`spools` false):
    /// the load's failure, in the cache's words, as a spooled body's would be.
    @exclusivity(unchecked) private(set) var refusal: DiskCacheError?
    /// Why a resumed body, its kept part included, was refused as past `limit` (the load is `too-large`).
    @exclusivity(unchecked) private(set) var overLimit: String?

    init(cache: DiskCacheStore, key: CacheKey, partial: PartialBody? = nil, checkStructure: Bool,
         spools: Bool = true, limit: Int64 = .max) {
        self.cache = cache
        self.key = key
        resuming = partial.map(Box.init)
        self.limit = limit
        structure = ImageStructure()
        checksStructure = checkStructure
        self.spools = spools
    }

    /// The structure check's verdict on the body received (`ImageStructure.inspection`);
    /// nil when the structure is not checked (`--any`).
    func inspection(head: [UInt8]) -> ImageInspection? {
        checksStructure ? Self.inspection(of: &structure, head: head) : nil
    }

    /// The structure lent in place: read as a property for the call, it was copied first and
    /// the copy destroyed (its walker's box through value witnesses, ~0.28 k instructions per download).
    private static func inspection(of structure: inout ImageStructure, head: [UInt8]) -> ImageInspection {
        structure.inspection(head: head)
    }

    struct ResumeMismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// Refuses a resumed body whose whole length (`total`, or the kept part plus `adding`) is past `limit`.
    private func checkResumedLength(total: Int64? = nil, adding count: Int = 0) throws {
        guard let writer, writer.isResumed else { return }
        let length = total ?? writer.bytesWritten + Int64(count)
        guard length > limit else { return }
        overLimit = total == nil ? "the body went past the \(limit)-byte limit"
            : "the whole body is \(length) bytes (\(writer.bytesWritten) of them kept from an earlier run), past the \(limit)-byte limit"
        throw ResumeMismatch(description: overLimit ?? "")
    }

    func begin(status: Int, headers: HTTPHeaders) throws {
        self.status = status
        self.headers = headers
        guard let partial = resuming?.value else { return }
        if status == 206 {
            // RFC 9110 §14.4: Content-Range "bytes FIRST-LAST/LENGTH" must start where the kept part ends.
            guard let range = headers["Content-Range"], Self.firstByte(range) == partial.length else {
                partialRefused = true
                throw ResumeMismatch(description: "a 206 that does not continue the kept \(partial.length) bytes "
                                     + "(Content-Range: \(headers["Content-Range"] ?? "none"))")
            }
            if writer?.isResumed != true {
                let resumed = try cache.makeWriter(for: key.hex, resuming: partial)
                writer = resumed
                try checkResumedLength(total: Self.completeLength(range) ?? headers["Content-Length"].flatMap { Int64($0) }
                    .map { $0 + partial.length })
                try walkKeptPart(of: resumed, length: partial.length)
            }
        } else if writer?.isResumed == true || writer == nil {
            // The server sent the whole body (it changed, or ignores Range): start over.
            writer?.abandon()
            writer = nil
            cache.removePartial(key.hex)
            if checksStructure { structure = ImageStructure() }
            structureEnded.store(false, ordering: .releasing)
            keptStructure = nil
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try checkResumedLength(adding: bytes.count)
        switch try received() {
        case let writer as CacheWriter:
            do { try writer.append(bytes) } catch { try spill(writer, refusedWith: error).write(bytes) }
        case let spool as SpoolFile: try spool.write(bytes)
        default: break
        }
        if checksStructure {
            structure.feed(bytes)
            if structure.hasEnded { structureEnded.store(true, ordering: .releasing) }
        }
    }

    /// A body held in memory, whole: the cache writer keeps the array as its head (no copy).
    func write(whole body: [UInt8]) throws {
        try checkResumedLength(adding: body.count)
        switch try received() {
        case let writer as CacheWriter:
            do { try writer.append(body) } catch { try body.withUnsafeBytes { try spill(writer, refusedWith: error).write($0) } }
        case let spool as SpoolFile: try body.withUnsafeBytes { try spool.write($0) }
        default: break
        }
        if checksStructure { body.withUnsafeBytes { structure.feed($0) } }
    }

    /// The cache refused a write part way through the body (a full disk, a
    /// quota, an I/O error): what it took moves to a `SpoolFile` and the body
    /// goes on there, as when the cache cannot be written at all (`received`),
    /// so that `-o` and `--output-dir` still get it and a full cache is
    /// reported as a read-only one is. (A resumed body is not moved: its kept
    /// part belongs to the cache; the load fails, as before.)
    /// Any other error (not `io`, or of a resumed body) is thrown on as it is.
    private func spill(_ refused: CacheWriter, refusedWith failure: any Error) throws -> SpoolFile {
        guard let error = failure as? DiskCacheError, error.kind == .io, !refused.isResumed else { throw failure }
        guard spoolsRefusedBody else {
            refusal = error
            throw error
        }
        let moved = try SpoolFile(storeFailure: error.message)
        do {
            var offset: Int64 = 0
            while offset < refused.bytesWritten {
                let chunk = try refused.read(at: offset, count: Int(min(Int64(Defaults.keptPartReadBytes), refused.bytesWritten - offset)))
                guard !chunk.isEmpty else { throw error }   // shorter than written: nothing sound to move
                try chunk.withUnsafeBytes { try moved.write($0) }
                offset += Int64(chunk.count)
            }
        } catch {
            moved.abandon()
            throw error
        }
        refused.abandon()
        writer = nil
        spool = moved
        return moved
    }

    /// The cache refused to publish the body at its last step (`commit`
    /// failed with `io`, keeping the body: a full disk, no inode left for
    /// its record or its name): the body moves to a `SpoolFile` as when a
    /// write was refused (`spill`), so that `-o` and `--output-dir` still get
    /// it. Any other error is thrown on as it is.
    func spill(refusedCommit refused: CacheWriter, _ error: DiskCacheError) throws(DiskCacheError) -> SpoolFile {
        do {
            return try spill(refused, refusedWith: error)
        } catch let failure as DiskCacheError {
            throw failure
        } catch {
            throw DiskCacheError(.io, path: refused.readablePath, message: "\(error)")
        }
    }

    func reset() throws {
        try writer?.reset()
        try spool?.reset()
        if checksStructure { structure = keptStructure?.value ?? ImageStructure() }
        structureEnded.store(checksStructure && structure.hasEnded, ordering: .releasing)
    }

    /// Whether the image has ended (see `BodySink.hasEnded`): its structure
    /// as written, or, for a body the transfer still holds whole (nothing
    /// written yet), a walk of those bytes on their own, which touches no
    /// state of this sink. A held body that continues a kept partial is not
    /// judged (its kept part would have to be read first): no.
    func hasEnded(held: UnsafeRawBufferPointer) -> Bool {
        guard checksStructure else { return false }
        guard held.count > 0 else { return structureEnded.load(ordering: .acquiring) }
        guard resuming == nil else { return false }
        var walked = ImageStructure()
        walked.feed(held)
        return walked.hasEnded
    }

    /// The structure check must see a resumed body from its first byte: the
    /// kept part is read back once (the writer read it to hash it, inside
    /// DiskCache) and walked before the 206's bytes arrive.
    private func walkKeptPart(of resumed: CacheWriter, length: Int64) throws {
        guard checksStructure else { return }
        var walked = ImageStructure()
        var offset: Int64 = 0
        while offset < length {
            let chunk = try resumed.read(at: offset, count: Int(min(Int64(Defaults.keptPartReadBytes), length - offset)))
            if chunk.isEmpty { break }
            chunk.withUnsafeBytes { walked.feed($0) }
            offset += Int64(chunk.count)
        }
        structure = walked
        structureEnded.store(walked.hasEnded, ordering: .releasing)
        keptStructure = Box(walked)
    }

    /// Where the body goes, created on first use (an empty 2xx body still
    /// gets one): a cache writer, or, when the cache cannot be written
    /// (an `io` error: a read-only directory, a full disk), a `SpoolFile`
    /// outside the cache, so the body can still be delivered.
    func received() throws(DiskCacheError) -> ReceivedBody {
        if let writer { return writer }
        if let spool { return spool }
        do {
            let created = try cache.makeWriter(for: key)   // no check of the key: a `CacheKey` is one
            writer = created
            return created
        } catch where error.kind == .io {
            guard spoolsRefusedBody else {
                refusal = error
                throw error
            }
            let created = try SpoolFile(storeFailure: error.message)
            spool = created
            return created
        }
    }

    /// Whether a body the cache refused goes on into a `SpoolFile`: when
    /// someone takes it (`spools`), or when the response may not be stored
    /// anyway (`no-store`: a success without the cache). Asked only on a refusal.
    private var spoolsRefusedBody: Bool {
        spools || !Storability.mayStore(status: status, CacheControl(headers))
    }

    /// Whether the body received continues a kept partial (a `206`).
    var resumed: Bool { writer?.isResumed == true }

    /// The length of the kept part a resumed body continued (its `Range`
    /// started there), or nil when the body was received whole.
    var resumedFrom: Int64? { resumed ? resuming?.value.length : nil }

    /// Keeps what a cut-off transfer received, to be resumed by a later run,
    /// when it is at least `minimum` bytes of a 200 or 206 that can be resumed
    /// (`mayResume`). Returns the length kept, or nil.
    func keepPartial(_ metadata: CacheMetadata, minimum: Int64) -> Int64? {
        guard let writer, writer.bytesWritten >= minimum, status == 200 || status == 206,
              Self.mayResume(metadata) else { return nil }
        let length = writer.bytesWritten
        let kept = bestEffort("not kept: the result does not say kept, and the next run asks for the whole body") {
            try writer.keepPartial(metadata)
        }
        return kept == true ? length : nil
    }

    /// Whether a body with this record can be continued with `Range` and
    /// `If-Range`: it has no content coding (the part holds decoded bytes,
    /// while a `Range` counts the coded ones, RFC 9110 §14.1.2), and a
    /// strong validator for `If-Range` (§13.1.5): a strong ETag, or a
    /// `Last-Modified` at least a second before the response's `Date` (or
    /// its receive time; §8.8.2.2), else the file may have changed again
    /// within that second and the rest would belong to another version.
    static func mayResume(_ record: CacheMetadata) -> Bool {
        guard !ContentCoding.isCoded(record.headers.lazy.filter { asciiCaseInsensitiveEqual($0.name, "Content-Encoding") }.map(\.value)) else {
            return false
        }
        if let etag = record.header("ETag"), !etag.hasPrefix("W/") { return true }
        guard let modified = record.header("Last-Modified").flatMap(HTTPDate.parse) else { return false }
        return modified <= (record.header("Date").flatMap(HTTPDate.parse) ?? record.responseTime) - 1
    }

    /// Removes the unpublished file, if one was created and not committed or kept.
    func abandon() {
        writer?.abandon()
        spool?.abandon()
    }

    /// LENGTH of "bytes FIRST-LAST/LENGTH", or nil (absent, or `*`).
    static func completeLength(_ contentRange: String) -> Int64? {
        guard let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int64(trimWhitespaceLower(contentRange[contentRange.index(after: slash)...]))
    }

    /// FIRST of "bytes FIRST-LAST/LENGTH", or nil.
    static func firstByte(_ contentRange: String) -> Int64? {
        let trimmed = contentRange.drop { $0 == " " }
        guard trimmed.hasPrefix("bytes ") else { return nil }
        let digits = trimmed.dropFirst(6).drop { $0 == " " }.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, trimmed.dropFirst(6).drop(while: { $0 == " " }).dropFirst(digits.count).first == "-" else { return nil }
        return Int64(digits)
    }
}
