import Loader

/// The URLs of one run: those on the command line first, then the lines of
/// `--input`, as one lazy sequence for `ImageLoader.batch` (which takes them
/// in chunks: `URLChunkSequence`).
struct URLList: URLChunkSequence {
    typealias Element = String

    let arguments: [String]
    let input: InputLines?

    struct AsyncIterator: URLChunkIterator {
        var arguments: IndexingIterator<[String]>
        let input: InputLines?

        mutating func next() async -> String? {
            if let url = arguments.next() { return url }
            return await input?.next()
        }

        mutating func nextChunk(limit: Int) async -> [String] {
            var chunk: [String] = []
            while chunk.count < limit, let url = arguments.next() { chunk.append(url) }
            if !chunk.isEmpty { return chunk }
            return await input?.nextChunk(limit: limit) ?? []
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(arguments: arguments.makeIterator(), input: input)
    }

    /// URLs handed out so far, and how many there are in all when known.
    var progress: (read: Int, total: Int?) {
        guard let input else { return (arguments.count, arguments.count) }
        let lines = input.progress
        return (arguments.count + lines.read, lines.total.map { arguments.count + $0 })
    }
}
