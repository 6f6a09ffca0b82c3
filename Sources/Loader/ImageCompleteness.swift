/// A cheap check that a downloaded image is whole, from its last bytes
/// (and its head): a server that sends a cut file with a matching
/// `Content-Length` would otherwise get a broken image cached as valid.
///
/// Only what is clearly truncated is rejected; formats whose end cannot be
/// recognised cheaply, and files with trailing bytes after a proper end,
/// pass:
/// - PNG must contain the `IEND` chunk (with its fixed CRC) in the tail.
/// - GIF must end with the `;` trailer (trailing NUL/whitespace padding allowed).
/// - JPEG is truncated when its tail is still inside entropy-coded scan data
///   (no EOI `FFD9`, no other marker): JPEGs that carry appended data
///   (motion photos, MPF) are left alone.
/// - WebP must be as long as its RIFF header says.
public enum ImageCompleteness {
    /// Bytes of the end of the body the check looks at.
    public static let tailLength = 1024

    /// nil when the image looks complete, else a sentence saying why not.
    /// `tail` is the last bytes of the body (all of it if shorter), `length`
    /// the body's full length.
    public static func problem(format: String, head: [UInt8], tail: [UInt8], length: Int64) -> String? {
        head.withUnsafeBufferPointer { h in
            tail.withUnsafeBufferPointer { t in problem(format: format, head: Bytes(h), tail: Bytes(t), length: length) }
        }
    }

    /// The same, over borrowed memory; reads nothing outside `head` and `tail`.
    public static func problem(format: String, head: UnsafeBufferPointer<UInt8>, tail: UnsafeBufferPointer<UInt8>,
                               length: Int64) -> String? {
        problem(format: format, head: Bytes(head), tail: Bytes(tail), length: length)
    }

    static let iendChunk: [UInt8] = [0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]   // "IEND" + CRC

    static func problem(format: String, head: Bytes, tail: Bytes, length: Int64) -> String? {
        switch format {
        case "png":
            return tail.lastIndex(of: iendChunk) == nil ? "truncated PNG (no IEND chunk)" : nil
        case "gif":
            var end = tail.count - 1
            while let byte = tail.at(end), byte == 0x00 || byte == 0x0A || byte == 0x0D || byte == 0x20 { end -= 1 }
            return tail.at(end) == 0x3B ? nil : "truncated GIF (no trailer)"
        case "jpeg":
            return jpegIsCut(head: head, tail: tail, length: length) ? "truncated JPEG (no EOI marker)" : nil
        case "webp":
            guard let riffSize = head.u32le(4) else { return nil }
            let expected = Int64(riffSize) + 8
            return length < expected ? "truncated WebP (\(length) of \(expected) bytes)" : nil
        default:
            return nil
        }
    }

    private static func jpegIsCut(head: Bytes, tail: Bytes, length: Int64) -> Bool {
        // Appended data after EOI is legitimate in these; do not guess.
        for marker in ["MPF\u{0}", "GCamera:MotionPhoto", "GCamera:MicroVideo"] where head.firstIndex(of: Array(marker.utf8)) != nil {
            return false
        }
        // The last marker in the tail: inside scan data, 0xFF is followed only
        // by 0x00 (stuffing) or RSTn, so any other second byte is a marker.
        var i = tail.count - 2
        while i >= 0 {
            if tail.at(i) == 0xFF, let next = tail.at(i + 1), next != 0x00, !(0xD0...0xD7).contains(next) {
                if next == 0xD9 { return false }              // EOI: complete (maybe with trailing bytes)
                if next == 0xDA { return true }               // start of scan, then no EOI
                return false                                  // some other structure: not clearly cut
            }
            i -= 1
        }
        // No marker at all: the whole tail is scan data, if the tail is not
        // the whole file (a tiny file's tail would include its headers).
        return length > Int64(tail.count)
    }
}
