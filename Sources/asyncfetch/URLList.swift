/// The URLs of one run: those on the command line first, then the lines of
/// `--input`, as one lazy sequence for `ImageLoader.batch`.
struct URLList: AsyncSequence, Sendable {
    typealias Element = String

    let arguments: [String]
    let input: InputLines?

    struct AsyncIterator: AsyncIteratorProtocol {
        var arguments: IndexingIterator<[String]>
        let input: InputLines?

        mutating func next() async -> String? {
            if let url = arguments.next() { return url }
            return await input?.next()
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
