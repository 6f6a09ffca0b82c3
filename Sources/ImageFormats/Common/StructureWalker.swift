/// What a format's walker asks the driver (`ImageStructure`) for next. The
/// walker never sees the stream directly: it asks for a few header bytes,
/// to pass over a payload by its length, or for the raw bytes (JPEG scan
/// data, SVG text), and is told when they have arrived.
enum WalkStep {
    /// Gather exactly this many bytes, then call `advance` with them.
    case need(Int)
    /// Pass over this many bytes, then call `advance` with no bytes. With a
    /// seed, the driver continues a CRC-32 from it over the bytes passed.
    case skip(Int64, crcSeed: UInt32?)
    /// Hand every byte to `stream` until it names the next step.
    case stream
    /// The image's real end is here; whatever follows is not the image's.
    case end
    /// The structure is broken (a failed CRC, an impossible length).
    case failed(String)
    /// This body cannot be judged cheaply: it passes (docs/images.md lists where).
    case undecidable
}

/// A streaming reader of one format's structure, fed once, in order, by
/// `ImageStructure`. Walkers are value types with no I/O: they keep only
/// what they need to find the image's end (lengths, counts, small tables),
/// so an `ImageStructure` holding one may cross tasks (`Sendable`).
protocol StructureWalker: Sendable {
    /// The first step (the driver gathers the signature itself).
    mutating func start() -> WalkStep
    /// `bytes` are the bytes a `need` asked for (empty after a `skip`),
    /// starting at body offset `offset`; `crc` is the CRC-32 of a `skip`
    /// that carried a seed.
    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep
    /// In `.stream`: takes bytes from `chunk` (at body offset `offset`) and
    /// says how many it used, and the next step once the stream ends.
    mutating func stream(_ chunk: UnsafeBufferPointer<UInt8>, at offset: Int64) -> (used: Int, next: WalkStep?)
    /// What is missing when a body of `length` bytes ends during the current step.
    func missing(length: Int64) -> String
    /// Pixel size the walker learned on the way (a TIFF's first directory), if any.
    var size: (width: Int, height: Int)? { get }
}

extension StructureWalker {
    mutating func stream(_ chunk: UnsafeBufferPointer<UInt8>, at offset: Int64) -> (used: Int, next: WalkStep?) {
        (chunk.count, .undecidable)
    }
    var size: (width: Int, height: Int)? { nil }
}
