/// The remote tier's limits (`--remote-cache`), in one place. (Fetch's
/// `Defaults` holds the transfer limits, `CacheDefaults` the local cache's.)
public enum RemoteDefaults {
    /// Transfers at once of `cache pull`: all go to the one tier, which the
    /// per-host scheduling of a fetch run does not cover.
    public static let pullJobs = 8
    /// Reads from the tier at once in a batch (each in a slot of its `--jobs`,
    /// in a lane of its own rather than its URL's origin's: `--jobs-per-host`
    /// when larger). 32, not 6 as an origin: every URL with nothing stored
    /// locally asks the tier first, whatever its origin, and a tier far away
    /// answers as many at once as this per round trip. Not `--jobs` (256):
    /// on 127.0.0.1 a warm run of 10,000 URLs took 48 MiB with 256 at once,
    /// 25 MiB with 32, and no less time.
    public static let reads = 32
    /// Uploads running at once, on the tier's own transfer thread (each in a slot of
    /// the run's `--jobs` too, when the caller lends them: `UploadSlots`).
    public static let uploads = 4
    /// Time allowed to connect to the remote tier: a tier that is down must not hold URLs up.
    public static let connectTimeout: Double = 3
    /// Time allowed for one remote GET or PUT: a slow tier costs at most this per URL.
    public static let timeout: Double = 10
    /// Transport failures in a row (connect, DNS, timeout) after which the
    /// tier is left alone for the rest of the run.
    public static let failureLimit = 3
    /// Transport failures in all after which the tier is left alone for the
    /// rest of the run (a tier that answers now and then but mostly times out).
    public static let failureTotal = 10
    /// Refusals in a row (an error status other than 404: a wrong key's 403,
    /// a 5xx), reads and uploads alike, `uploadRefusalLimit` uploads among
    /// them, after which the tier is left alone for the rest of the run
    /// (`TierHealth`). Not 3: a busy tier's few 503s should not cost a run its tier.
    public static let refusalLimit = 10
    /// Uploads refused in a row (no upload stored between) that `refusalLimit`
    /// needs among its refusals. Not 1: to a key without `s3:ListBucket`
    /// every read of a missing object is a 403, so a cold run's refusals in a
    /// row are mostly reads, and one upload refused by a busy tier (S3's 503
    /// SlowDown, a body over a WebDAV server's limit) must not turn it off.
    /// Also the uploads denied (a 4xx but 400, 408, 413, 429; 501: about the tier, not
    /// the moment or the object) since the last one stored, whatever the reads
    /// did between, after which uploads stop and reads go on (a read-only key;
    /// `refusalLimit` refusals of any kind do that too), or the tier is turned
    /// off if nothing in the run has worked (`TierHealth`).
    public static let uploadRefusalLimit = 3
    /// Longest metadata record accepted in a remote object.
    public static let recordLimit = 1024 * 1024
    /// AWS region when neither `AWS_REGION` nor `AWS_DEFAULT_REGION` names one.
    public static let awsRegion = "us-east-1"
}
