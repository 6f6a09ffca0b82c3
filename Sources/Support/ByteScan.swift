/// Whether a run of bytes holds any byte of a small set, eight bytes at a
/// time: the output lines ask it of every URL and path they print, to copy
/// the usual text (nothing to escape) in one piece.
public enum ByteScan {
    /// Whether `text` has a byte below `limit` (at most 0x80) or equal to
    /// `a`, `b` or `c` (repeat one to ask for fewer).
    @inlinable
    public static func contains(below limit: UInt8, or a: UInt8, _ b: UInt8, _ c: UInt8,
                                in text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = text.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        while i + 8 <= text.count {
            let word = UnsafeRawPointer(start + i).loadUnaligned(as: UInt64.self)
            // Exact for the word as a whole (which byte it is may be wrong,
            // whether there is one is not): a byte below `limit`, a byte
            // that is zero once xored with `a`, `b` or `c`.
            let x = word ^ (ones &* UInt64(a)), y = word ^ (ones &* UInt64(b)), z = word ^ (ones &* UInt64(c))
            let below = (word &- ones &* UInt64(limit)) & ~word
            let zero = ((x &- ones) & ~x) | ((y &- ones) & ~y) | ((z &- ones) & ~z)
            if (below | zero) & highs != 0 { return true }
            i += 8
        }
        while i < text.count {
            let byte = start[i]
            if byte < limit || byte == a || byte == b || byte == c { return true }
            i += 1
        }
        return false
    }
}
