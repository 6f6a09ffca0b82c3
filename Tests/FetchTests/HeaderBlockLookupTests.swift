import Fetch
import Testing

/// A 304's `ETag` is read in the raw header block on the transfer loop
/// (`HTTPHeaders.withFirstValue`): it must be, byte for byte, what the
/// parsed fields' look-up gives, whatever the block holds.
@Suite struct HeaderBlockLookupTests {
    /// The bytes `withFirstValue` hands over, or nil.
    private func lookedUp(_ block: [UInt8]) -> [UInt8]? {
        HTTPHeaders.withFirstValue(of: "ETag", in: block) { $0.map(Array.init) }
    }

    private func parsed(_ block: [UInt8]) -> [UInt8]? {
        HTTPHeaders(parsing: block)["ETag"].map { Array($0.utf8) }
    }

    @Test func readsTheFirstETagAsTheParsedFields() {
        let block = Array("HTTP/1.1 304 Not Modified\r\nServer: nginx\r\netag:  W/\"v1\" \r\nETag: \"v2\"\r\n\r\n".utf8)
        #expect(lookedUp(block) == Array("W/\"v1\"".utf8))
        #expect(lookedUp(Array("HTTP/2 304\n\n".utf8)) == nil)
        #expect(lookedUp([]) == nil)
        // A folded value, and a value that is not UTF-8 (repaired by the parse), read as the parse reads them.
        let folded = Array("HTTP/1.1 304 OK\r\nETag: \"a\r\n  b\"\r\n\r\n".utf8)
        #expect(lookedUp(folded) == Array("\"a b\"".utf8))
        let invalid = Array("HTTP/1.1 304 OK\r\nETag: \"".utf8) + [0xFF, 0x22, 0x0D, 0x0A]
        #expect(lookedUp(invalid) == parsed(invalid))
    }

    @Test func randomBlocksReadAsTheParsedFields() {
        let pieces: [[UInt8]] = [
            "HTTP/1.1 304 Not Modified", "HTTP/1.1 200 OK: fine", "ETag: \"x\"", "etag:\"y\" ", "ETAG:", "E-Tag: \"z\"",
            "ETags: \"w\"", " ETag: \"lead\"", "\t more", ": \"noname\"", "no colon", "", "Date: Fri, 27 Nov 2026 17:00:00 GMT",
            "ETag: W/\"\u{e9}t\u{e9}\"", "Server: nginx/1.22.1",
        ].map { Array($0.utf8) } + [Array("ETag: \"".utf8) + [0xC3, 0x22], [0x45, 0x54, 0x61, 0x67, 0x3A, 0x80]]
        let ends: [[UInt8]] = [[0x0D, 0x0A], [0x0A], [0x0D]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var block: [UInt8] = []
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                block += pieces.randomElement(using: &generator)! + ends.randomElement(using: &generator)!
            }
            if Bool.random(using: &generator) { block += pieces.randomElement(using: &generator)! }
            #expect(lookedUp(block) == parsed(block), "\(String(decoding: block, as: UTF8.self).debugDescription)")
        }
    }
}
