/// WebP: a RIFF file, as long as its header says (plus the pad byte of an
/// odd size, which encoders do not always write).
struct RIFFWalker: StructureWalker {
    private var expected: Int64 = 0
    private var started = false

    mutating func start() -> WalkStep { .need(12) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        guard !started else { return .end }
        started = true
        guard bytes.starts(with: Array("RIFF".utf8)), let size = bytes.u32le(4), size >= 4 else {
            return .failed("not a RIFF header")
        }
        expected = 8 + Int64(size)
        return .skip(expected - 12, crcSeed: nil)
    }

    func missing(length: Int64) -> String {
        started ? "WebP cut at \(length) of \(expected) bytes (its RIFF size)" : "WebP cut inside its RIFF header"
    }
}
