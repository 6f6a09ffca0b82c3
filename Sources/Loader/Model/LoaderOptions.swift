import Fetch
import HTTPCaching
import RemoteCache

/// How an `ImageLoader` treats the cache and the network. Defaults come from `Defaults`.
public struct LoaderOptions: Sendable {
    /// Never touch the network: report stored entries, `empty` otherwise.
    public var offline = false
    /// Contact the server for every URL, even when the stored copy is fresh.
    public var refresh = false
    /// RFC 9111 freshness settings (`--default-ttl`, `--max-age`).
    public var freshness = Freshness()
    /// Store any body, not only images (`--any`).
    public var acceptAnyContent = false
    /// Also decode every pixel of a downloaded image with libvips before it
    /// is stored (`--decode`); a body the decoder refuses is `not-an-image`.
    public var decode = false
    /// Serve a stale stored copy when the network fails (`--stale-if-error`).
    public var staleIfError = false
    /// Concurrent network loads (`--jobs`): a batch runs at most this many,
    /// and so do `load` and `phases(for:)` calls side by side, from any
    /// number of tasks (`LoadSlots`; a batch and single loads are counted
    /// apart), the `remote` tier's uploads after them included.
    /// `fetch.maxConcurrentTransfers` caps all transfers together.
    public var jobs = Defaults.jobs
    /// Concurrent network loads to one host (`--jobs-per-host`), for a
    /// batch and for single loads alike; a load waiting for its host holds
    /// none of the `jobs` slots. Also the loader's connection cap per host
    /// (`fetch.maxHostConnections`, unless that is set).
    public var jobsPerHost = Defaults.jobsPerHost
    /// Transfer limits, TLS, retries and extra request headers (`-H`).
    /// A nil `maxHostConnections` means `jobsPerHost` (`clientConfiguration`).
    /// Headers that cannot be sent (a line break: `HTTPHeaders.problem`)
    /// fail every network load before any I/O (`invalid-url`): refuse them
    /// where the options are made with `fetch.validate()`, as the tool does.
    public var fetch = FetchConfiguration()
    /// Whether a body the cache cannot take (a read-only directory, a disk or
    /// quota that fills up) goes on into a spool file outside the cache, for
    /// a `Delivery` to take (`-o`, `--output-dir`): the URL is then a
    /// `success` that says it was not stored. Set it to false when no load
    /// has a `Delivery` (`asyncfetch URL` alone): such a body reaches
    /// nobody, so the transfer fails (`io`) as soon as the cache refuses a
    /// write, instead of downloading the rest to a spool first.
    public var keepsUnstoredBodies = true
    /// The shared tier asked on a local miss and fed after downloads (`--remote-cache`).
    public var remote: RemoteCache?

    public init() {}

    /// `fetch` as the loader's client runs it: the per-host connection cap is
    /// `jobsPerHost` unless `fetch.maxHostConnections` says otherwise (as the
    /// tool sets it, `RunSettings.loaderOptions`).
    var clientConfiguration: FetchConfiguration {
        var configuration = fetch
        if configuration.maxHostConnections == nil { configuration.maxHostConnections = jobsPerHost }
        return configuration
    }
}
