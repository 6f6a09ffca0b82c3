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
        try Self.requireStrace()
        let count = 3000
        let (site, nginx, list) = try Self.serve(count: count)
        defer { site.remove() }
        defer { nginx.stop() }

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

    /// A user's own malloc tuning wins over the policy's (`MallocPolicy`), whichever way it is
    /// given: with an mmap threshold of 4 KiB, libcurl's 64 KiB receive buffer, allocated when a
    /// transfer starts and freed when it ends, is a mapping of its own each time, `munmap`ped
    /// about once per transfer; under the policy's 1 MiB threshold it comes from the heap and no block
    /// of 64 KiB–1 MiB is ever unmapped. (glibc maps every block over a fixed threshold, so the
    /// count does not depend on the heap's layout, as trims do.)
    @Test(arguments: [["MALLOC_MMAP_THRESHOLD_": "4096"], ["GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4096"]])
    func aUsersOwnMallocTuningIsKept(_ tuning: [String: String]) throws {
        try Self.requireStrace()
        let count = 20
        let (site, nginx, list) = try Self.serve(count: count)
        defer { site.remove() }
        defer { nginx.stop() }
        let cli = try CLI()
        let trace = cli.cache.path + "/munmap.txt"
        let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=munmap", "-o", trace, CLI.binary, "--input", list],
                                    environment: tuning.merging(["ASYNCFETCH_CACHE_DIR": cli.cacheDir]) { $1 }, timeout: 120)
        #expect(result.status == 0, "\(result.stdout.prefix(600))\(result.stderr)")
        let lengths = Self.munmapLengths(try String(contentsOfFile: trace, encoding: .utf8))
        let buffers = lengths.filter { (64 << 10..<1 << 20).contains($0) }
        // About one per transfer (19 of 20 here: a buffer may still be held when the process ends).
        #expect(buffers.count >= count / 2, "\(tuning) was overridden: \(buffers.count) unmapped blocks of 64 KiB–1 MiB for \(count) transfers (all lengths: \(lengths))")
    }

    static func requireStrace() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else {
            throw TestSupportError.message("strace is not installed (run `make deps`: the Makefile's TEST_PACKAGES)")
        }
    }

    /// `count` PNGs of 12,420 bytes (the bench's bodies are ~12 KB) served by nginx, and the file
    /// listing their URLs.
    static func serve(count: Int) throws -> (site: TempDirectory, nginx: NginxServer, list: String) {
        let site = try TempDirectory(prefix: "asyncfetch-heaptrim")
        do {
            let body = png(size: 12_420)
            for i in 0..<count { try site.write("www/\(i).png", body) }
            // nginx's worker runs as another user.
            _ = chmod(site.path, 0o755)
            _ = chmod(site.file("www"), 0o755)
            let nginx = try NginxServer(root: site.file("www"))
            let list = try site.write("urls.txt", Array((0..<count).map { nginx.url("/\($0).png") + "\n" }.joined().utf8))
            return (site, nginx, list)
        } catch {
            site.remove()
            throw error
        }
    }

    /// The lengths of the `munmap` calls in an strace output: "PID munmap(0x7f…, 69632) = 0",
    /// or "PID munmap(0x7f…, 69632 <unfinished ...>" when another thread's call came between.
    static func munmapLengths(_ trace: String) -> [Int] {
        trace.split(separator: "\n").compactMap { line in
            guard let call = line.range(of: "munmap(") else { return nil }
            let arguments = line[call.upperBound...].prefix { $0 != ")" && $0 != "<" }.split(separator: ",")
            guard arguments.count == 2 else { return nil }
            return Int(arguments[1].trimmingCharacters(in: .whitespaces))
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
