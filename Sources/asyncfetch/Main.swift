import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// Entry point: parse, run, and map every outcome to SPEC §3's exit codes
/// (swift-argument-parser's own usage code, 64, becomes 2).
@main
enum Main {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let status: Int32
        let root: ParsableCommand.Type = arguments.first == "cache" ? CacheRoot.self : AsyncFetch.self
        do {
            var command: ParsableCommand
            if root == AsyncFetch.self, let (rest, urls) = URLArguments.extract(arguments),
               var fetch = try AsyncFetch.parseAsRoot(rest + [urls[0]]) as? AsyncFetch {
                fetch.urls = urls
                try fetch.validate()
                command = fetch
            } else {
                command = try root.parseAsRoot(arguments)
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            status = exitStatus(for: error, root: root)
        }
        fflush(nil)
        exit(status)
    }

    static func exitStatus(for error: Error, root: ParsableCommand.Type) -> Int32 {
        switch error {
        case let code as ExitCode:
            return code.rawValue
        case let usage as UsageError:
            Console.error("asyncfetch: \(usage.description)\nSee 'asyncfetch --help'.")
            return 2
        case let failure as RuntimeFailure:
            Console.error("asyncfetch: \(failure.description)")
            return 1
        default:
            let code = root.exitCode(for: error)
            let message = root.fullMessage(for: error)
            if code == .success {
                print(message)
                return 0
            }
            if code == .validationFailure {
                let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
                let reason = firstLine.hasPrefix("Error: ") ? String(firstLine.dropFirst(7)) : firstLine
                Console.error("asyncfetch: \(reason)\nSee 'asyncfetch --help'.")
                return 2
            }
            Console.error("asyncfetch: \(message)")
            return code.rawValue == 0 ? 1 : code.rawValue
        }
    }
}
