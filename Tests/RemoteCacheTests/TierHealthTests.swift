@testable import RemoteCache
import Testing

/// When a tier is turned off (`TierHealth`): the verdict after each failure,
/// as sequences a run meets. No I/O.
@Suite struct TierHealthTests {
    /// Refusals turn the tier off at `refusalLimit` in a row, once `uploadRefusalLimit` uploads are among them.
    @Test func refusalsOfReadsAndUploadsTurnItOff() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.refusalLimit - RemoteDefaults.uploadRefusalLimit) {
            #expect(health.failed(.refusal, upload: false, text: "HTTP 403 Forbidden") == nil)
        }
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal, upload: true, text: "HTTP 403 Forbidden") == nil)
        }
        #expect(health.failed(.refusal, upload: true, text: "HTTP 403 Forbidden")
                == "10 reads and uploads in a row refused (the last: HTTP 403 Forbidden)")
    }

    /// Reads refused alone never do (S3's 403 for a missing object to a key without
    /// s3:ListBucket), however many, nor one upload refused among them (a busy tier's 503
    /// SlowDown): the uploads refused in a row after them do.
    @Test func refusedReadsAloneNeverTurnItOff() {
        var health = TierHealth()
        for _ in 0..<100 { #expect(health.failed(.refusal, upload: false, text: "HTTP 403 Forbidden") == nil) }
        #expect(health.failed(.refusal, upload: true, text: "HTTP 503 Slow Down") == nil)
        for _ in 0..<100 { #expect(health.failed(.refusal, upload: false, text: "HTTP 403 Forbidden") == nil) }
        for _ in 2..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal, upload: true, text: "HTTP 503 Slow Down") == nil)
        }
        #expect(health.failed(.refusal, upload: true, text: "HTTP 503 Slow Down") != nil)
    }

    /// An upload stored between refused ones starts the uploads' count over too.
    @Test func anUploadStoredStartsTheUploadsCountOver() {
        var health = TierHealth()
        for _ in 1..<RemoteDefaults.uploadRefusalLimit { _ = health.failed(.refusal, upload: true, text: "HTTP 503 Slow Down") }
        health.succeeded()
        for _ in 0..<100 { #expect(health.failed(.refusal, upload: false, text: "HTTP 403 Forbidden") == nil) }
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal, upload: true, text: "HTTP 503 Slow Down") == nil)
        }
    }

    /// A success (an object, a 404, an upload stored) starts the count over, for both kinds.
    @Test func aSuccessStartsTheCountOver() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.refusalLimit - 1) { _ = health.failed(.refusal, upload: true, text: "HTTP 503 Service Unavailable") }
        _ = health.failed(.transport, upload: false, text: "timed out")
        _ = health.failed(.transport, upload: false, text: "timed out")
        health.succeeded()
        #expect(health.failed(.refusal, upload: true, text: "HTTP 503 Service Unavailable") == nil)
        #expect(health.failed(.transport, upload: false, text: "timed out") == nil)
        #expect(health.failed(.transport, upload: false, text: "timed out") == nil)
        #expect(health.failed(.transport, upload: false, text: "timed out")
                == "3 connection failures or timeouts in a row (the last: timed out)")
    }

    /// Transport failures also count in all: `failureTotal` turns it off, successes between or not.
    @Test func transportFailuresCountInAllToo() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.failureTotal - 1) {
            #expect(health.failed(.transport, upload: false, text: "could not connect") == nil)
            health.succeeded()
        }
        #expect(health.failed(.transport, upload: false, text: "could not connect")
                == "10 connection failures or timeouts in this run (the last: could not connect)")
    }

    /// A refused object (corrupt, foreign, junk) is about that object: it counts toward neither.
    @Test func refusedObjectsCountTowardNeither() {
        var health = TierHealth()
        for _ in 0..<100 { #expect(health.failed(.object, upload: false, text: "not an asyncfetch object") == nil) }
    }
}
