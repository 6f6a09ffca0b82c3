/// When a tier is turned off for the rest of the run, or only its uploads
/// stopped: the failures it counts, and the verdict after each. A value held
/// in `RemoteCache`'s state, under its lock; `RemoteCache` does what the
/// verdict says (stops its transfers in flight, drops the queued ones, warns).
///
/// Turned off, each "in a row" meaning with no success (an object read, a
/// 404, an upload stored) between:
/// - transport failures (connect, DNS, TLS, timeout): `RemoteDefaults.failureLimit`
///   in a row or `RemoteDefaults.failureTotal` in all. A tier that is down or
///   hangs costs each URL a timeout.
/// - refusals (an error status other than 404, or a redirect not followed: a signed tier's, or too many):
///   `RemoteDefaults.refusalLimit` in a row, `RemoteDefaults.uploadRefusalLimit`
///   uploads in a row among them. A wrong key's 403 or a 5xx for everything
///   costs each URL a GET and a PUT. Refused reads alone do not count, nor
///   one upload refused among them: S3 answers 403, not 404, for a missing
///   object to a key without `s3:ListBucket`, and such a run still fills the
///   tier with its uploads.
/// - an S3 tier's upload answered 404 before any object was read: the bucket does
///   not exist (`NoSuchBucket`), so every read is a miss. On a plain HTTP tier
///   the same 404 stops only the uploads (`RemoteCache` decides, on `.noSuchPlace`):
///   a web server serving a tier that others fill may answer a PUT 404.
///
/// Uploads stopped, reads going on (a read-only key: its GETs work, its PUTs
/// are refused), counting uploads refused since the last one stored, whatever
/// the reads did between: `RemoteDefaults.uploadRefusalLimit` denials (a 4xx
/// that is about the tier, not the moment or the object: any 4xx but 400, 408,
/// 413 and 429, and 501; a redirect), or `RemoteDefaults.refusalLimit` refusals of any
/// kind (a tier whose PUTs always answer 503). If nothing worked in the run
/// at all, the tier is turned off instead: every read was refused too.
///
/// Anything else (an object refused: corrupt, foreign, junk) is about that
/// object, and counts toward none of these.
struct TierHealth {
    enum Failure {
        case transport
        /// `status`: the error status, nil for a redirect not followed.
        case refusal(status: Int?)
        case object
    }

    /// What `RemoteCache` does after a failure; each with why, for its warning.
    enum Verdict: Equatable {
        case goOn
        case turnOff(String)
        /// An upload was answered 404 and no object was read: an S3 tier is
        /// turned off, a plain HTTP one's uploads stopped. The caller says why
        /// (it knows the bucket or the path).
        case noSuchPlace
        case stopUploads(String)
    }

    private var transportInARow = 0
    private var transportInAll = 0
    private var refusalsInARow = 0
    private var uploadsRefusedInARow = 0
    /// Uploads refused, and denied, since the last one stored: reads between do not start these over.
    private var uploadsRefusedSinceStored = 0
    private var uploadsDeniedSinceStored = 0
    /// Whether anything worked in this run (an object read, a 404, an upload stored), and an object was read.
    private var anySuccess = false
    private var objectRead = false

    /// A read or upload that worked, or a 404 (`objectRead`: an object was
    /// read; `upload`: an upload was stored): the failures in a row start over.
    mutating func succeeded(objectRead read: Bool = false, upload: Bool = false) {
        transportInARow = 0
        refusalsInARow = 0
        uploadsRefusedInARow = 0
        anySuccess = true
        if read { objectRead = true }
        if upload {
            uploadsRefusedSinceStored = 0
            uploadsDeniedSinceStored = 0
        }
    }

    /// Counts one failure (`upload`: of a PUT; `text`: its message); returns
    /// what to do now.
    mutating func failed(_ failure: Failure, upload: Bool, text: String) -> Verdict {
        switch failure {
        case .transport:
            transportInARow += 1
            transportInAll += 1
            if transportInARow >= RemoteDefaults.failureLimit {
                return .turnOff("\(transportInARow) connection failures or timeouts in a row (the last: \(text))")
            }
            if transportInAll >= RemoteDefaults.failureTotal {
                return .turnOff("\(transportInAll) connection failures or timeouts in this run (the last: \(text))")
            }
        case .refusal(let status):
            refusalsInARow += 1
            guard upload else { return .goOn }
            uploadsRefusedInARow += 1
            uploadsRefusedSinceStored += 1
            if Self.denies(status) { uploadsDeniedSinceStored += 1 }
            if status == 404 && !objectRead { return .noSuchPlace }
            if refusalsInARow >= RemoteDefaults.refusalLimit && uploadsRefusedInARow >= RemoteDefaults.uploadRefusalLimit
                || !anySuccess && uploadsDeniedSinceStored >= RemoteDefaults.uploadRefusalLimit {
                let what = refusalsInARow == uploadsRefusedInARow ? "uploads" : "reads and uploads"
                return .turnOff("\(refusalsInARow) \(what) in a row refused (the last: \(text))")
            }
            if uploadsDeniedSinceStored >= RemoteDefaults.uploadRefusalLimit
                || uploadsRefusedSinceStored >= RemoteDefaults.refusalLimit {
                return .stopUploads("\(uploadsRefusedSinceStored) uploads in a row refused (the last: \(text))")
            }
        case .object:
            break
        }
        return .goOn
    }

    /// An upload's refusal that is about the tier, not the moment (400: S3's
    /// `RequestTimeout` and `IncompleteBody` to a slow upload; 408, 429, 5xx
    /// but 501) or the object (413, a body over the server's limit): the next
    /// upload will be refused too. A redirect (nil) as well.
    static func denies(_ status: Int?) -> Bool {
        guard let status else { return true }
        if status == 501 { return true }
        return (400..<500).contains(status) && ![400, 408, 413, 429].contains(status)
    }
}
