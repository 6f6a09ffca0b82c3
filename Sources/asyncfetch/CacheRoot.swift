import ArgumentParser

/// Parses `asyncfetch cache …`. A command with positional URLs cannot also
/// route subcommands, so `Main` sends arguments starting with `cache` here.
struct CacheRoot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "asyncfetch", subcommands: [CacheCommand.self])
}
