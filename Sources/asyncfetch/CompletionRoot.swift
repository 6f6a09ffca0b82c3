import ArgumentParser

/// The root for `--generate-completion-script`: the options and
/// subcommands of `asyncfetch` without the positional URLs, which would make
/// the generated scripts take `cache` for a URL and never complete its
/// subcommands.
///
/// `--version` is an option of this root only: a `version:` in the
/// configuration would be offered to every `cache` subcommand, which rejects it.
struct CompletionRoot: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "asyncfetch", subcommands: [CacheCommand.self])

    @OptionGroup var options: FetchOptions

    @Flag(help: "Show the version.") var version = false
}
