import ArgumentParser
import RemoteCache
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
        guard let named = named(explicit), !named.isEmpty else { return nil }
        do {
            return try RemoteLocation.parse(named, environment: environment())
        } catch {
            throw UsageError(error.message)
        }
    }

    /// `--remote-cache`, else `ASYNCFETCH_REMOTE_CACHE` (either empty: no tier).
    static func named(_ explicit: String?) -> String? {
        explicit ?? getenv("ASYNCFETCH_REMOTE_CACHE").map { String(cString: $0) }
    }

    /// The `AWS_*` variables an `s3://` location reads.
    static func environment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                     "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        return environment
    }
}
