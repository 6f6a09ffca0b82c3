import Foundation
import Glibc
import TestSupport
import Testing

@Suite("A server the tests start is proven to be the one on its port")
struct ListenerOwnerTests {
    @Test func theListenerOfAPortIsFoundInItsProcess() throws {
        let listener = try FullBacklogListener(fillBacklog: false)
        #expect(ListenerOwner.holds(pid: getpid(), port: listener.port))
        let sleeper = try startProcess("/bin/sleep", ["10"])
        defer { sleeper.sendSignal(SIGKILL); _ = sleeper.wait() }
        #expect(!ListenerOwner.holds(pid: sleeper.pid, port: listener.port))
    }

    /// The race of a free port taken by another server before nginx binds it, made certain:
    /// nginx is handed a port this test listens on. It must start on another port and
    /// serve its own root there (a wait that accepted any listener took the taken port).
    @Test(.timeLimit(.minutes(1))) func nginxWhosePortIsTakenStartsOnAnotherAndServesItsRoot() throws {
        let taken = try FullBacklogListener(fillBacklog: false)
        let root = try TempDirectory()
        chmod(root.path, 0o755)   // nginx's worker runs as nobody when the tests run as root
        try "this nginx\n".write(toFile: root.file("marker.txt"), atomically: true, encoding: .utf8)
        let server = try NginxServer(root: root.path, firstPort: taken.port)
        defer { server.stop() }
        #expect(server.port != taken.port)
        let answer = try curl(["--max-time", "10", server.url("/marker.txt")])
        #expect(answer.status == 0 && answer.stdout == "this nginx\n", "\(answer.stdout) \(answer.stderr)")
    }
}
