import ArgumentParser
import Loader

/// The URLs of `cache path` and `cache rm`: arguments, then the lines of each
/// `-i FILE` (as `--input` reads them: blank lines and `#` comments skipped,
/// the name of a `URL<TAB>name` line dropped),
/// and `--json`. Each URL gets one line of output, in order, so a script can
/// pair the lines with what it asked.
struct CacheURLInput: ParsableArguments {
    @Argument(help: "URLs.") var urls: [String] = []

    @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
        "Also read URLs from this file, one per line ('-' for stdin). Repeatable. (default: none)", valueName: "file"),
        completion: .file())
    var input: [String] = []

    @Flag(help: "Print one JSON object per URL.")
    var json = false

    /// Every URL, arguments first. None at all is a usage error, said here
    /// rather than in `validate()`: swift-argument-parser validates before it
    /// reports an unknown option, and `cache rm --bogus` must say that.
    func all() throws -> [String] {
        if urls.isEmpty && input.isEmpty { throw UsageError.noURLGiven }
        if input.contains("") { throw UsageError.emptyInput }
        do {
            return try URLList.readAll(arguments: urls, inputs: input)   // as `asyncfetch URL` and an input line read them
        } catch {
            throw UsageError(environment: error.message)
        }
    }
}
