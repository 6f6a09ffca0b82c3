/// A first-in, first-out queue: an array and the index of its head, so that
/// taking the first element costs no shifting. The taken slots are given
/// back when the queue runs empty (capacity kept), or, once at least
/// `compactionThreshold` of them pile up and they are half the array, by one
/// shift of the rest.
///
/// A value type: kept inside a `Locked` state, it is changed in place.
@frozen
public struct FIFO<Element> {
    /// Taken slots before a non-empty queue is compacted.
    public static var compactionThreshold: Int { 1024 }

    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public var count: Int { storage.count - head }
    @inlinable public var isEmpty: Bool { head == storage.count }
    /// The queued elements, first to last.
    @inlinable public var elements: ArraySlice<Element> { storage[head...] }

    @inlinable
    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    /// Appends every element of `elements`. When the queue is empty the array
    /// is taken whole (swapped in, not copied), and `elements` is left with
    /// the queue's old empty storage; otherwise it still holds its elements.
    /// Either way the caller clears it (out of a lock, if it holds one).
    @inlinable
    public mutating func append(contentsOf elements: inout [Element]) {
        if storage.isEmpty {
            head = 0
            swap(&storage, &elements)
        } else {
            storage.append(contentsOf: elements)
        }
    }

    /// The first element (a copy: its slot keeps a reference until the slot is given back).
    @inlinable
    public mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        advance(by: 1)
        return element
    }

    /// The first element, moved out: `placeholder` takes its slot, so the
    /// queue keeps no reference to what the element holds.
    @inlinable
    public mutating func popFirst(leaving placeholder: Element) -> Element? {
        guard head < storage.count else { return nil }
        var element = placeholder
        swap(&element, &storage[head])
        advance(by: 1)
        return element
    }

    /// Up to `limit` elements from the front (none when empty).
    @inlinable
    public mutating func popFirst(upTo limit: Int) -> [Element] {
        let end = Swift.min(storage.count, head + Swift.max(0, limit))
        let taken = Array(storage[head..<end])
        advance(by: end - head)
        return taken
    }

    /// Removes and returns the first element that matches, wherever it is.
    @inlinable
    public mutating func remove(firstWhere matches: (Element) throws -> Bool) rethrows -> Element? {
        guard let index = try storage[head...].firstIndex(where: matches) else { return nil }
        if index == head {
            let element = storage[head]
            advance(by: 1)
            return element
        }
        return storage.remove(at: index)
    }

    @inlinable
    public mutating func removeAll(keepingCapacity: Bool = false) {
        storage.removeAll(keepingCapacity: keepingCapacity)
        head = 0
    }

    @inlinable
    mutating func advance(by taken: Int) {
        head += taken
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= Self.compactionThreshold && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

extension FIFO: Sendable where Element: Sendable {}
