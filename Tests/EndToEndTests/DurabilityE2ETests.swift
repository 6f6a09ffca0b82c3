import Foundation
import Testing
import TestSupport

/// Durability costs one flush per run at most (SPEC §4): no `fsync` per
/// entry, and `--sync` is one `syncfs` of the cache's file system.
@Suite struct DurabilityE2ETests {
    func flushCalls(_ cli: CLI, _ arguments: [String]) throws -> (ProcessResult, [String]) {
        let trace = cli.cache.path + "/trace-\(UInt32.random(in: 0...UInt32.max))"
        let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync,syncfs,sync,sync_file_range",
                                                        CLI.binary] + arguments,
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        let text = (try? String(contentsOfFile: trace, encoding: .utf8)) ?? ""
        let calls = text.split(separator: "\n").compactMap { line -> String? in
            // "PID  name(args) = result"
            let words = line.split(separator: " ", maxSplits: 1)
            guard words.count == 2, let call = words[1].drop(while: { $0 == " " }).split(separator: "(").first else { return nil }
            return String(call)
        }.filter { !$0.hasPrefix("+++") && !$0.hasPrefix("---") && !$0.contains("syscall_") }   // strace 6.1 names getxattrat so (also "<... syscall_0x1d0 resumed>")
        return (result, calls)
    }

    @Test func entriesAreNotSyncedOneByOneAndSyncFlushesOnce() throws {
        let (server, cli) = try FixtureSite.start()
        let urls = CacheE2ETests.images.map { server.url($0) }
        let (plain, plainCalls) = try flushCalls(cli, urls)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plainCalls.isEmpty, "no flush without --sync: \(plainCalls)")
        let (synced, syncedCalls) = try flushCalls(cli, ["--sync", "--refresh"] + urls)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(syncedCalls == ["syncfs"], "one syncfs for the run: \(syncedCalls)")
    }
}
