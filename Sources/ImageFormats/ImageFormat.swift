/// One of the image formats asyncfetch recognises (SPEC §5), with the three
/// names it goes by: `name` as output and JSON print it and the cache
/// records it (`"png"`, `"jpeg"`, …), the usual file extension (`"jpg"` for
/// JPEG), and the IANA media type.
///
/// The set is closed: the only values are the static members; `init(name:)`
/// finds one by the name a cache entry recorded.
public struct ImageFormat: Hashable, Sendable, CustomStringConvertible {
    /// The name in output, JSON and cache metadata.
    public let name: String
    /// The extension a file of this format usually has, without the dot.
    public let fileExtension: String
    /// The IANA media type.
    public let mediaType: String

    private init(_ name: String, fileExtension: String? = nil, mediaType: String) {
        self.name = name
        self.fileExtension = fileExtension ?? name
        self.mediaType = mediaType
    }

    public static let png = ImageFormat("png", mediaType: "image/png")
    public static let jpeg = ImageFormat("jpeg", fileExtension: "jpg", mediaType: "image/jpeg")
    public static let gif = ImageFormat("gif", mediaType: "image/gif")
    public static let webp = ImageFormat("webp", mediaType: "image/webp")
    public static let bmp = ImageFormat("bmp", mediaType: "image/bmp")
    public static let tiff = ImageFormat("tiff", mediaType: "image/tiff")
    public static let ico = ImageFormat("ico", mediaType: "image/vnd.microsoft.icon")
    public static let avif = ImageFormat("avif", mediaType: "image/avif")
    public static let heif = ImageFormat("heif", mediaType: "image/heif")
    public static let jxl = ImageFormat("jxl", mediaType: "image/jxl")
    public static let svg = ImageFormat("svg", mediaType: "image/svg+xml")

    /// Every format, in the order SPEC §5 lists them.
    public static let all: [ImageFormat] = [.png, .jpeg, .gif, .webp, .bmp, .tiff, .ico, .avif, .heif, .jxl, .svg]

    /// The format recorded under `name`, or nil for a name no format has.
    public init?(name: String) {
        guard let known = Self.all.first(where: { $0.name == name }) else { return nil }
        self = known
    }

    public var description: String { name }
}
