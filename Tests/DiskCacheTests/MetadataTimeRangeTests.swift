import DiskCache
import Testing

/// Stored times are read back from disk, where anything can be written: a
/// time no `time_t` holds (which `cache list` would trap on) makes the
/// metadata invalid, like any other corruption (issue 14 item 1).
@Suite struct MetadataTimeRangeTests {
    static func metadata(storedTime: String) -> [UInt8] {
        Array(("asyncfetch-meta 1\nurl http://x/a.png\nstatus 200\nrequest-time 1\nresponse-time 2\n"
               + "stored-time \(storedTime)\nhas-body 1\nbody-length 5\nend\n").utf8)
    }

    @Test(arguments: ["1e300", "-1e300", "9223372036854775807", "1e13", "179769313486231570000000000000000000000"])
    func timesNoClockReachesAreCorrupt(value: String) {
        #expect(Self.metadata(storedTime: value).withUnsafeBytes { CacheMetadata.decode($0) } == nil, "\(value)")
    }

    @Test(arguments: ["1763779200.123456", "0", "-1", "9999999999999", "253402300799"])
    func timesAClockReachesAreRead(value: String) {
        let meta = Self.metadata(storedTime: value).withUnsafeBytes { CacheMetadata.decode($0) }
        #expect(meta?.storedAt == Double(value), "\(value)")
    }
}
