import Loader
import Testing

/// `cache path` / `cache rm`: one line per URL, as a script reads them.
@Suite struct CacheURLLineTests {
    let url = "http://user:secret@example.com/a.png"

    @Test func pathLinesSayWhereOrWhyNot() {
        let cached = CacheURLLine(url: url, outcome: .cached(path: "/c/0cc1"))
        #expect(cached.pathLine(json: false) == "/c/0cc1")
        #expect(cached.pathLine(json: true) == #"{"url":"http://user:***@example.com/a.png","cached":true,"path":"/c/0cc1"}"#)
        #expect(cached.complaint == nil && !cached.isMissing)

        let absent = CacheURLLine(url: url, outcome: .notCached)
        #expect(absent.pathLine(json: false) == "-")
        #expect(absent.pathLine(json: true) == #"{"url":"http://user:***@example.com/a.png","cached":false,"reason":"not-cached"}"#)
        #expect(absent.complaint == "asyncfetch: http://user:***@example.com/a.png: not cached" && absent.isMissing)

        // A remembered error status: an answer is cached, a body is not.
        let remembered = CacheURLLine(url: url, outcome: .withoutBody(status: 404))
        #expect(remembered.pathLine(json: false) == "-")
        #expect(remembered.pathLine(json: true)
            == #"{"url":"http://user:***@example.com/a.png","cached":false,"reason":"no-body","status":404}"#)
        #expect(remembered.complaint == "asyncfetch: http://user:***@example.com/a.png: cached as HTTP 404 Not Found, no body")
        #expect(remembered.isMissing)

        let invalid = CacheURLLine(url: "ht tp://x", outcome: .invalid)
        #expect(invalid.pathLine(json: true) == #"{"url":"ht tp://x","cached":false,"reason":"invalid-url"}"#)
        #expect(invalid.complaint == "asyncfetch: ht tp://x: invalid URL" && invalid.isMissing)
    }

    @Test func removalLinesLineUpAndCarryTheReason() {
        let lines = [CacheURLLine.Outcome.removed, .notCached, .invalid, .failed(message: "disk on fire")]
            .map { CacheURLLine(url: url, outcome: $0) }
        #expect(lines.map { $0.removalLine(json: false) } == [
            "removed  http://user:***@example.com/a.png", "absent   http://user:***@example.com/a.png",
            "invalid  http://user:***@example.com/a.png", "failed   http://user:***@example.com/a.png"])
        #expect(lines.map { $0.removalLine(json: true) } == [
            #"{"url":"http://user:***@example.com/a.png","removed":true}"#,
            #"{"url":"http://user:***@example.com/a.png","removed":false,"reason":"not-cached"}"#,
            #"{"url":"http://user:***@example.com/a.png","removed":false,"reason":"invalid-url"}"#,
            #"{"url":"http://user:***@example.com/a.png","removed":false,"reason":"io","message":"disk on fire"}"#])
        #expect(lines.map(\.isMissing) == [false, true, true, false], "a failure is reported as an error, not as absent")
    }
}
