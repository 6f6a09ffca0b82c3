import DiskCache
import Testing

@Suite struct CacheMetadataTests {
    static let sample = CacheMetadata(
        url: "https://example.com/a.png", status: 200, requestTime: 1_700_000_000.25, responseTime: 1_700_000_000.5,
        headers: [.init("ETag", "\"abc\""), .init("Cache-Control", "max-age=60, must-revalidate"),
                  .init("Content-Type", "image/png")],
        varyRequest: [.init("accept", "image/webp")], hasBody: true, bodyLength: 1234,
        bodyMD5: "0123456789abcdef0123456789abcdef", bodyInode: 42, bodyMtimeNs: 1_700_000_000_123_456_789,
        format: "png", width: 64, height: 48)

    @Test func roundTrips() {
        let bytes = Self.sample.encoded()
        let decoded = bytes.withUnsafeBytes { CacheMetadata.decode($0) }
        #expect(decoded == Self.sample)
    }

    @Test func truncatedOrForeignFilesAreRejected() {
        let bytes = Self.sample.encoded()
        for cut in [0, 1, 10, bytes.count / 2, bytes.count - 5] {
            let partial = Array(bytes.prefix(cut))
            #expect(partial.withUnsafeBytes { CacheMetadata.decode($0) } == nil, "a file cut at \(cut) bytes must not parse")
        }
        let foreign = Array("hello\nworld\nend\n".utf8)
        #expect(foreign.withUnsafeBytes { CacheMetadata.decode($0) } == nil)
    }

    @Test func newlinesInValuesCannotForgeFields() {
        var meta = Self.sample
        meta.headers.append(.init("X-Evil", "a\nbody-length 1\nend"))
        let decoded = meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) }
        #expect(decoded?.bodyLength == 1234)
    }
}
