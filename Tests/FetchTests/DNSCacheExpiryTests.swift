@testable import Fetch
import Testing

/// When a transfer loop's DNS cache drops old answers (no clock: times are given).
@Suite struct DNSCacheExpiryTests {
    @Test func transfersSkipThePruneUntilALifetimeHasPassed() {
        let expiry = DNSCacheExpiry(lifetime: 60, now: 1000)
        #expect(expiry.timeout(now: 1000) == -1)
        #expect(expiry.timeout(now: 1059.9) == -1)
        #expect(expiry.timeout(now: 1060) == 60)
        #expect(expiry.timeout(now: 5000) == 60, "a loop idle for an hour prunes with its next transfer")
    }

    @Test func everyTransferStartedWhileDueChecksAgesUntilOneOfThemHasEnded() {
        var expiry = DNSCacheExpiry(lifetime: 60, now: 0)
        #expect(expiry.timeout(now: 61) == 60)
        #expect(expiry.timeout(now: 62) == 60)
        expiry.ended(timeout: -1, now: 62.5)   // a transfer started before: it did not prune
        #expect(expiry.timeout(now: 63) == 60)
        expiry.ended(timeout: 60, now: 63)
        #expect(expiry.timeout(now: 64) == -1)
        expiry.ended(timeout: 60, now: 64)     // another one started while due: the next prune stays where it is
        #expect(expiry.timeout(now: 122.9) == -1)
        #expect(expiry.timeout(now: 123) == 60)
    }
}
