#if canImport(Glibc)
import Glibc
#endif

/// JPEG: `SOI`, then marker segments passed over by their length; after each
/// `SOS` header, entropy-coded scan data up to the next marker (`FF 00` is a
/// stuffed byte, `FF D0`–`D7` a restart marker, `FF FF` fill), then more
/// segments and scans (progressive JPEGs have many) to `EOI`. What follows
/// `EOI` (a motion photo's video, MPF's further pictures) is not this image's.
/// The first frame header (`SOFn`) gives the pixel size, wherever it lies:
/// behind a 60 KiB EXIF segment and an ICC profile it is past the head a
/// streaming caller keeps (`ImageStructure.inspection(head:)`).
struct JPEGWalker: StructureWalker {
    private enum State { case soi, length, frame(rest: Int64), segment, markers }
    private var state = State.soi
    private(set) var size: (width: Int, height: Int)?
    private var marker: UInt8 = 0
    private var pendingFF = false
    private var scans = 0
    private var inScan = false

    mutating func start() -> WalkStep { .need(2) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .soi:
            guard bytes.starts(with: [0xFF, 0xD8]) else { return .failed("not a JPEG start of image") }
            state = .markers
            return .stream
        case .length:
            guard let length = bytes.u16be(0), length >= 2 else { return .failed("JPEG \(segmentName) segment has an impossible length") }
            if size == nil, Self.isFrameHeader(marker), length >= 7 {
                state = .frame(rest: Int64(length - 7))
                return .need(5)   // sample precision, height, width
            }
            state = .segment
            return .skip(Int64(length - 2), crcSeed: nil)
        case .frame(let rest):
            if let height = bytes.u16be(1), let width = bytes.u16be(3) { size = (width, height) }
            state = .segment
            return .skip(rest, crcSeed: nil)
        case .segment:
            state = .markers
            inScan = marker == 0xDA
            return .stream
        case .markers:
            return .stream
        }
    }

    /// Searches for the next marker with `memchr`; everything between markers
    /// (scan data, or junk between segments, which decoders skip) is passed over.
    mutating func stream(_ chunk: UnsafeBufferPointer<UInt8>, at offset: Int64) -> (used: Int, next: WalkStep?) {
        guard let base = chunk.baseAddress else { return (0, nil) }
        let n = chunk.count
        var i = 0
        if pendingFF {
            pendingFF = false
            if let next = afterFF(chunk[0]) { return (1, next) }
            i = chunk[0] == 0xFF ? 0 : 1
        }
        while i < n {
            guard let hit = memchr(base + i, 0xFF, n - i) else { return (n, nil) }
            let j = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            guard j + 1 < n else { pendingFF = true; return (n, nil) }
            if let next = afterFF(chunk[j + 1]) { return (j + 2, next) }
            i = chunk[j + 1] == 0xFF ? j + 1 : j + 2
        }
        return (n, nil)
    }

    /// The step after `FF byte`, or nil when it is not a marker that ends the data.
    private mutating func afterFF(_ byte: UInt8) -> WalkStep? {
        switch byte {
        case 0x00, 0xFF, 0xD0...0xD7, 0x01, 0xD8: return nil   // stuffing, fill, restart, TEM, stray SOI
        case 0xD9:
            inScan = false
            return scans > 0 ? .end : .failed("JPEG ends (EOI) before any image data")
        default:
            marker = byte
            inScan = false
            if byte == 0xDA { scans += 1 }
            state = .length
            return .need(2)
        }
    }

    /// SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range.
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    private var segmentName: String {
        switch marker {
        case 0xDA: return "start-of-scan"
        case 0xC4: return "DHT"
        case 0xDB: return "DQT"
        case 0xDD: return "DRI"
        case 0xFE: return "COM"
        case 0xE0...0xEF: return "APP\(marker - 0xE0)"
        case 0xC0...0xCF: return "SOF\(marker - 0xC0)"
        default: return "0x\(String(marker, radix: 16, uppercase: true))"
        }
    }

    func missing(length: Int64) -> String {
        switch state {
        case .soi: return "JPEG cut inside its start of image"
        case .length, .frame, .segment: return "JPEG cut inside its \(segmentName) segment"
        case .markers:
            if inScan { return "JPEG ends inside scan data (scan \(scans))" }
            return scans == 0 ? "JPEG cut before its image data (no start of scan)" : "JPEG cut before its EOI marker"
        }
    }
}
