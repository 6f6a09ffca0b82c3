import DiskCache
import Foundation
import Synchronization
import Testing
import TestSupport

/// `cache list` (or `path`, `stats`, `rm` …) of a cache directory that does
/// not exist yet learns whether it could be made (`CacheDirectory.isAbsent`).
/// It made the first missing folder of the path and removed it again, so a
/// first run creating the same directory at that moment either found the
/// folder it had just seen (`EEXIST`) gone at the next step (`ENOENT`) and
/// exited 2, "cannot create cache directory", or took the probe's folder as
/// its cache directory and lost it to the probe's `rmdir` right after. The
/// probe now makes a folder of a name of its own beside them.
@Suite struct CacheDirectoryRaceTests {
    @Test func aFirstRunBesideAProbeOfTheSameMissingDirectoryCreatesIt() throws {
        let temp = try TempDirectory()
        var failures: [String] = []
        let rounds = 150
        for round in 0..<rounds {
            let path = temp.path + "/\(round)/a/b/cache"
            let stop = StopFlag()
            let finished = DispatchSemaphore(value: 0)
            for _ in 0..<2 {
                Thread.detachNewThread {
                    // Readers' probes, as often as they can run: each makes `…/\(round)` (or the
                    // next missing folder) and removes it again.
                    while !stop.value.load(ordering: .relaxed) { _ = CacheDirectory.isAbsent(path) }
                    finished.signal()
                }
            }
            usleep(200)
            var made = true
            do {
                try CacheDirectory.prepare(path)
            } catch {
                failures.append(error.message)
                made = false
            }
            stop.value.store(true, ordering: .relaxed)
            finished.wait()
            finished.wait()
            var info = stat()
            if made { #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o700) }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(rounds) first runs failed, e.g. \(failures.first ?? "")")
    }
}

private final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A cache directory behind a symbolic link to nothing (`~/.cache` on a drive
/// that is not mounted) is not "absent": `cache list`, `stats`, `verify`,
/// `clear`, `prune` and `rm` must say it cannot be used (exit 2), as a run
/// does, not report an empty cache. `stat` gives ENOENT for it, and the
/// probe of b7addaf then made a folder beside it and said "absent".
@Suite struct CacheDirectoryDanglingLinkTests {
    @Test func aDirectoryBehindALinkToNothingIsNotAbsent() throws {
        let temp = try TempDirectory()
        let link = temp.path + "/cache-link"
        #expect(symlink(temp.path + "/not-mounted/asyncfetch", link) == 0)
        #expect(!CacheDirectory.isAbsent(link))
        #expect(!CacheDirectory.isAbsent(link + "/asyncfetch"))
        // A plain missing directory still is.
        #expect(CacheDirectory.isAbsent(temp.path + "/missing/asyncfetch"))
        #expect(throws: (any Error).self) { try CacheDirectory.prepare(link + "/asyncfetch") }
    }
}
