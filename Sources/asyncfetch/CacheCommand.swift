import ArgumentParser
import DiskCache
import enum Loader.Console
import struct Loader.CacheURLLine
import Support
#if canImport(Glibc)
import Glibc
#endif

/// `asyncfetch cache …`: look after the cache (SPEC §7). Every subcommand
/// takes `--cache-dir`; an unusable directory is a usage error (exit 2).
/// Only the cache's own files are ever touched (`<md5>`, `<md5>.meta`, and
/// its temporary files in `.tmp`); anything else in the directory stays.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the cache.",
        discussion: """
            Only the cache's own files are touched: <md5>, <md5>.meta and its temporary \
            files in .tmp. Exit status: 0 done, 1 something was not found or could not \
            be removed, 2 usage error (including a cache directory that cannot be used).
            """,
        subcommands: [Dir.self, Path.self, List.self, Stats.self, Verify.self, Prune.self, Remove.self, Clear.self, Pull.self])

    /// `asyncfetch cache` with no subcommand: a usage error (SPEC §3: exit 2),
    /// not help with exit 0, so a script that lost its subcommand fails
    /// (`asyncfetch cache --help` is the help).
    func run() async throws {
        throw UsageError(namingHelp: "'cache' needs a subcommand: dir, path, list, stats, verify, prune, rm, clear or pull "
                         + "('asyncfetch cache --help' says what each does)")
    }

    struct Dir: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the cache directory (creating it if needed).")
        @OptionGroup var cache: CacheOptions

        func run() throws {
            print(try cache.openStore().directory)
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each URL's body path, one line per URL in order ('-' when there is none: not cached, or a remembered error status; exit 1 if any).")
        @OptionGroup var cache: CacheOptions
        @OptionGroup var list: CacheURLInput

        func run() throws {
            let urls = try list.all()
            let store = try cache.openStoreIfPresent().store   // no directory: nothing cached
            var missing = false
            for url in urls {
                let line = CacheURLLine.path(of: url, in: store)
                if let complaint = line.complaint { Console.error(complaint) }
                missing = missing || line.isMissing
                print(line.pathLine(json: list.json))
            }
            if missing { throw ExitCode(1) }
        }
    }
}
