import ArgumentParser
import Loader
import RemoteCache

extension CacheCommand {
    /// `cache pull --remote-cache URL [-i FILE]... [URL...]`: brings entries from
    /// the shared tier into the local cache without contacting any origin.
    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy these URLs' entries from the remote cache tier into the local cache (no origin is contacted).",
            discussion: """
                Each object is checked (key, URL, length, XXH3-128) before it is stored. URLs already \
                cached locally are left alone. Exit status: 0 when every URL is now cached locally, \
                1 when some are not (not in the remote tier, or it failed), 2 usage error (an -i \
                list that cannot be read to its end included).
                """)
        @OptionGroup var cache: CacheOptions
        @OptionGroup var remote: RemoteOptions
        @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
            "Also read URLs from this file, one per line ('-' for stdin). Repeatable. (default: none)", valueName: "file"),
            completion: .file())
        var input: [String] = []
        @Option(parsing: .unconditional, help: ArgumentHelp("Only the URLs of shard K of N (as for a fetch run). (default: all)", valueName: "K/N"))
        var shard: Shard?
        @Option(parsing: .unconditional, help: ArgumentHelp("Concurrent remote transfers.", valueName: "n"))
        var jobs: Int = RemoteDefaults.pullJobs
        @Flag(name: .shortAndLong, help: "Show every remote cache error.")
        var verbose = false
        @Argument(help: "URLs to pull.") var urls: [String] = []

        func run() async throws {
            // Checked here, not in `validate()`, which runs before an unknown option is reported.
            if urls.isEmpty && input.isEmpty { throw UsageError.noURLGiven }
            if input.contains("") { throw UsageError.emptyInput }
            if jobs < 1 { throw UsageError("--jobs must be at least 1") }
            guard let location = try RemoteOptions.location(remote.remoteCache) else {
                throw UsageError("cache pull needs --remote-cache URL (or ASYNCFETCH_REMOTE_CACHE)")
            }
            let store = try cache.openStore(writable: true)
            let pull = ReportedPull(location: location, verbose: verbose) { Console.error($0) }
            let list = URLList(arguments: urls, inputs: try UnreadableInputs.open(input), shard: shard)
            switch await pull.run(list, into: store, jobs: jobs, output: { print($0) }) {
            case .allCached: return
            case .notAllCached: throw ExitCode(1)
            case .unreadableLists(let errors): throw UnreadableInputs(errors: errors)
            }
        }
    }
}
