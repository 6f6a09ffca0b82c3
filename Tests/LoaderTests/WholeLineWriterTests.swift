import Foundation
import Glibc
@testable import Loader
import Testing

/// `WholeLineWriter`: a pipe's reader only ever gets whole lines, even from
/// a writer that gives up because nobody reads.
@Suite(.timeLimit(.minutes(3))) struct WholeLineWriterTests {
    /// A pipe: (read end, non-blocking; write end).
    static func pipeEnds() throws -> (reader: Int32, writer: Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        try #require(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        return (ends[0], ends[1])
    }

    /// Everything waiting in the non-blocking `fd`.
    static func drain(_ fd: Int32) -> [UInt8] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return all }
            all += chunk[..<n]
        }
    }

    /// Lines of uneven lengths (a few longer than `PIPE_BUF`, one longer
    /// than a default pipe: 64 KiB), `count` of them.
    static func lines(_ count: Int) -> [UInt8] {
        var text = ""
        for index in 0..<count {
            let long = index == 1500 ? String(repeating: "z", count: 100_000)
                : index % 50 == 7 ? String(repeating: "y", count: 5000) : ""
            text += "{\"n\":\(index),\"pad\":\"\(String(repeating: "x", count: index % 97))\(long)\"}\n"
        }
        return Array(text.utf8)
    }

    @Test func aFullPipeGetsWholeLinesAndTheRestIsDropped() throws {
        let (reader, writer) = try Self.pipeEnds()
        defer { close(reader); close(writer) }
        var output = WholeLineWriter(fd: writer)
        #expect(output.isPipe)
        let bytes = Self.lines(3000)   // ~ 400 KB: much more than the pipe holds
        // Never waits although nobody reads: returns once the pipe is full.
        let error = bytes.withUnsafeBytes { output.write($0, mayWait: false) }
        #expect(error == nil)
        let got = Self.drain(reader)
        #expect(got.count > 32 * 1024 && got.count < bytes.count, "\(got.count) bytes")
        #expect(got.last == 0x0A, "ends at the end of a line")
        #expect(Array(bytes.prefix(got.count)) == got, "the first lines, in order")
    }

    @Test func withAReaderEverythingArrivesInOrder() async throws {
        let (reader, writer) = try Self.pipeEnds()
        defer { close(reader) }
        let bytes = Self.lines(3000)
        let sent = Task.detached {
            var output = WholeLineWriter(fd: writer)
            let error = bytes.withUnsafeBytes { output.write($0) }
            close(writer)
            return error
        }
        var got: [UInt8] = []
        while got.count < bytes.count {
            let more = Self.drain(reader)
            if more.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
            got += more
        }
        #expect(await sent.value == nil)
        #expect(got == bytes)
    }

    /// Rule 2 leaves one page of an empty pipe free: the machine's page, not
    /// 4 KiB (a 64 KiB-page arm64 kernel's default pipe is 16 such pages).
    @Test func anEmptyPipeKeepsOneOfTheMachinesPagesFree() {
        #expect(WholeLineWriter.pageSize == sysconf(Int32(_SC_PAGESIZE)))
        #expect(WholeLineWriter.emptyPipeLimit(capacity: 16 * 65536, pageSize: 65536) == 15 * 65536)
        #expect(WholeLineWriter.emptyPipeLimit(capacity: 65536, pageSize: 4096) == 61440)
        #expect(WholeLineWriter.emptyPipeLimit(capacity: 65536, pageSize: 65536) == WholeLineWriter.atomicSize)
    }

    @Test func filesGetTheBufferAsItIs() throws {
        var output = WholeLineWriter(fd: open("/dev/null", O_WRONLY))
        defer { close(output.fd) }
        #expect(!output.isPipe)
        #expect(Self.lines(10).withUnsafeBytes { output.write($0, mayWait: false) } == nil)
        var full = WholeLineWriter(fd: open("/dev/full", O_WRONLY))
        defer { close(full.fd) }
        #expect(Self.lines(10).withUnsafeBytes { full.write($0) } == ENOSPC)
    }
}
