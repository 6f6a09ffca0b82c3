import DiskCache
@testable import Loader
import Testing

/// The batch's set of seen URLs: a URL is dropped as a duplicate only when an
/// earlier one has the same key, however many distinct URLs came before.
@Suite struct DigestSetTests {
    @Test func everyDistinctDigestIsNewOnceAndKnownAfter() {
        var set = DigestSet()
        let digests = (0..<60_000).map { MD5.digest("http://host\($0 % 97).test/image/\($0).png") }
        #expect(digests.allSatisfy { set.insert($0) }, "a distinct URL taken for a duplicate")
        #expect(set.count == 60_000)
        #expect(digests.allSatisfy { set.contains($0) && !set.insert($0) }, "a duplicate taken for a new URL")
        #expect(!set.contains(MD5.digest("http://host0.test/image/60000.png")))
        #expect(set.count == 60_000)
    }

    /// The digest that marks an empty slot is a member like any other.
    @Test func theEmptyMarkerIsAnOrdinaryMember() {
        var set = DigestSet()
        let marker = MD5.digest("")
        #expect(!set.contains(marker))
        #expect(set.insert(marker) && !set.insert(marker) && set.contains(marker))
        #expect(set.count == 1)
    }
}
