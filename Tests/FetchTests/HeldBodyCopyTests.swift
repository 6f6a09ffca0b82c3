import CCurl
import Foundation
import Support
import Testing
import TestSupport
@testable import Fetch

/// A held body is copied out of libcurl's buffer with stores past the cache
/// (`ccurl_copy_past_cache`, `CurlTransfer.store`): it must be memcpy's copy
/// for every length and alignment, write nothing outside its destination,
/// and bring every body a worker is handed whole, whatever its size.
@Suite(.timeLimit(.minutes(3))) struct HeldBodyCopyTests {
    /// Every length 0–1,100 (both sides of the 256-byte and 64-byte steps), a cold URL's 12,420 bytes and the
    /// largest held body, at every destination offset 0–15 (the 16-byte alignment the stores need) and three
    /// source offsets: the bytes copied, and the guard bytes on both sides untouched.
    @Test func theCopyIsMemcpysForEveryLengthAndAlignment() {
        let source = (0..<(Defaults.bufferedBodyLimit + 64)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ 1) }
        let lengths = Array(0...1_100) + [4_095, 4_096, 4_097, 12_420, Defaults.bufferedBodyLimit - 1, Defaults.bufferedBodyLimit]
        var mismatches: [String] = []
        source.withUnsafeBytes { from in
            for length in lengths {
                let destinationOffsets = length <= 1_100 ? Array(0..<16) : [0, 1, 8, 15]
                let sourceOffsets = [0, 3, 16]
                for sourceOffset in sourceOffsets {
                    for offset in destinationOffsets {
                        var room = [UInt8](repeating: 0xA5, count: length + 96)
                        room.withUnsafeMutableBytes { to in
                            ccurl_copy_past_cache(to.baseAddress! + 32 + offset, from.baseAddress! + sourceOffset, length)
                        }
                        let copied = Array(room[(32 + offset)..<(32 + offset + length)])
                        let outside = room[..<(32 + offset)] + room[(32 + offset + length)...]
                        if copied != Array(source[sourceOffset..<(sourceOffset + length)]) || outside.contains(where: { $0 != 0xA5 }) {
                            mismatches.append("length \(length), destination +\(offset), source +\(sourceOffset)")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) copies differ, first: \(mismatches.prefix(5))")
    }

    /// Bodies of every size class the loop holds (one byte up to the held limit, and past it, where the body
    /// streams) come whole into their sinks, each its own bytes, on one loop and two workers.
    @Test func everyHeldBodyArrivesWhole() async throws {
        let sizes = [1, 63, 255, 256, 257, 1_000, 4_097, 12_420, 16_385, 40_000, Defaults.bufferedBodyLimit - 1,
                     Defaults.bufferedBodyLimit, Defaults.bufferedBodyLimit + 1, 200_000]
        let server = try ScriptedServer()
        func body(_ index: Int) -> [UInt8] {
            (0..<sizes[index]).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 13 &+ $0 >> 9) }
        }
        for index in sizes.indices { server.route("/\(index).bin", .ok(body(index))) }
        var configuration = FetchConfiguration()
        configuration.transferLoops = 1
        configuration.completionWorkers = 2
        let client = FetchClient(configuration: configuration)
        let temp = try TempDirectory(prefix: "asyncfetch-held")
        for round in 0..<3 {
            for index in sizes.indices {
                let sink = try FileSink(path: temp.file("\(round)-\(index)"))
                defer { sink.remove() }
                let (completed, calls) = await FetchStartTests.start(client, server.url("/\(index).bin"), into: sink)
                #expect(try completed.result.get().status == 200, "body \(index)")
                #expect(calls == 1)
                try sink.close()
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sink.path)))
                #expect(written == body(index), "body \(index) of \(sizes[index]) bytes, round \(round)")
            }
        }
    }
}
