/// One header field: its name as it was sent or received, and its value
/// (`HTTPHeaders.Field` in Fetch). Here, not in Fetch, because the cache's
/// 304 merge (`CacheMetadata.replaceHeaders`, DiskCache) reads a response's
/// fields in place, and DiskCache does not import Fetch.
///
/// A struct, not a `(name: String, value: String)` tuple: an array of
/// tuples is destroyed through the runtime's generic tuple witness (~137
/// instructions a field, 8 fields a usual response, freed on a completion
/// worker per cold URL), an array of these through their own (~55).
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
