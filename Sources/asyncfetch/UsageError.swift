import Loader

/// A usage problem found after parsing: exit 2 with a one-line reason.
/// A mistake on the command line adds a pointer to `--help`; a problem with
/// the machine (a cache directory or a file that cannot be used, a
/// permission) does not, since the help would not fix it (`environment`).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    let pointsAtHelp: Bool
    init(_ message: String) { description = message; pointsAtHelp = true }
    init(environment message: String) { description = message; pointsAtHelp = false }
    /// A message that names the help to read itself.
    init(namingHelp message: String) { description = message; pointsAtHelp = false }
    /// A run that cannot start: a slip on the command line (`usage`) points at
    /// the help; a file or folder the machine does not let it use does not.
    init(_ error: LoadError) {
        description = error.message
        pointsAtHelp = error.kind == .usage
    }

    /// A fetch run, `cache path`, `rm` or `pull` without a URL.
    /// With URLs piped in (`cat urls.txt | asyncfetch`), which are read only
    /// when asked, it says how to ask.
    static var noURLGiven: UsageError {
        let piped = StandardStreams.inputIsPipeOrFile ? "; standard input is read only with -i -" : ""
        return UsageError("no URL given (name URLs as arguments, or a list with --input FILE)" + piped)
    }

    /// `-i ""` (an unset shell variable): said as `-o ""` is, not "cannot read --input : No such file or directory".
    static var emptyInput: UsageError { UsageError(RunSettings.emptyInput) }
}
