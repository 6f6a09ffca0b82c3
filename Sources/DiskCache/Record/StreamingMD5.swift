import CCrypto

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
        precondition(ok == 1, "OpenSSL MD5_Update failed")
    }

    /// The hex digest of everything so far; the context starts over afterwards.
    public func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: 16)
        let ok = ccrypto_md5_final(context, &digest)
        precondition(ok == 1, "OpenSSL MD5_Final failed")
        return MD5.hexString(digest)
    }

    /// Forgets everything so far.
    public func reset() { _ = finalize() }
}
