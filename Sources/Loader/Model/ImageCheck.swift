/// The check that decided a downloaded body is an image (JSON `checked`).
public enum ImageCheck: String, Sendable {
    /// The structure walk (ImageFormats): every format, and the only check
    /// for BMP and ICO, or without `--decode`.
    case structure
    /// libvips decoded every pixel (`--decode`, a format it reads).
    case decoded
}
