/// WebP: a RIFF file, whose structure ends where its RIFF size says
/// (`8 + size` bytes; the pad byte of an odd size, which encoders do not
/// always write, is not required). Inside that size the chunks are walked
/// by their lengths, and one whole image chunk must lie there: `VP8 ` or
/// `VP8L` (a simple file, or the image of a `VP8X` extended one), or an
/// `ANMF` animation frame. A RIFF size smaller than the chunks it should
/// hold cuts them: a body whose image does not fit inside its RIFF size is
/// not an image, whatever follows (bytes after the RIFF's end are trailing
/// bytes, as for every format).
struct RIFFWalker: StructureWalker {
    private enum State { case header, chunkHeader, chunkData, tail }
    private var state = State.header
    /// Where the RIFF says the file ends (`8 + size`).
    private var expected: Int64 = 0
    /// Where the next chunk starts, its payload padded to an even length.
    private var next: Int64 = 12
    private var imageFound = false

    mutating func start() -> WalkStep { .need(12) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .header:
            guard bytes.starts(with: Array("RIFF".utf8)), let size = bytes.u32le(4), size >= 4 else {
                return .failed("not a RIFF header")
            }
            expected = 8 + Int64(size)
            return nextChunk()
        case .chunkHeader:
            guard let size = bytes.u32le(4) else { return .failed("not a RIFF chunk header") }
            let dataEnd = offset + 8 + Int64(size)   // at most 2^32 + 2^32 + 8: no overflow in Int64
            if dataEnd <= expected, size > 0, Self.imageChunks.contains(where: { bytes.matches($0, at: 0) }) {
                imageFound = true
            }
            next = dataEnd + Int64(size & 1)
            state = .chunkData
            // The payload and its pad byte, up to the RIFF's end: a chunk that runs past it is cut there.
            return .skip(min(next, expected) - (offset + 8), crcSeed: nil)
        case .chunkData:
            return nextChunk()
        case .tail:
            return .end
        }
    }

    /// Chunks that hold a whole image: a lossy or lossless bitstream, or an animation frame.
    private static let imageChunks: [[UInt8]] = [Array("VP8 ".utf8), Array("VP8L".utf8), Array("ANMF".utf8)]

    /// The next chunk inside the RIFF size; after the last, the rest of that size, then the end.
    private mutating func nextChunk() -> WalkStep {
        if expected - next >= 8 {
            state = .chunkHeader
            return .need(8)
        }
        guard imageFound else {
            return .failed("WebP holds no whole image inside its RIFF size (\(expected) bytes)")
        }
        state = .tail
        return .skip(max(0, expected - next), crcSeed: nil)
    }

    func missing(length: Int64) -> String {
        state == .header ? "WebP cut inside its RIFF header" : "WebP cut at \(length) of \(expected) bytes (its RIFF size)"
    }
}
