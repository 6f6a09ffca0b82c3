/// The answer to "is this body a complete image, and what is it?": the
/// header sniff (`ImageInfo`) and the structure walk (`ImageStructure`)
/// read together, the way asyncfetch decides what it stores.
public enum ImageInspection: Equatable, Sendable {
    /// A whole image: its format and pixel size. `end` is where its
    /// structure ends (the bytes after it are trailing data), or nil when
    /// the format cannot be judged cheaply and the body passes.
    case image(ImageInfo, end: Int64?)
    /// In a format asyncfetch knows, but cut short or damaged; `problem` says what is wrong.
    case broken(ImageInfo, problem: String)
    /// In none of the formats asyncfetch knows.
    case notAnImage
    /// No bytes at all (a 204, an empty 200): said as such, since "no
    /// supported format" reads as a body that came.
    case empty

    /// The image's format and size, when the body is a whole image.
    public var image: ImageInfo? {
        if case .image(let info, _) = self { return info }
        return nil
    }

    /// Why the body is not a whole image, or nil when it is one.
    public var problem: String? {
        switch self {
        case .image: return nil
        case .broken(_, let problem): return problem
        case .notAnImage: return "the body is in no supported image format"
        case .empty: return "the body is empty"
        }
    }
}
