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
    /// While it waits for the commit lock, a commit sleeps this long after
    /// its first try (100 µs), twice as long after each next one, and never
    /// longer than `commitLockLongestPause` (10 ms) at a time.
    static let commitLockFirstPause: UInt32 = 100
    static let commitLockLongestPause: UInt32 = 10_000
    /// A new named temporary file is locked at once; a sweep that holds its
    /// lock for an instant to look at it makes the writer try again, up to
    /// this many times (100), `temporaryLockPause` (100 µs) apart, before it
    /// goes on without the lock (the sweep then judges it by pid and age).
    static let temporaryLockTries = 100
    static let temporaryLockPause: UInt32 = 100
    /// Names a writer tries in `.tmp` before it gives up (1,000): a name is
    /// taken only by a leftover of a killed run that had this pid.
    static let temporaryNameAttempts = 1000
    /// Metadata files larger than this (1 MiB) are foreign, not ours.
    public static let maxMetadataSize = 1 << 20
    /// A record attribute larger than this (8 KiB) is not ours: the largest a hit reads.
    static let maxRecordAttributeSize = 8192
    /// A hit reads a sidecar metadata file with one read of this many bytes
    /// (4 KiB; every ordinary record fits) and only a larger one the long way.
    static let sidecarFirstRead = 4096
    /// The first bytes of a body kept in memory as it is written (64 KiB),
    /// for sniffing its format and size without reading the file again.
    public static let headLimit = 64 * 1024
    /// A transfer cut off after at least this much (1 MiB) of its body keeps
    /// it, to be resumed with `Range` by a later run (SPEC §5).
    public static let resumeMinimum: Int64 = 1 << 20
    /// Bytes read at a time to hash a stored body again: by `cache verify`,
    /// and by a writer resuming a kept partial body (256 KiB).
    static let rehashReadBytes = 256 * 1024
    /// Room for this user's passwd entry (`getpwuid_r`: the home directory
    /// when `HOME` is unset, the login name a message suggests); an entry that
    /// does not fit is read as none (no home; the uid for the name).
    static let passwdBufferBytes = 16 * 1024
    /// Names `CacheDirectory.isAbsent` tries for the folder it makes and
    /// removes to learn that a missing cache directory could be made (4):
    /// another is taken only by a probe of this process at that instant.
    static let probeNameAttempts = 4
}
