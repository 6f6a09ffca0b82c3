import Foundation
import Glibc
import Loader
import Testing
import TestSupport

/// A load's delivery to a destination nobody reads ends when the load's task
/// is cancelled (SPEC §6, the library's side of Ctrl-C with `-o -` into a
/// pipe nobody reads): the load is `cancelled`, never claimed delivered. Its
/// copy used to wait in write(2) for good, the cancelled task with it.
@Suite(.timeLimit(.minutes(1))) struct DeliveryCancelTests {
    @Test func cancellingALoadWhoseBodyNobodyReadsEndsItCancelled() async throws {
        let h = try LoaderHarness()
        h.server.route("/big", .ok([UInt8](repeating: 7, count: 300_000), headers: [("Content-Type", "application/octet-stream")]))
        let fifo = h.temp.file("body")
        try #require(mkfifo(fifo, 0o600) == 0)
        // A reader that never reads: the FIFO fills and stays full.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let capacity = Int(fcntl(reader, 1032))   // F_GETPIPE_SZ (not imported)
        try #require(capacity > 0)
        let loader = h.loader { $0.acceptAnyContent = true }
        let url = h.server.url("/big")
        let load = Task { await loader.load(url, deliverTo: .file(fifo)) }
        // Full (the body is larger): its copy has begun and has no room. Bounded by the suite's time limit.
        while Self.queued(reader) < capacity { try await Task.sleep(nanoseconds: 10_000_000) }
        load.cancel()
        // Only for a copy that ignores the cancel (the old code): a reader comes after 30 s, the
        // copy ends, and the expectations below fail, rather than the test waiting for good.
        let lateReader = Task {
            try? await Task.sleep(nanoseconds: 30_000_000_000)
            var scratch = [UInt8](repeating: 0, count: 65_536)
            while !Task.isCancelled {
                _ = scratch.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        let phase = await load.value
        lateReader.cancel()
        _ = await lateReader.value
        #expect(phase.error?.kind == .cancelled, "\(phase)")
        #expect(phase.error?.message.contains("took no more of it") == true, "\(phase)")
    }

    /// Bytes waiting in the pipe (`FIONREAD`).
    static func queued(_ fd: Int32) -> Int {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }
}
