/// An array as an `AsyncSequence`.
public struct ArraySequence<Element: Sendable>: AsyncSequence, Sendable {
    let elements: [Element]
    public init(_ elements: [Element]) { self.elements = elements }
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: IndexingIterator<[Element]>
        public mutating func next() async -> Element? { base.next() }
    }
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: elements.makeIterator()) }
}
