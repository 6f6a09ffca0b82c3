import Foundation
import TestSupport

/// The set-up most end-to-end suites share: a scripted server on 127.0.0.1
/// serving `Fixtures/`, and the CLI with a private cache directory.
enum FixtureSite {
    static func start() throws -> (server: ScriptedServer, cli: CLI) {
        (try server(), try CLI())
    }

    /// A scripted server serving `Fixtures/` (routes may be added).
    static func server() throws -> ScriptedServer {
        let server = try ScriptedServer()
        server.serveDirectory(Paths.fixtures)
        return server
    }

    /// `Fixtures/images/red-64x48.png`.
    static let png = bytes("images/red-64x48.png")

    /// A file of `Fixtures/` (empty when it cannot be read: the test then fails on it).
    static func bytes(_ name: String) -> [UInt8] {
        (try? Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + name)))) ?? []
    }
}
