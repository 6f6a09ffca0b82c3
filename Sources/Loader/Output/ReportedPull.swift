import DiskCache
import Fetch
import RemoteCache

/// `asyncfetch cache pull` as the tool runs it, for a Swift program that
/// wants what the tool prints: the tier opened for a pull (its warnings
/// say that no origin is contacted instead), each URL's outcome as its line
/// (`CacheURLLine`), the summary, and whether every URL is now cached
/// locally. The caller opens the store and the `--input` lists
/// (`URLList.open`) and chooses where the lines go; the exit status is its.
public struct ReportedPull: Sendable {
    /// How a pull ended.
    public enum Outcome: Sendable {
        /// Every URL is cached locally: pulled, or there already.
        case allCached
        /// Some URL is not: the tier lacks it, it is no URL a fetch takes,
        /// or the tier failed.
        case notAllCached
        /// `--input` lists that failed part way (`LoadError.unreadableList`),
        /// as a run's are; the URLs read before the error were each pulled
        /// and reported all the same, and the summary is out.
        case unreadableLists([LoadError])
    }

    /// The tier pulled from (its `stats` make the summary).
    public let tier: RemoteCache
    private let verbose: Bool
    private let error: @Sendable (String) -> Void

    /// The tier at `location`. `error` takes the lines meant for stderr, as
    /// the tool writes them: the tier's warnings (its first error, every one
    /// when `verbose`; the tier turned off), each URL not pulled, and the summary.
    public init(location: RemoteLocation, verbose: Bool, error: @escaping @Sendable (String) -> Void) {
        tier = RemoteCache.warning(at: location, fetch: FetchConfiguration(), verbose: verbose,
                                   fallback: "not pulled: cache pull contacts no origin") { error("asyncfetch: warning: " + $0) }
        self.verbose = verbose
        self.error = error
    }

    /// Pulls `list` into `store`, at most `jobs` at once (`RemoteCache.pull`):
    /// a URL pulled is a `pulled   URL` line for `output` (stdout), one not
    /// pulled a line for `error` saying why, one already cached none; then
    /// the summary for `error`. A list that failed part way comes first in
    /// the outcome: what it did not give was never asked.
    public func run(_ list: URLList, into store: DiskCacheStore, jobs: Int, output: (String) -> Void) async -> Outcome {
        let counts = await tier.pull(list, into: store, jobs: jobs) { url, outcome in
            switch outcome {
            case .pulled: output(CacheURLLine.pulled(url))
            case .missing: error(CacheURLLine.notInRemote(url))
            case .failed(let turnedOff):
                // Whether the tier was off is this read's (a read that failed just before another turned it off
                // could be read no more than it was); the errors counted so far only decide the -v hint.
                error(CacheURLLine.remoteFailed(url, verbose: verbose, turnedOff: turnedOff, errors: tier.stats.errors))
            case .present: break
            }
        }
        let stats = tier.stats
        error(CacheURLLine.pullSummary(pulled: counts.pulled, present: counts.present, notPulled: counts.notPulled,
                                       remoteMisses: stats.misses, remoteErrors: stats.errors,
                                       turnedOff: stats.disabled ? stats.reason.map(ShownText.of) : nil))
        let unread = list.inputs.compactMap { input in input.readError.map { LoadError.unreadableList(input.path, $0) } }
        if !unread.isEmpty { return .unreadableLists(unread) }
        return counts.notPulled > 0 ? .notAllCached : .allCached
    }
}
