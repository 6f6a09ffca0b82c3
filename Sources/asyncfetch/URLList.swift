import Loader

/// The URLs of one run: those on the command line first, then the lines of
/// each `--input` in turn, as one lazy sequence for `ImageLoader.batch`
/// (which takes them in chunks: `URLChunkSequence`). With `names`, an input
/// line `URL<TAB>name` gives its URL's file name in `--output-dir`.
struct URLList: URLChunkSequence {
    typealias Element = String

    let arguments: [String]
    let inputs: [InputLines]
    var names: GivenNames?

    init(arguments: [String], inputs: [InputLines], names: GivenNames? = nil) {
        self.arguments = arguments
        self.inputs = inputs
        self.names = names
    }

    struct AsyncIterator: URLChunkIterator {
        var arguments: IndexingIterator<[String]>
        var inputs: ArraySlice<InputLines>
        let names: GivenNames?

        mutating func next() async -> String? {
            await nextChunk(limit: 1).first
        }

        mutating func nextChunk(limit: Int) async -> [String] {
            var chunk: [String] = []
            while chunk.count < limit, let url = arguments.next() { chunk.append(url) }
            if !chunk.isEmpty { return chunk }
            while let input = inputs.first {
                let lines = await input.nextChunk(limit: limit)
                if lines.isEmpty {
                    inputs = inputs.dropFirst()
                    continue
                }
                guard let names else { return lines }
                return lines.map(names.split)
            }
            return []
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(arguments: arguments.makeIterator(), inputs: inputs[...], names: names)
    }

    /// URLs handed out so far, and how many there are in all when known.
    var progress: (read: Int, total: Int?) {
        var read = arguments.count
        var total: Int? = arguments.count
        for input in inputs {
            let lines = input.progress
            read += lines.read
            total = total.flatMap { sum in lines.total.map { sum + $0 } }
        }
        return (read, total)
    }
}
