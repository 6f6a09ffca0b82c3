/// A name in `DIR/.tmp`: `<key>.<pid>.<n>`, optionally followed by `.meta`
/// (metadata being written) or `.deliver` (a `no-store` body the loader
/// keeps until it has been copied to `-o`).
struct TemporaryFileName: Equatable {
    let key: String
    let pid: Int32
    let isMetadata: Bool

    /// The suffix of a body held for delivery (see `ImageLoader`'s no-store path).
    static let deliverySuffix = ".deliver"

    init?(_ name: String) {
        var rest = Substring(name)
        isMetadata = rest.hasSuffix(CacheFileName.metadataSuffix)
        if isMetadata { rest = rest.dropLast(CacheFileName.metadataSuffix.count) }
        if !isMetadata && rest.hasSuffix(Self.deliverySuffix) { rest = rest.dropLast(Self.deliverySuffix.count) }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, CacheFileName.isKey(String(parts[0])),
              Self.isDigits(parts[1]), Self.isDigits(parts[2]),
              let pid = Int32(parts[1]), pid > 0, UInt64(parts[2]) != nil
        else { return nil }
        key = String(parts[0])
        self.pid = pid
    }

    private static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
