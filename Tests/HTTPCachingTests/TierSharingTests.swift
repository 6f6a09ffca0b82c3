import DiskCache
import Fetch
import HTTPCaching
import Testing

/// What may go to the shared remote tier.
@Suite struct TierSharingTests {
    @Test func credentialsInTheURLAreNeverShared() {
        #expect(TierSharing.hasUserInfo("http://user:pw@host/a.png"))
        #expect(TierSharing.hasUserInfo("https://user@host/a.png"))
        #expect(!TierSharing.hasUserInfo("https://host/a@b.png"))
        #expect(!TierSharing.hasUserInfo("https://host/a.png?u=x@y"))
    }

    @Test func requestsWithCredentialsAreNeverShared() {
        #expect(TierSharing.mayShare(url: "https://host/a.png", requestHeaders: ["Accept": "image/png"]))
        #expect(!TierSharing.mayShare(url: "https://host/a.png", requestHeaders: ["authorization": "Bearer x"]))
        #expect(!TierSharing.mayShare(url: "https://host/a.png", requestHeaders: ["Cookie": "id=1"]))
        #expect(!TierSharing.mayShare(url: "https://u:p@host/a.png", requestHeaders: HTTPHeaders()))
    }

    @Test func privateAndNoStoreResponsesStayLocal() {
        func meta(_ cc: String...) -> CacheMetadata {
            CacheMetadata(url: "u", status: 200, requestTime: 0, responseTime: 0,
                          headers: cc.map { CacheMetadata.Header("Cache-Control", $0) })
        }
        #expect(TierSharing.shareable(meta()))
        #expect(TierSharing.shareable(meta("max-age=60, public")))
        #expect(!TierSharing.shareable(meta("max-age=60", "PRIVATE")))
        #expect(!TierSharing.shareable(meta("no-store, must-understand")))
        #expect(TierSharing.shareable(meta("community=\"private\"")), "a quoted argument is not a directive")
    }
}
