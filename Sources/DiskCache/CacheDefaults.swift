/// The disk cache's limits, in one place. (DiskCache does not depend on
/// Fetch, whose `Defaults` holds the transfer limits.)
public enum CacheDefaults {
    /// A temporary file whose writer is not provably dead (its pid is alive,
    /// or lives in another pid namespace) is swept only when nobody holds its
    /// lock and it has not changed for this long: 60 s. The lock is taken
    /// right after the file is created, so this only covers that instant.
    public static let unlockedTemporaryGrace: Double = 60
    /// Where file locks do not work (some network filesystems), a temporary
    /// file is swept when its pid is dead and it is older than
    /// `unlockedTemporaryGrace`, or when it is older than this: 1 day.
    public static let abandonedTemporaryAge: Double = 24 * 3600
    /// `markAccessed` writes the access time only when the recorded one is
    /// older than this (60 s), so repeated hits write nothing.
    public static let accessTimeResolution: Double = 60
    /// How long a commit waits for the directory's commit lock before going
    /// ahead without it (the protocol stays safe, only less tidy): 2 s.
    public static let commitLockTimeout: Double = 2
    /// Metadata files larger than this (1 MiB) are foreign, not ours.
    public static let maxMetadataSize = 1 << 20
    /// A transfer cut off after at least this much (1 MiB) of its body keeps
    /// it, to be resumed with `Range` by a later run (SPEC §5).
    public static let resumeMinimum: Int64 = 1 << 20
    /// Bytes `cache verify` reads at a time while it rehashes a body.
    static let verifyReadBytes = 256 * 1024
    /// Room for this user's passwd entry (`getpwuid_r`: the home directory
    /// when `HOME` is unset, the login name a message suggests); an entry that
    /// does not fit is read as none (no home; the uid for the name).
    static let passwdBufferBytes = 16 * 1024
}
