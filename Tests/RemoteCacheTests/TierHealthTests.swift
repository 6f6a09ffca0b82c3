@testable import RemoteCache
import Testing

/// When a tier is turned off (`TierHealth`): the verdict after each failure,
/// as sequences a run meets. No I/O.
@Suite struct TierHealthTests {
    /// Refusals turn the tier off at `refusalLimit` in a row, once `uploadRefusalLimit` uploads are among them.
    @Test func refusalsOfReadsAndUploadsTurnItOff() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.refusalLimit - RemoteDefaults.uploadRefusalLimit) {
            #expect(health.failed(.refusal(status: 403), upload: false, text: "HTTP 403 Forbidden") == .goOn)
        }
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden") == .goOn)
        }
        #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden")
                == .turnOff("10 reads and uploads in a row refused (the last: HTTP 403 Forbidden)"))
    }

    /// Reads refused alone never do (S3's 403 for a missing object to a key without
    /// s3:ListBucket), however many, nor one upload refused among them (a busy tier's 503
    /// SlowDown): the uploads refused in a row after them do.
    @Test func refusedReadsAloneNeverTurnItOff() {
        var health = TierHealth()
        for _ in 0..<100 { #expect(health.failed(.refusal(status: 403), upload: false, text: "HTTP 403 Forbidden") == .goOn) }
        #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") == .goOn)
        for _ in 0..<100 { #expect(health.failed(.refusal(status: 403), upload: false, text: "HTTP 403 Forbidden") == .goOn) }
        for _ in 2..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") == .goOn)
        }
        #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down")
                == .turnOff("\(200 + RemoteDefaults.uploadRefusalLimit) reads and uploads in a row refused (the last: HTTP 503 Slow Down)"))
    }

    /// An upload stored between refused ones starts the uploads' count over too.
    @Test func anUploadStoredStartsTheUploadsCountOver() {
        var health = TierHealth()
        for _ in 1..<RemoteDefaults.uploadRefusalLimit { _ = health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") }
        health.succeeded(upload: true)
        for _ in 0..<100 { #expect(health.failed(.refusal(status: 403), upload: false, text: "HTTP 403 Forbidden") == .goOn) }
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") == .goOn)
        }
    }

    /// A success (here an upload stored) starts the count over, for both kinds.
    @Test func aSuccessStartsTheCountOver() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.refusalLimit - 1) { _ = health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Service Unavailable") }
        _ = health.failed(.transport, upload: false, text: "timed out")
        _ = health.failed(.transport, upload: false, text: "timed out")
        health.succeeded(upload: true)
        #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Service Unavailable") == .goOn)
        #expect(health.failed(.transport, upload: false, text: "timed out") == .goOn)
        #expect(health.failed(.transport, upload: false, text: "timed out") == .goOn)
        #expect(health.failed(.transport, upload: false, text: "timed out")
                == .turnOff("3 connection failures or timeouts in a row (the last: timed out)"))
    }

    /// Transport failures also count in all: `failureTotal` turns it off, successes between or not.
    @Test func transportFailuresCountInAllToo() {
        var health = TierHealth()
        for _ in 0..<(RemoteDefaults.failureTotal - 1) {
            #expect(health.failed(.transport, upload: false, text: "could not connect") == .goOn)
            health.succeeded()
        }
        #expect(health.failed(.transport, upload: false, text: "could not connect")
                == .turnOff("10 connection failures or timeouts in this run (the last: could not connect)"))
    }

    /// A refused object (corrupt, foreign, junk) is about that object: it counts toward neither.
    @Test func refusedObjectsCountTowardNeither() {
        var health = TierHealth()
        for _ in 0..<100 { #expect(health.failed(.object, upload: false, text: "not an asyncfetch object") == .goOn) }
    }

    /// A read-only key: its reads work (objects, 404s), its PUTs are refused 403. Its uploads
    /// are stopped after `uploadRefusalLimit` denials since the last one stored, whatever the
    /// reads did between; the tier stays on. Before, every read started the count over and the
    /// run paid a PUT per URL.
    @Test func uploadsDeniedWhileReadsWorkStopTheUploads() {
        var health = TierHealth()
        health.succeeded(objectRead: true)
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden") == .goOn)
            health.succeeded()
        }
        #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden")
                == .stopUploads("3 uploads in a row refused (the last: HTTP 403 Forbidden)"))
    }

    /// Uploads refused by a busy tier (503, 429) or for their size (413), reads working between,
    /// stop the uploads only at `refusalLimit`; an upload stored starts the count over.
    @Test func uploadsRefusedForTheMomentStopThemLater() {
        var health = TierHealth()
        // 400: S3's RequestTimeout and IncompleteBody to a slow upload (review12a).
        for status in [503, 429, 413, 500, 408, 400] { #expect(!TierHealth.denies(status)) }
        for status in [401, 403, 404, 405, 409, 501] { #expect(TierHealth.denies(status)) }
        for _ in 1..<RemoteDefaults.refusalLimit {
            health.succeeded()
            #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") == .goOn)
        }
        health.succeeded(upload: true)
        for _ in 1..<RemoteDefaults.refusalLimit {
            health.succeeded()
            #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down") == .goOn)
        }
        health.succeeded()
        #expect(health.failed(.refusal(status: 503), upload: true, text: "HTTP 503 Slow Down")
                == .stopUploads("10 uploads in a row refused (the last: HTTP 503 Slow Down)"))
    }

    /// A tier turned off by refused uploads alone (a WebDAV folder the server cannot write: 500
    /// to every PUT, nothing read yet) says uploads, not "reads and uploads" (remote7's report).
    @Test func refusedUploadsAloneAreNamedSo() {
        var health = TierHealth()
        for _ in 1..<RemoteDefaults.refusalLimit {
            #expect(health.failed(.refusal(status: 500), upload: true, text: "HTTP 500") == .goOn)
        }
        #expect(health.failed(.refusal(status: 500), upload: true, text: "HTTP 500")
                == .turnOff("10 uploads in a row refused (the last: HTTP 500)"))
    }

    /// An upload answered 404 before any object was read: the bucket or path does not exist
    /// (every read was a miss), and the tier is turned off at once. After an object was read,
    /// the place exists: that 404 is an upload refused like a 403.
    @Test func anUploads404WithNothingReadMeansNoSuchPlace() {
        var health = TierHealth()
        health.succeeded()   // a 404 read: a miss
        #expect(health.failed(.refusal(status: 404), upload: true, text: "HTTP 404 Not Found") == .noSuchPlace)
        var read = TierHealth()
        read.succeeded(objectRead: true)
        #expect(read.failed(.refusal(status: 404), upload: true, text: "HTTP 404 Not Found") == .goOn)
    }

    /// Uploads denied in a run where nothing worked at all (every read refused too, fewer than
    /// `refusalLimit` of them): the whole tier is turned off, not only its uploads.
    @Test func uploadsDeniedWhenNothingWorkedTurnItOff() {
        var health = TierHealth()
        for _ in 0..<2 { #expect(health.failed(.refusal(status: 403), upload: false, text: "HTTP 403 Forbidden") == .goOn) }
        for _ in 1..<RemoteDefaults.uploadRefusalLimit {
            #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden") == .goOn)
        }
        #expect(health.failed(.refusal(status: 403), upload: true, text: "HTTP 403 Forbidden")
                == .turnOff("5 reads and uploads in a row refused (the last: HTTP 403 Forbidden)"))
    }
}
