/// Lines separated by `\n`; the text after the last newline is the final line.
struct LineIterator {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var finished = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { finished }

    mutating func next() -> ByteRun? {
        guard !finished else { return nil }
        let rest = ByteRun(base: UnsafeRawBufferPointer(rebasing: bytes[position...]))
        if let newline = rest.firstIndex(of: 0x0A) {
            position += newline + 1
            return rest.prefix(newline)
        }
        finished = true
        return rest
    }
}
