/// What the decoder said about one body.
public enum DecodeVerdict: Sendable, Equatable {
    /// Every pixel decoded.
    case decoded
    /// The decoder refused the body (its message), or the declared size is over the limit.
    case refused(String)
    /// No decoder here reads this format (BMP, ICO): the structure verdict stands.
    case notSupported

    /// The failure message a refused body gets ("decoder refused the image: …").
    public var refusal: String? {
        if case .refused(let message) = self { return "decoder refused the image: \(message)" }
        return nil
    }
}
