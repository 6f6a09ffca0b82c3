import CCrypto
import Support

/// MD5 through OpenSSL (see CCrypto.c: one-shot digests need no provider
/// set-up; streaming goes through EVP). Used for cache keys (file names)
/// and body digests, never for security.
public enum MD5 {
    /// Lowercase hex MD5 of `bytes`; equals `printf %s … | md5sum`.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Array(bytes).withUnsafeBytes { digestHex($0) }
    }

    public static func hex(_ string: String) -> String {
        var string = string
        return string.withUTF8 { digestHex(UnsafeRawBufferPointer($0)) }
    }

    /// The 16 bytes of an MD5, as two words (hashable, no allocation) that
    /// give the hex form on demand.
    public struct Digest: Hashable, Sendable {
        let high: UInt64
        let low: UInt64

        public func hash(into hasher: inout Hasher) {
            hasher.combine(high)
            hasher.combine(low)
        }

        /// What a `Set` or `Dictionary` (and `hashValue`) uses: the bits of
        /// a digest are uniformly random already, so they need only be mixed
        /// with the table's seed, not put through a SipHash per lookup (about
        /// 350 instructions, three times per URL of a batch). The seed enters
        /// a multiplication whose high half is folded into the low bits, so
        /// URLs chosen to share a digest's low bits do not share a bucket.
        public func _rawHashValue(seed: Int) -> Int {
            let mixed = (low ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
            return Int(truncatingIfNeeded: mixed ^ (mixed >> 32) ^ high)
        }

        /// Lowercase hex, as `md5sum` prints it.
        public var hex: String {
            withHex { digits, _ in String(decoding: digits, as: UTF8.self) }
        }

        /// Calls `body` with the 32 lowercase hex digits, followed by a NUL
        /// (`cName` is a C string of them), on the stack: a lookup names its
        /// files, compares its record's key and writes its line from these,
        /// with no `String` made (~800 instructions a hit with its release).
        @inlinable
        package func withHex<R>(_ body: (_ digits: UnsafeBufferPointer<UInt8>, _ cName: UnsafePointer<CChar>) throws -> R) rethrows -> R {
            try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 5) { words in
                let digits = hexWords()
                words[0] = digits.0
                words[1] = digits.1
                words[2] = digits.2
                words[3] = digits.3
                words[4] = 0   // the NUL
                let raw = UnsafeRawPointer(words.baseAddress!)
                return try body(UnsafeBufferPointer(start: raw.assumingMemoryBound(to: UInt8.self), count: 32),
                                raw.assumingMemoryBound(to: CChar.self))
            }
        }

        /// The digest of a key: 32 lowercase hex digits (nil for anything
        /// else, uppercase included: a key's file name is lowercase).
        package init?(hex bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count == 32, let start = bytes.baseAddress else { return nil }
            // Eight digits a word, each byte taken as a digit whatever it is;
            // then the digest is spelled again (`hexWords`) and must give
            // these very bytes, which only 32 lowercase hex digits do. (A
            // fresh hit reads its body digest this way: the byte loop took
            // ~320 instructions.)
            let raw = UnsafeRawPointer(start)
            let given = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                         raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self), raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            let digest = Digest(high: UInt64(Self.nibbles(given.0)) << 32 | UInt64(Self.nibbles(given.1)),
                                low: UInt64(Self.nibbles(given.2)) << 32 | UInt64(Self.nibbles(given.3)))
            let spelled = digest.hexWords()
            guard spelled.0 == given.0, spelled.1 == given.1, spelled.2 == given.2, spelled.3 == given.3 else { return nil }
            self = digest
        }

        /// The 32-bit value eight hex digits spell (as loaded: the first
        /// digit in the lowest byte, the most significant nibble), for
        /// `0`–`9` and `a`–`f`; any other byte gives some value.
        @inline(__always)
        private static func nibbles(_ word: UInt64) -> UInt32 {
            let digits = UInt64(littleEndian: word)
            // A digit's low four bits, plus 9 for a letter (bit 6 set).
            let values = (digits & 0x0F0F_0F0F_0F0F_0F0F) &+ ((digits >> 6) & 0x0101_0101_0101_0101) &* 9
            var packed = ((values << 4) | (values >> 8)) & 0x00FF_00FF_00FF_00FF   // pairs: a byte per 16 bits
            packed = (packed | packed >> 8) & 0x0000_FFFF_0000_FFFF
            packed = (packed | packed >> 16) & 0xFFFF_FFFF
            return UInt32(truncatingIfNeeded: packed).byteSwapped
        }

        /// The digest of a key given as text (`init(hex:)`).
        package init?(hex text: String) {
            guard let digest = withUTF8Bytes(of: text, { Digest(hex: $0) }) else { return nil }
            self = digest
        }

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        /// The 32 hex digits as four words to store in order (little endian), eight digits a word.
        @usableFromInline
        func hexWords() -> (UInt64, UInt64, UInt64, UInt64) {
            // `hexDigits` takes four bytes as loaded from memory: the first in the lowest bits.
            (MD5.hexDigits(of: UInt32(truncatingIfNeeded: high >> 32).bigEndian).littleEndian,
             MD5.hexDigits(of: UInt32(truncatingIfNeeded: high).bigEndian).littleEndian,
             MD5.hexDigits(of: UInt32(truncatingIfNeeded: low >> 32).bigEndian).littleEndian,
             MD5.hexDigits(of: UInt32(truncatingIfNeeded: low).bigEndian).littleEndian)
        }
    }

    public static func digest(_ string: String) -> Digest {
        // Borrowed bytes (no copy, no retain) for a native string, else a copy.
        if let digest = string.utf8.withContiguousStorageIfAvailable({ digest(UnsafeRawBufferPointer($0)) }) { return digest }
        var string = string
        return string.withUTF8 { digest(UnsafeRawBufferPointer($0)) }
    }

    static func digest(_ bytes: UnsafeRawBufferPointer) -> Digest {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 2) { words in
            let ok = ccrypto_md5(bytes.baseAddress, bytes.count, UnsafeMutableRawPointer(words.baseAddress!)
                .assumingMemoryBound(to: UInt8.self))
            precondition(ok == 1, "OpenSSL MD5 failed")
            return Digest(high: UInt64(bigEndian: words[0]), low: UInt64(bigEndian: words[1]))
        }
    }

    /// One digest into a stack buffer, straight into a 32-byte string:
    /// no heap allocation besides the string (this runs once per URL).
    static func digestHex(_ buffer: UnsafeRawBufferPointer) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { digest in
            let ok = ccrypto_md5(buffer.baseAddress, buffer.count, digest.baseAddress)
            precondition(ok == 1, "OpenSSL MD5 failed")
            return hexString(UnsafeBufferPointer(digest))
        }
    }

    static func hexString(_ digest: [UInt8]) -> String {
        digest.withUnsafeBufferPointer { hexString($0) }
    }

    /// Lowercase hex, four bytes (eight digits) at a time: every URL's key
    /// is one (a byte loop was ~280 instructions a key).
    static func hexString(_ digest: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: digest.count * 2) { out in
            let groups = digest.count / 4
            for group in 0..<groups {
                let bytes = UnsafeRawPointer(digest.baseAddress! + 4 * group)
                UnsafeMutableRawPointer(out.baseAddress! + 8 * group)
                    .storeBytes(of: hexDigits(of: bytes.loadUnaligned(as: UInt32.self)).littleEndian, as: UInt64.self)
            }
            for i in (4 * groups)..<digest.count {
                out[2 * i] = asciiHexDigit(digest[i] >> 4)
                out[2 * i + 1] = asciiHexDigit(digest[i] & 0x0F)
            }
            return digest.count * 2
        }
    }

    /// The eight hex digits of the four bytes `word` holds in memory order,
    /// the first byte's high digit in the lowest byte (to be stored little
    /// endian): each byte to its own 16-bit lane, its high nibble to the
    /// lane's low byte and its low nibble to the high byte, then `0`–`9`
    /// or `a`–`f` per byte with no carry between bytes (at most 0x66).
    @inline(__always) static func hexDigits(of word: UInt32) -> UInt64 {
        // Spread by two shifts and masks: halves to 32-bit lanes, then bytes to 16-bit ones.
        var lanes = UInt64(UInt32(littleEndian: word))
        lanes = (lanes | lanes << 16) & 0x0000_FFFF_0000_FFFF
        lanes = (lanes | lanes << 8) & 0x00FF_00FF_00FF_00FF
        let nibbles = (lanes >> 4) & 0x000F_000F_000F_000F | (lanes & 0x000F_000F_000F_000F) << 8
        let letters = ((nibbles &+ 0x0606_0606_0606_0606) & 0x1010_1010_1010_1010) >> 4   // 1 where the nibble is 10…15
        return nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
    }
}
