import Fetch

/// Whether a run's settings can start a run: the usage checks of
/// `asyncfetch URL...`, worded with the options' names, for the tool and for
/// a Swift program that builds a `RunSettings` (docs/habits.md).
extension RunSettings {
    /// The first reason these settings cannot start a run, or nil: `usage`
    /// for values that contradict each other or are not of their form, `io`
    /// (with the `path`) for a `--cacert` file that cannot be read. No URL
    /// at all is the caller's to say (the tool names how to give one).
    /// These run at the start of a run, not while the command line is parsed,
    /// so that an unknown option is reported first.
    public func usageProblem() -> LoadError? {
        func usage(_ message: String) -> LoadError { LoadError(kind: .usage, message: message) }
        if offline && refresh {
            return usage("--offline and --refresh contradict each other (--offline never uses the network; --refresh revalidates every URL)")
        }
        if jobs < 1 { return usage("--jobs must be at least 1") }
        if jobsPerHost < 1 { return usage("--jobs-per-host must be at least 1") }
        if retries < 0 { return usage("--retries must be 0 or more") }
        // An unset shell variable (`-o "$OUT"`): said before any download, as for --cache-dir "".
        if output?.isEmpty == true {
            return usage("-o/--output is empty: give a file name ('-' for standard output), or leave the option out")
        }
        if outputDir?.isEmpty == true {
            return usage("--output-dir is empty: give a folder ('.' for the current one), or leave the option out")
        }
        if input.contains("") { return usage(Self.emptyInput) }
        // An empty template named every file by its key ({md5}.{ext}), with nothing said.
        if name?.isEmpty == true {
            return usage("--name is empty: give a template ({name}, {host}/{path}, {md5}.{ext}), or leave the option out for {name}")
        }
        if cacert?.isEmpty == true { return usage("--cacert is empty: give a PEM file, or leave the option out") }
        if output != nil && (urls.count != 1 || !input.isEmpty) {
            return usage("-o/--output takes exactly one URL, named on the command line")
        }
        // The one URL may not be in the shard: the run then wrote nothing and exited 0.
        if output != nil, let shard, shard.count > 1 {
            return usage("-o/--output and --shard exclude each other (-o is for one URL, which shard \(shard.index)/\(shard.count) may not hold; use -P DIR)")
        }
        if output != nil && outputDir != nil {
            return usage("-o FILE and --output-dir DIR exclude each other (-o is for one URL, -P for a batch)")
        }
        if let name, let problem = OutputName.problem(with: name) { return usage(problem) }
        if outputDir == nil && (name != nil || link) {
            return usage("\(name != nil ? "--name" : "--link") works with --output-dir DIR (-P DIR) or -O")
        }
        for line in header {
            do {
                _ = try HeaderArgument(parsing: line)
            } catch {
                return error
            }
        }
        if HTTPHeaders.problem(name: "User-Agent", value: userAgent) != nil {
            return usage("--user-agent takes one line, without a line break: got '\(userAgent.debugDescription.dropFirst().dropLast())'")
        }
        if let cacert, let problem = CAFile.problem(at: cacert) {
            return LoadError(kind: .io, message: "cannot read --cacert \(cacert): \(problem)", path: cacert)
        }
        return nil
    }

    /// `-i ""` (an unset shell variable): said as `-o ""` is, not "cannot read --input : No such file or directory".
    public static let emptyInput = "-i/--input is empty: give a file ('-' for standard input), or leave the option out"
}
