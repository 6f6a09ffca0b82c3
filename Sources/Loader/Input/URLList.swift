/// The URLs of one run: those on the command line first, then the lines of
/// each `--input` in turn, as one lazy sequence for `ImageLoader.batch`
/// (which takes them in chunks: `URLChunkSequence`). With `names`, an input
/// line `URL<TAB>name` gives its URL's file name in `--output-dir` (without,
/// the name is dropped and the URL taken). With
/// `shard` (`--shard K/N`), only the URLs of that shard are handed out.
public struct URLList: URLChunkSequence {
    public typealias Element = String

    public let arguments: [String]
    public let inputs: [InputLines]
    public var names: GivenNames?
    public var shard: Shard?

    /// `arguments` lose the white space around them, as an input line does
    /// (`URLList.trimmed`).
    public init(arguments: [String], inputs: [InputLines], names: GivenNames? = nil, shard: Shard? = nil) {
        self.arguments = arguments.map(Self.trimmed)
        self.inputs = inputs
        self.names = names
        self.shard = shard
    }

    public struct AsyncIterator: URLChunkIterator {
        var arguments: IndexingIterator<[String]>
        var inputs: ArraySlice<InputLines>
        let names: GivenNames?
        let shard: Shard?

        public mutating func next() async -> String? {
            await nextChunk(limit: 1).first
        }

        public mutating func nextChunk(limit: Int) async -> [String] {
            var chunk: [String] = []
            while chunk.count < limit, let url = arguments.next() {
                if shard?.contains(url) ?? true { chunk.append(url) }
            }
            if !chunk.isEmpty { return chunk }
            while let input = inputs.first {
                let lines = await input.nextChunk(limit: limit)
                if lines.isEmpty {
                    inputs = inputs.dropFirst()
                    continue
                }
                let urls = names.map { lines.map($0.split) } ?? lines.map(GivenNames.url(ofLine:))
                guard let shard else { return urls }
                // A chunk emptied by the shard filter is not the end: read on.
                let mine = urls.filter { shard.contains($0) }
                if !mine.isEmpty { return mine }
            }
            return []
        }
    }

    /// A URL argument without the white space around it (space, tab, line
    /// breaks: what `LineSplitter` trims from a line): `" https://x/a.png "`,
    /// pasted or quoted with a space, was "malformed scheme". White space
    /// inside a URL is left for the URL check to refuse.
    public static func trimmed(_ argument: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
        let utf8 = argument.utf8
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return argument }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }), let end = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(argument[start...end])
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(arguments: arguments.makeIterator(), inputs: inputs[...], names: names, shard: shard)
    }

    /// URLs handed out so far, and how many there are in all when known.
    public var progress: (read: Int, total: Int?) {
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
