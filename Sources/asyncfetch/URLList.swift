import Loader

/// The URLs of one run: those on the command line first, then the lines of
/// `--input`, as one lazy sequence for `ImageLoader.batch` (which takes them
/// in chunks: `URLChunkSequence`).
struct URLList: URLChunkSequence {
    typealias Element = String

    let arguments: [String]
    let input: InputLines?
    /// `--shard K/N`: only the URLs of this shard are handed out.
    var shard: Shard?

    init(arguments: [String], input: InputLines?, shard: Shard? = nil) {
        self.arguments = arguments
        self.input = input
        self.shard = shard
    }

    struct AsyncIterator: URLChunkIterator {
        var arguments: IndexingIterator<[String]>
        let input: InputLines?
        let shard: Shard?

        mutating func next() async -> String? {
            while true {
                guard let url = arguments.next() else { break }
                if shard?.contains(url) ?? true { return url }
            }
            while let url = await input?.next() {
                if shard?.contains(url) ?? true { return url }
            }
            return nil
        }

        mutating func nextChunk(limit: Int) async -> [String] {
            var chunk: [String] = []
            while chunk.count < limit, let url = arguments.next() {
                if shard?.contains(url) ?? true { chunk.append(url) }
            }
            if !chunk.isEmpty { return chunk }
            while true {
                // A chunk emptied by the shard filter is not the end: read on.
                let lines = await input?.nextChunk(limit: limit) ?? []
                if lines.isEmpty { return [] }
                guard let shard else { return lines }
                let mine = lines.filter { shard.contains($0) }
                if !mine.isEmpty { return mine }
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(arguments: arguments.makeIterator(), input: input, shard: shard)
    }

    /// URLs handed out so far, and how many there are in all when known.
    var progress: (read: Int, total: Int?) {
        guard let input else { return (arguments.count, arguments.count) }
        let lines = input.progress
        return (arguments.count + lines.read, lines.total.map { arguments.count + $0 })
    }
}
