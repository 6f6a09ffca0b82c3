#if canImport(Glibc)
import Glibc
#endif

/// The check of a `--cacert` file before any transfer: libcurl takes CA
/// files in PEM only, and a file it cannot load would otherwise fail every
/// https URL one by one, long after the typo.
public enum CAFile {
    /// Why `path` cannot serve as a CA file (strerror, "is a directory", no
    /// PEM certificate in it), or nil when it can. Only a regular file is
    /// read ahead of libcurl: a pipe (`<(…)`) read here would be empty for it.
    public static func problem(at path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { _ = close(fd) }   // read-only
        var info = stat()
        guard fstat(fd, &info) == 0 else { return String(cString: strerror(errno)) }
        if (info.st_mode & S_IFMT) == S_IFDIR { return "is a directory" }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return containsPEM(fd) ? nil : "no PEM certificate in it (a line '-----BEGIN CERTIFICATE-----')"
    }

    /// Whether the file (read up to `Defaults.maxCAFileScan`) has a PEM
    /// certificate ("-----BEGIN CERTIFICATE-----", or "TRUSTED CERTIFICATE"):
    /// libcurl takes CA files in PEM only, and would report anything else for
    /// every https URL.
    private static func containsPEM(_ fd: Int32) -> Bool {
        let marker = Array("CERTIFICATE-----".utf8)
        // Each read lands after the last `marker.count - 1` bytes of the ones
        // before, so a marker split between two reads is found too.
        var buffer = [UInt8](repeating: 0, count: Defaults.caFileReadBytes)
        var kept = 0, scanned = 0
        while scanned < Defaults.maxCAFileScan {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + kept, $0.count - kept) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            let total = kept + n
            let found = buffer.withUnsafeMutableBytes { bytes -> Bool in
                if Self.find(marker, in: UnsafeRawBufferPointer(rebasing: bytes[0..<total])) { return true }
                kept = min(marker.count - 1, total)
                if let base = bytes.baseAddress { memmove(base, base + (total - kept), kept) }
                return false
            }
            if found { return true }
            scanned += n
        }
        return false
    }

    /// Whether `bytes` holds `marker` (a `memchr` for its first byte, then a `memcmp`).
    private static func find(_ marker: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count >= marker.count else { return false }
        var offset = 0
        while offset <= bytes.count - marker.count {
            guard let hit = memchr(base + offset, Int32(marker[0]), bytes.count - marker.count + 1 - offset) else { return false }
            offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset, marker, marker.count) == 0 { return true }
            offset += 1
        }
        return false
    }
}
