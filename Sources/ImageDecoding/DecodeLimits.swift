/// The decoder's named limits.
public enum DecodeLimits {
    /// The largest declared width × height decoded (100 megapixels): a
    /// larger image is refused from its header, before any pixel is decoded.
    public static let maximumPixels: Int64 = 100_000_000
    /// Room for libvips' sentence about a refusal (CVips copies its error
    /// buffer there, cut short if longer).
    static let messageBytes = 512
}
