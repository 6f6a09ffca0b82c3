/// Whether a body is a whole image, decided from the format's own structure
/// while the body streams: the loader feeds it every chunk it appends to the
/// cache writer, the same bytes that are hashed and written, so the check
/// costs no system call and no second read.
///
/// The first bytes choose a walker (PNG, GIF, JPEG, WebP, BMP, TIFF, ICO,
/// ISO BMFF for AVIF/HEIF/JPEG XL, the JPEG XL codestream, else SVG text); the
/// walker finds the image's real end (PNG's `IEND` with every chunk's CRC,
/// GIF's trailer, JPEG's `EOI` after its scans, …). Bytes after that end
/// are not the image's and are allowed; a body that stops before it is cut,
/// and `problem` says what is missing. What cannot be judged cheaply (a JPEG
/// XL codestream whose TOC is entropy-coded, …) passes.
///
/// Per byte the work is small: payloads are passed over by their length
/// (CRC-32 by ISA-L for PNG), JPEG scan data is searched with `memchr`, and
/// only headers are gathered (bounded; see `FormatLimits.gatherBytes`).
///
/// A value (`Sendable`): a body checked on one task may hand its structure
/// to another, e.g. as a detached task's result.
public struct ImageStructure: Sendable {
    /// The verdict on the bytes fed so far, read once the body has ended.
    public enum Verdict: Equatable, Sendable {
        /// The structure ended, at this offset; what follows is trailing data.
        case complete(end: Int64)
        /// The format cannot be judged cheaply: it passes.
        case undecided
        /// The body is not a whole image: cut short, or damaged.
        case broken(String)
    }

    private var signature: [UInt8] = []
    private var walker: (any StructureWalker)?
    /// Whether `walker` is chosen: `walker == nil` copied the existential out (through its value
    /// witnesses) and destroyed the copy, at each feed and verdict.
    private var hasWalker = false
    private var step: WalkStep = .need(0)
    private var gathered: [UInt8] = []
    private var gatherStart: Int64 = 0
    private var position: Int64 = 0
    private var crc: UInt32 = 0
    private var end: Int64?
    /// Bytes fed so far.
    public private(set) var length: Int64 = 0

    public init() {}

    /// Feeds the next bytes of the body.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var chunk = UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        length += Int64(chunk.count)
        if !hasWalker, signature.isEmpty, chunk.count >= FormatLimits.signatureBytes {
            // The first chunk holds the signature (a body held whole, always): the walker is
            // chosen from it in place and walks the chunk from its first byte, with no copy.
            choose(from: UnsafeBufferPointer(rebasing: chunk.prefix(FormatLimits.signatureBytes)))
        } else if !hasWalker {
            let take = min(FormatLimits.signatureBytes - signature.count, chunk.count)
            signature.append(contentsOf: chunk.prefix(take))
            chunk = UnsafeBufferPointer(rebasing: chunk.dropFirst(take))
            guard signature.count == FormatLimits.signatureBytes else { return }
            choose()
        }
        run(chunk)
    }

    /// Starts over (a retried download).
    public mutating func reset() { self = ImageStructure() }

    /// Whether the image's structure has ended (its last chunk, trailer or
    /// box arrived: `verdict` is `complete`); what follows, if anything, is
    /// not the image's. A cheap look, for a body still arriving.
    public var hasEnded: Bool {
        if case .end = step { return true }
        return false
    }

    /// The verdict on the whole body fed so far, on its structure alone:
    /// bytes in none of the formats (text, zeros) are `undecided` here.
    /// Whether the body is an image at all is `inspection(head:)`'s answer.
    public var verdict: Verdict {
        // A copy only to choose a walker for a body shorter than a signature:
        // a copy of the whole walk (its arrays, its walker) per body otherwise.
        guard hasWalker else {
            var copy = self
            copy.choose()
            return copy.walkVerdict
        }
        return walkVerdict
    }

    /// `verdict` once a walker is chosen.
    private var walkVerdict: Verdict {
        switch step {
        case .end: return .complete(end: end ?? length)
        case .undecidable: return .undecided
        case .failed(let message): return .broken(message)
        default: return .broken(walker.map { $0.missing(length: length) } ?? "empty body")
        }
    }

    /// nil when the body's structure is whole (or cannot be judged, as for
    /// bytes in no image format: see `verdict`), else a sentence saying what is wrong.
    public var problem: String? {
        if case .broken(let message) = verdict { return message }
        return nil
    }

    /// A pixel size the structure gave on the way (a TIFF's first directory,
    /// wherever it lies in the body), for headers that do not give it.
    public var size: (width: Int, height: Int)? { walker?.size }

    /// Picks the walker from the signature, then replays the signature through it.
    private mutating func choose() {
        let replay = signature
        replay.withUnsafeBufferPointer { choose(from: $0) }
        replay.withUnsafeBufferPointer { run($0) }
    }

    /// Picks the walker from a signature's bytes (the caller then runs them through it).
    private mutating func choose(from signature: UnsafeBufferPointer<UInt8>) {
        var chosen = Self.walker(for: Bytes(signature))
        set(chosen.start())
        walker = chosen
        hasWalker = true
    }

    static func walker(for b: Bytes) -> any StructureWalker {
        if b.starts(with: ImageInfo.pngSignature) { return PNGWalker() }
        if b.starts(with: [0xFF, 0xD8]) { return JPEGWalker() }
        if b.starts(with: Array("GIF8".utf8)) { return GIFWalker() }
        if b.starts(with: Array("RIFF".utf8)) { return RIFFWalker() }
        if b.starts(with: Array("BM".utf8)) { return BMPWalker() }
        if b.starts(with: [0x49, 0x49]) || b.starts(with: [0x4D, 0x4D]) { return TIFFWalker() }
        if b.starts(with: [0x00, 0x00, 0x01, 0x00]) || b.starts(with: [0x00, 0x00, 0x02, 0x00]) { return ICOWalker() }
        if b.matches(Array("ftyp".utf8), at: 4) || b.starts(with: ImageInfo.jxlContainerSignature) { return BoxWalker() }
        if b.starts(with: [0xFF, 0x0A]) { return JXLWalker() }
        return SVGWalker()
    }

    private mutating func set(_ next: WalkStep) {
        step = Self.checked(next)
        switch step {
        case .need:
            gatherStart = position
        case .skip(_, let seed): crc = seed ?? 0
        case .end: end = position
        default: break
        }
    }

    /// A walker's step as the driver may follow it. Counts come from body
    /// bytes, and the walk reads each chunk in place, where a negative count
    /// would trap or step before the chunk: the walkers check their
    /// arithmetic, and this stands behind them. A negative length is a
    /// broken structure; a `need` past `FormatLimits.gatherBytes` passes undecided.
    static func checked(_ step: WalkStep) -> WalkStep {
        switch step {
        case .need(let count) where count < 0:
            return .failed("the structure gives a negative length (\(count) bytes)")
        case .skip(let count, _) where count < 0:
            return .failed("the structure gives a negative length (\(count) bytes)")
        case .need(let count) where count > FormatLimits.gatherBytes:
            return .undecidable
        default:
            return step
        }
    }

    private mutating func run(_ chunk: UnsafeBufferPointer<UInt8>) {
        var p = 0
        let n = chunk.count
        while true {
            switch step {
            case .need(let count):
                if gathered.isEmpty, n - p >= count {
                    // All of it in this chunk: the walker reads it in place, not from a copy.
                    let start = gatherStart, sum = crc
                    let next = walker!.advance(Bytes(UnsafeBufferPointer(rebasing: chunk[p..<p + count])), at: start, crc: sum)
                    p += count
                    position += Int64(count)
                    set(next)
                    continue
                }
                if gathered.count < count {
                    let take = min(count - gathered.count, n - p)
                    if take > 0 { gathered.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[p..<p + take])) }
                    p += take
                    position += Int64(take)
                    guard gathered.count == count else { return }
                }
                let start = gatherStart, sum = crc
                let next = gathered.withUnsafeBufferPointer { walker!.advance(Bytes($0), at: start, crc: sum) }
                gathered.removeAll(keepingCapacity: gathered.capacity <= FormatLimits.gatheredKeptBytes)
                set(next)
            case .skip(let count, let seed):
                let take = Int(min(count, Int64(n - p)))
                if seed != nil, take > 0, let base = chunk.baseAddress {
                    crc = CRC32.update(crc, base + p, take)
                }
                p += take
                position += Int64(take)
                guard Int64(take) == count else {
                    step = .skip(count - Int64(take), crcSeed: seed)
                    return
                }
                let sum = crc
                set(Bytes.empty { walker!.advance($0, at: position, crc: sum) })
            case .stream:
                guard p < n else { return }
                let (taken, next) = walker!.stream(UnsafeBufferPointer(rebasing: chunk[p..<n]), at: position)
                let used = min(max(taken, 0), n - p)   // never outside the chunk, whatever the walker says
                p += used
                position += Int64(used)
                guard let next else { return }
                set(next)
            case .end, .failed, .undecidable:
                return
            }
        }
    }
}

