import Fetch
#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into the URL lines of an `--input` list: whitespace
/// trimmed, blank lines and `#` comments skipped, a leading UTF-8 byte order
/// mark ignored. A line longer than `maxLineBytes` is not kept whole: it is
/// reported as `.overlong` so memory stays bounded whatever the input.
public struct LineSplitter {
    public enum Line {
        case text(UnsafeBufferPointer<UInt8>)
        case overlong(lineNumber: Int)
    }

    public let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var overlong = false
    public private(set) var lineNumber = 0

    public init(maxLineBytes: Int = Defaults.inputMaxLineBytes) { self.maxLineBytes = maxLineBytes }

    /// Feeds one chunk; `emit` gets every URL line completed by it.
    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ emit: (Line) -> Void) {
        guard let base = chunk.baseAddress else { return }
        var start = 0
        while start < chunk.count, let found = memchr(base + start, 0x0A, chunk.count - start) {
            let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            finishLine(UnsafeBufferPointer(rebasing: chunk[start..<index]), emit)
            start = index + 1
        }
        let rest = chunk.count - start
        guard rest > 0 else { return }
        if overlong || partial.count + rest > maxLineBytes {
            overlong = true
            partial.removeAll()
        } else {
            partial.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start...]))
        }
    }

    /// Ends the stream: a last line without a newline still counts.
    public mutating func finish(_ emit: (Line) -> Void) {
        if !partial.isEmpty || overlong {
            finishLine(UnsafeBufferPointer(start: nil, count: 0), emit)
        }
    }

    private mutating func finishLine(_ tail: UnsafeBufferPointer<UInt8>, _ emit: (Line) -> Void) {
        lineNumber += 1
        defer {
            partial.removeAll(keepingCapacity: partial.capacity <= Defaults.inputKeptLineBytes)
            overlong = false
        }
        if overlong || partial.count + tail.count > maxLineBytes {
            emit(.overlong(lineNumber: lineNumber))
            return
        }
        if partial.isEmpty {
            emitTrimmed(tail, emit)
        } else {
            partial.append(contentsOf: tail)
            partial.withUnsafeBufferPointer { emitTrimmed($0, emit) }
        }
    }

    private func emitTrimmed(_ line: UnsafeBufferPointer<UInt8>, _ emit: (Line) -> Void) {
        var lower = 0
        var upper = line.count
        if lineNumber == 1 && upper >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF { lower = 3 }
        while lower < upper && Self.isSpace(line[lower]) { lower += 1 }
        while upper > lower && Self.isSpace(line[upper - 1]) { upper -= 1 }
        guard lower < upper, line[lower] != UInt8(ascii: "#") else { return }
        emit(.text(UnsafeBufferPointer(rebasing: line[lower..<upper])))
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }
}

extension LineSplitter {
    /// Splits all that `fd` holds, with blocking reads of
    /// `Defaults.inputChunkBytes`: from `offset` with `pread` (the
    /// descriptor's own offset untouched), else from where the descriptor
    /// stands. Returns the `errno` of a failed read, or nil at the end.
    public static func readAll(_ fd: Int32, from offset: off_t? = nil, maxLineBytes: Int = Defaults.inputMaxLineBytes,
                               _ emit: (Line) -> Void) -> Int32? {
        var splitter = LineSplitter(maxLineBytes: maxLineBytes)
        var position = offset ?? 0
        var chunk = [UInt8](repeating: 0, count: Defaults.inputChunkBytes)
        while true {
            let n = chunk.withUnsafeMutableBytes { buffer in
                offset == nil ? read(fd, buffer.baseAddress, buffer.count) : pread(fd, buffer.baseAddress, buffer.count, position)
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return errno }
            if n == 0 { break }
            position += off_t(n)
            chunk.withUnsafeBufferPointer { splitter.feed(UnsafeBufferPointer(rebasing: $0[0..<n]), emit) }
        }
        splitter.finish(emit)
        return nil
    }
}
