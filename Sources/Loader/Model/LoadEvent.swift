/// A phase change of one URL, as a batch reports it.
public struct LoadEvent: Sendable {
    /// The URL as given, with any password removed.
    public let url: String
    public let phase: Phase
    /// Seconds since this URL started (0 for `loading`).
    public let duration: Double
    /// Not a phase change: the outcome of a background revalidation
    /// (`stale-while-revalidate`) of a URL already reported `success`/`stale`.
    /// `phase` is then that outcome (`success` from `revalidated` or
    /// `network`, or `failure`); it comes after the URL's terminal event.
    public var refreshed = false
}
