/// When a tier is turned off for the rest of the run: the failures it
/// counts, and the verdict after each. A value held in `RemoteCache`'s
/// state, under its lock; `RemoteCache` does what the verdict says (stops
/// its reads and uploads in flight, drops the queued ones, warns).
///
/// Two ways to fail for good, each "in a row" meaning with no success (an
/// object read, a 404, an upload stored) between:
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
/// Anything else (an object refused: corrupt, foreign, junk) is about that
/// object, and counts toward neither.
struct TierHealth {
    enum Failure {
        case transport
        case refusal
        case object
    }

    private var transportInARow = 0
    private var transportInAll = 0
    private var refusalsInARow = 0
    private var uploadsRefusedInARow = 0

    /// A read or upload that worked, or a 404: the failures in a row start over.
    mutating func succeeded() {
        transportInARow = 0
        refusalsInARow = 0
        uploadsRefusedInARow = 0
    }

    /// Counts one failure (`upload`: of a PUT; `text`: its message); returns
    /// why the tier is to be turned off now, or nil to go on.
    mutating func failed(_ failure: Failure, upload: Bool, text: String) -> String? {
        switch failure {
        case .transport:
            transportInARow += 1
            transportInAll += 1
            if transportInARow >= RemoteDefaults.failureLimit {
                return "\(transportInARow) connection failures or timeouts in a row (the last: \(text))"
            }
            if transportInAll >= RemoteDefaults.failureTotal {
                return "\(transportInAll) connection failures or timeouts in this run (the last: \(text))"
            }
        case .refusal:
            refusalsInARow += 1
            if upload { uploadsRefusedInARow += 1 }
            if refusalsInARow >= RemoteDefaults.refusalLimit && uploadsRefusedInARow >= RemoteDefaults.uploadRefusalLimit {
                return "\(refusalsInARow) reads and uploads in a row refused (the last: \(text))"
            }
        case .object:
            break
        }
        return nil
    }
}
