import ArgumentParser
import Fetch
import Loader
import RemoteCache
import Support
#if canImport(Glibc)
import Glibc
#endif

/// `--remote-cache`, shared by a fetch run and `cache pull`.
struct RemoteOptions: ParsableArguments {
    @Option(name: .customLong("remote-cache"), help: ArgumentHelp(
        "Shared cache tier behind the local one: http(s)://host/prefix/ (an HTTP object store: GET/PUT) or s3://bucket/prefix (AWS_* variables). (default: $ASYNCFETCH_REMOTE_CACHE, else none)",
        valueName: "url"))
    var remoteCache: String?

    /// The tier named by `--remote-cache`, else `ASYNCFETCH_REMOTE_CACHE`, or nil; a bad one is a usage error.
    static func location(_ explicit: String?) throws -> RemoteLocation? {
        let named = explicit ?? getenv("ASYNCFETCH_REMOTE_CACHE").map { String(cString: $0) }
        guard let named, !named.isEmpty else { return nil }
        var environment: [String: String] = [:]
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                     "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        do {
            return try RemoteLocation.parse(named, environment: environment)
        } catch {
            throw UsageError(error.message)
        }
    }

    /// The tier's client, reporting errors through `reporter`: the first as a
    /// warning (the origins are used instead), every one with `-v`.
    static func open(_ location: RemoteLocation, fetch: FetchConfiguration, verbose: Bool,
                     warn: @escaping @Sendable (String) -> Void) -> RemoteCache {
        let warned = WarnOnce()
        return RemoteCache(location: location, fetch: fetch) { message in
            if verbose {
                warn(message)
            } else if warned.first() {
                warn(message + " (the origins are used instead; -v shows every remote cache error)")
            }
        }
    }
}

/// True the first time only.
final class WarnOnce: Sendable {
    private let done = Locked(false)

    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
