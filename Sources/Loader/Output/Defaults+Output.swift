import Fetch

/// The layout of result lines (`ResultLine`).
extension Defaults {
    /// On a terminal, result lines pad their URL column to the widest URL so far, up to this many characters.
    public static let urlColumnMax = 100
}
