/// A URL list that hands out, in one call, the URLs it already holds.
///
/// A batch takes its URLs in chunks so that it can look up a chunk's cache
/// answers on two threads and queue their events under one lock. A chunk
/// never waits for more than its first URL: a slow pipe's URLs are still
/// taken up as they come.
public protocol URLChunkSequence: AsyncSequence, Sendable where Element == String, AsyncIterator: URLChunkIterator {}

public protocol URLChunkIterator: AsyncIteratorProtocol where Element == String {
    /// Between 1 and `limit` URLs, waiting only for the first; empty at the end.
    mutating func nextChunk(limit: Int) async throws -> [String]
}

/// Any URL sequence, one URL per chunk (it cannot tell what is available
/// without waiting).
struct SingleURLChunks<Base: AsyncIteratorProtocol>: URLChunkIterator where Base.Element == String {
    var base: Base

    mutating func next() async throws -> String? { try await base.next() }

    mutating func nextChunk(limit: Int) async throws -> [String] {
        guard let url = try await base.next() else { return [] }
        return [url]
    }
}

extension ArraySequence: URLChunkSequence where Element == String {}

extension ArraySequence.AsyncIterator: URLChunkIterator where Element == String {
    public mutating func nextChunk(limit: Int) async -> [String] {
        var chunk: [String] = []
        while chunk.count < limit, let url = base.next() { chunk.append(url) }
        return chunk
    }
}
