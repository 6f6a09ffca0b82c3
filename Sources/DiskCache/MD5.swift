import CCrypto

/// MD5 through OpenSSL's EVP interface. Used for cache keys (file names)
/// and body digests, never for security.
public enum MD5 {
    /// Lowercase hex MD5 of `bytes`; equals `printf %s … | md5sum`.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var digest = [UInt8](repeating: 0, count: 16)
        let ok = Array(bytes).withUnsafeBytes { buffer in
            ccrypto_md5(buffer.baseAddress, buffer.count, &digest)
        }
        precondition(ok == 1, "OpenSSL EVP MD5 failed")
        return hexString(digest)
    }

    public static func hex(_ string: String) -> String {
        var string = string
        return string.withUTF8 { buffer in
            var digest = [UInt8](repeating: 0, count: 16)
            let ok = ccrypto_md5(buffer.baseAddress, buffer.count, &digest)
            precondition(ok == 1, "OpenSSL EVP MD5 failed")
            return hexString(digest)
        }
    }

    static func hexString(_ digest: [UInt8]) -> String {
        let table = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: digest.count * 2)
        for (i, byte) in digest.enumerated() {
            out[2 * i] = table[Int(byte >> 4)]
            out[2 * i + 1] = table[Int(byte & 0x0F)]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// MD5 computed while a body streams. Not thread-safe; one owner at a time.
public final class StreamingMD5: @unchecked Sendable {
    private let context: OpaquePointer

    public init() throws(DiskCacheError) {
        guard let context = ccrypto_md5_new() else {
            throw DiskCacheError(.io, path: "", message: "OpenSSL could not create an MD5 context")
        }
        self.context = context
    }

    deinit { ccrypto_md5_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        let ok = ccrypto_md5_update(context, bytes.baseAddress, bytes.count)
        precondition(ok == 1, "OpenSSL EVP_DigestUpdate failed")
    }

    /// The hex digest of everything so far; the context starts over afterwards.
    public func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        let ok = ccrypto_md5_final(context, &digest)
        precondition(ok == 1, "OpenSSL EVP_DigestFinal_ex failed")
        return MD5.hexString(digest)
    }

    /// Forgets everything so far.
    public func reset() { _ = finalize() }
}
