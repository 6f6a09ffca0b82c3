import Fetch
import RemoteCache
import Support

/// How the remote tier's errors reach people: the first as a warning that
/// says what is done instead (`fallback` for a read; for an upload, that the
/// entry stays in this machine's cache), every one with `-v`. A failing tier
/// never fails a URL (it is a source, never the only one), so one warning
/// is enough unless more is asked for; the tier turned off for the rest of
/// the run is a warning of its own, always (once per run at most; so are its
/// uploads stopped). Owns that policy only; the tier's own work is `RemoteCache`'s.
extension RemoteCache {
    /// The tier at `location`, its errors given to `warn` as above
    /// (`verbose`: every one). Public: a fetch run and `cache pull` open
    /// the tier this way.
    public static func warning(at location: RemoteLocation, fetch: FetchConfiguration, verbose: Bool,
                               uploads: Int = RemoteDefaults.uploads, fallback: String = "the origins are used instead",
                               warn: @escaping @Sendable (String) -> Void) -> RemoteCache {
        let warned = Locked(false)
        return RemoteCache(location: location, fetch: fetch, uploads: uploads, onError: { transfer, message in
            // The message may quote the tier's bytes (an object that is not
            // ours): shown with control characters as escapes.
            let message = ShownText.of(message)
            if verbose {
                warn(message)
            } else if warned.withLock({ warned in defer { warned = true }; return !warned }) {
                let instead = transfer == .read ? fallback : "not uploaded: the entry stays in this machine's cache only"
                warn(message + " (\(instead); -v shows every remote cache error)")
            }
        }, onTurnedOff: { message in
            warn(ShownText.of(message))
        })
    }
}
