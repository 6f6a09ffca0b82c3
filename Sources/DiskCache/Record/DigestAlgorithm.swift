/// The digest of a stored body, computed while it streams (SPEC §4). It
/// detects corruption (a torn write after a power loss, a disk error, an
/// edit in place); it is not a security boundary.
///
/// New entries use XXH3-128 (libxxhash), which hashes at memory speed on
/// the transfer thread, so no body is ever read twice. Entries written by
/// the previous format carry an MD5; `cache verify` still checks those.
public enum DigestAlgorithm: String, Sendable {
    case xxh3 = "xxh3-128"
    case md5

    /// The algorithm new entries record.
    public static let current = DigestAlgorithm.xxh3
}
