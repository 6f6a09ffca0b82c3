/// Digests computed by the reference tools, not by the code under test.
public enum ReferenceDigest {
    /// XXH3-128 of `bytes` as `xxhsum -H2` prints it (Debian's `xxhash`
    /// package, which `make deps` installs).
    public static func xxh3(_ bytes: [UInt8]) throws -> String {
        let result = try runProcess("/usr/bin/xxhsum", ["-H2"], stdin: bytes)
        guard result.status == 0, let word = result.stdout.split(separator: " ").first else {
            throw TestSupportError.message("xxhsum failed: \(result.stderr)")
        }
        return String(word)
    }
}
