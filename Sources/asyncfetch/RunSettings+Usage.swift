import Loader
import Fetch

/// The usage checks of a run's settings, worded for the command line.
extension RunSettings {
    /// Usage checks. They run at the start of the run, not in `validate()`:
    /// swift-argument-parser calls `validate()` before it reports unknown
    /// options, and `asyncfetch --bogus` must say "Unknown option", not
    /// "no URL given".
    func checkUsage() throws {
        if urls.isEmpty && input.isEmpty {
            throw UsageError.noURLGiven
        }
        if offline && refresh {
            throw UsageError("--offline and --refresh contradict each other (--offline never uses the network; --refresh revalidates every URL)")
        }
        if jobs < 1 { throw UsageError("--jobs must be at least 1") }
        if jobsPerHost < 1 { throw UsageError("--jobs-per-host must be at least 1") }
        if retries < 0 { throw UsageError("--retries must be 0 or more") }
        // An unset shell variable (`-o "$OUT"`): said before any download, as for --cache-dir "".
        if output?.isEmpty == true {
            throw UsageError("-o/--output is empty: give a file name ('-' for standard output), or leave the option out")
        }
        if outputDir?.isEmpty == true {
            throw UsageError("--output-dir is empty: give a folder ('.' for the current one), or leave the option out")
        }
        if input.contains("") { throw UsageError.emptyInput }
        // An empty template named every file by its key ({md5}.{ext}), with nothing said.
        if name?.isEmpty == true {
            throw UsageError("--name is empty: give a template ({name}, {host}/{path}, {md5}.{ext}), or leave the option out for {name}")
        }
        if cacert?.isEmpty == true { throw UsageError("--cacert is empty: give a PEM file, or leave the option out") }
        if output != nil && (urls.count != 1 || !input.isEmpty) {
            throw UsageError("-o/--output takes exactly one URL, named on the command line")
        }
        // The one URL may not be in the shard: the run then wrote nothing and exited 0.
        if output != nil, let shard, shard.count > 1 {
            throw UsageError("-o/--output and --shard exclude each other (-o is for one URL, which shard \(shard.index)/\(shard.count) may not hold; use -P DIR)")
        }
        if output != nil && outputDir != nil {
            throw UsageError("-o FILE and --output-dir DIR exclude each other (-o is for one URL, -P for a batch)")
        }
        if let name, let problem = OutputName.problem(with: name) { throw UsageError(problem) }
        if outputDir == nil && (name != nil || link) {
            throw UsageError("\(name != nil ? "--name" : "--link") works with --output-dir DIR (-P DIR) or -O")
        }
        for line in header {
            do {
                _ = try HeaderArgument(parsing: line)
            } catch {
                throw UsageError(error.message)
            }
        }
        if HTTPHeaders.problem(name: "User-Agent", value: userAgent) != nil {
            throw UsageError("--user-agent takes one line, without a line break: got '\(userAgent.debugDescription.dropFirst().dropLast())'")
        }
        if let cacert, let problem = CAFile.problem(at: cacert) {
            throw UsageError(environment: "cannot read --cacert \(cacert): \(problem)")
        }
    }
}
