import Foundation
import Glibc
import Testing
import TestSupport

/// A cold batch keeps its heap: no free memory is given back to the kernel
/// in the middle of a run, to be faulted in again by the next transfer
/// (`MallocPolicy`; bench/history/cold.md "Session 21: system calls per cold URL").
/// With glibc's default thresholds a cold run of 3,000 URLs under strace gave
/// back the top of the transfer loop's heap dozens of times (`madvise(MADV_DONTNEED)`).
@Suite struct HeapTrimE2ETests {
    @Test func aColdBatchGivesNoHeapMemoryBack() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            throw TestSupportError.message("strace is not installed (run `make deps`: the Makefile's TEST_PACKAGES)")
        }
        let site = try TempDirectory(prefix: "asyncfetch-heaptrim")
        defer { site.remove() }
        let count = 3000
        let body = Self.png(size: 12_420)
        for i in 0..<count { try site.write("www/\(i).png", body) }
        // nginx's worker runs as another user.
        _ = chmod(site.path, 0o755)
        _ = chmod(site.file("www"), 0o755)
        let nginx = try NginxServer(root: site.file("www"))
        defer { nginx.stop() }
        let list = try site.write("urls.txt", Array((0..<count).map { nginx.url("/\($0).png") + "\n" }.joined().utf8))

        // Whether a run trims depends on how its transfers interleave: two cold runs, each into a
        // new cache (with glibc's defaults one run in four or so of this size did not trim).
        for _ in 0..<2 {
            let cli = try CLI()
            let trace = cli.cache.path + "/madvise.txt"
            let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=madvise", "-o", trace, CLI.binary,
                                                            "--jobs", "32", "--jobs-per-host", "32", "--input", list],
                                        environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 120)
            #expect(result.status == 0, "\(result.stdout.prefix(600))\(result.stderr)")
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            // "PID madvise(0x7f…, LENGTH, MADV_DONTNEED) = 0". A thread's stack given back when
            // it ends (glibc, ~8 MiB) is not the heap's: only lengths under 1 MiB count.
            let trims = lines.filter { line in
                guard line.contains("MADV_DONTNEED"), let length = line.split(separator: ",").dropFirst().first
                    .flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else { return false }
                return length < 1 << 20
            }
            #expect(trims.isEmpty, "\(trims.count) heap trims: \(trims.prefix(5))")
        }
    }

    /// `Fixtures/images/red-64x48.png` grown to `size` bytes by a `tEXt` chunk before its `IEND`
    /// (the bench's bodies are ~12 KB).
    static func png(size: Int) -> [UInt8] {
        let base = FixtureSite.png
        let text = Array("Comment".utf8) + [0] + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - base.count - 20))
        var chunk = Array("tEXt".utf8) + text
        var crc: UInt32 = 0xffff_ffff
        for byte in chunk {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xedb8_8320 & (0 &- (crc & 1))) }
        }
        crc = ~crc
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        chunk = bigEndian(UInt32(text.count)) + chunk + bigEndian(crc)
        return Array(base.dropLast(12)) + chunk + Array(base.suffix(12))
    }
}
