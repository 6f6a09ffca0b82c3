#if canImport(Glibc)
import Glibc
#endif

/// The names in a directory (without `.` and `..`), via `opendir`/`readdir`.
enum DirectoryListing {
    /// nil when the directory does not exist; throws for any other failure.
    static func names(in path: String) throws(DiskCacheError) -> [String]? {
        guard let stream = opendir(path) else {
            if errno == ENOENT { return nil }
            throw DiskCacheError.system("cannot list", path: path)
        }
        defer { _ = closedir(stream) }   // read-only: nothing to report
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw DiskCacheError.system("cannot list", path: path) }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
