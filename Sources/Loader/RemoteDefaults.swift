import Fetch

/// Named defaults of the remote cache tier (`--remote-cache`).
extension Defaults {
    /// Uploads running at once, on the tier's own transfer thread (never in a `--jobs` slot).
    public static let remoteUploads = 4
    /// Time allowed to connect to the remote tier: a tier that is down must not hold URLs up.
    public static let remoteConnectTimeout: Double = 3
    /// Time allowed for one remote GET or PUT: a slow tier costs at most this per URL.
    public static let remoteTimeout: Double = 10
    /// Transport failures in a row (connect, DNS, timeout) after which the
    /// tier is left alone for the rest of the run.
    public static let remoteFailureLimit = 3
    /// Transport failures in all after which the tier is left alone for the
    /// rest of the run (a tier that answers now and then but mostly times out).
    public static let remoteFailureTotal = 10
    /// Longest metadata record accepted in a remote object.
    public static let remoteRecordLimit = 1024 * 1024
    /// AWS region when neither `AWS_REGION` nor `AWS_DEFAULT_REGION` names one.
    public static let awsRegion = "us-east-1"
}
