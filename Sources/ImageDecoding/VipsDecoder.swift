import CVips
import ImageFormats

extension ImageDecoding {
    /// The libvips loader for each format it reads; a format missing here keeps its structure verdict.
    static let loaders: [String: String] = [
        ImageFormat.jpeg.name: "jpegload", ImageFormat.png.name: "pngload", ImageFormat.gif.name: "gifload",
        ImageFormat.webp.name: "webpload", ImageFormat.tiff.name: "tiffload", ImageFormat.avif.name: "heifload",
        ImageFormat.heif.name: "heifload", ImageFormat.jxl.name: "jxlload", ImageFormat.svg.name: "svgload",
    ]

    /// Whether `format` is decoded by `decode(path:format:)` here (libvips has its loader).
    public static func decodes(_ format: ImageFormat) -> Bool {
        guard let loader = loaders[format.name] else { return false }
        return cvips_has_loader(loader) != 0
    }

    /// Decodes every pixel of the file at `path` as `format`. Blocking (a
    /// whole decode): call it from the cooperative pool, never a transfer thread.
    ///
    /// Decodes run side by side; one the decoder refuses runs again alone to
    /// learn why: libvips keeps one error buffer for the process, in which
    /// two decodes failing at once read each other's message (see CVips.c).
    public static func decode(path: String, format: ImageFormat,
                              maximumPixels: Int64 = DecodeLimits.maximumPixels) -> DecodeVerdict {
        guard let loader = loaders[format.name] else { return .notSupported }
        var error = [CChar](repeating: 0, count: DecodeLimits.messageBytes)
        guard cvips_start(&error, error.count) == 0 else { return .refused("libvips could not start: \(message(error))") }
        guard cvips_has_loader(loader) != 0 else { return .notSupported }
        let beside = decode(path: path, loader: loader, format: format, maximumPixels: maximumPixels, alone: false)
        guard beside == .refused("") else { return beside }
        return decode(path: path, loader: loader, format: format, maximumPixels: maximumPixels, alone: true)
    }

    /// Decodes a stored body by the format its record names (an `ImageFormat`
    /// name, as `CacheMetadata.format` keeps it): `.notSupported` when it names
    /// none this module reads. What `cache verify --decode` and a remote
    /// tier's object under `--decode` are judged by.
    public static func decode(path: String, formatName: String?) -> DecodeVerdict {
        guard let format = formatName.flatMap(ImageFormat.init(name:)) else { return .notSupported }
        return decode(path: path, format: format)
    }

    private static func message(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One decode; not `alone`, a refusal by the decoder is `.refused("")` (its message unknown).
    private static func decode(path: String, loader: String, format: ImageFormat, maximumPixels: Int64,
                               alone: Bool) -> DecodeVerdict {
        var error = [CChar](repeating: 0, count: DecodeLimits.messageBytes)
        func message() -> String { Self.message(error) }
        guard let image = cvips_open(path, loader, format == .jpeg ? 1 : 0, alone ? 1 : 0, &error, error.count) else {
            return .refused(message())
        }
        defer { cvips_close(image) }
        var width: Int64 = 0, height: Int64 = 0
        cvips_size(image, &width, &height)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maximumPixels else {
            return .refused("\(width)×\(height) is over the \(maximumPixels / 1_000_000)-megapixel decode limit")
        }
        guard cvips_decode_all(image, &error, error.count) == 0 else { return .refused(message()) }
        return .decoded
    }
}
