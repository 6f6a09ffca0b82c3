#if canImport(Glibc)
import Glibc
#endif

/// Why a file to deliver a body to (`-o FILE`) could not be created, in
/// words that name what is wrong. `open` alone said `-o photos/`, for a
/// folder that does not exist, "Is a directory" (a name ending in `/` can
/// only be a folder, so the kernel answers `EISDIR` before it looks), and
/// `-o photos/cat.png` "No such file or directory", of a file the run was
/// about to create.
enum OutputFileProblem {
    /// The reason `open(path, O_CREAT …)` failed with `code`, looked up on
    /// the file system now (a folder that is missing, or a file where a
    /// folder should be, is named); strerror's words for anything else.
    static func reason(_ path: String, errno code: Int32) -> String {
        let trimmed = withoutTrailingSlashes(path)
        switch code {
        case EISDIR where isDirectory(trimmed):
            return "it is a folder, not a file"
        case EISDIR where !path.hasSuffix("/"):
            break
        case EISDIR, ENOENT, ENOTDIR:
            // The folder the file would go in (for `dir/`: `dir` itself), and the first of its
            // ancestors that is missing or not a folder.
            let folder = path.hasSuffix("/") ? trimmed : parent(of: trimmed)
            if let (ancestor, exists) = firstUnusableAncestor(of: folder) {
                return exists ? "\(ancestor) is not a folder" : "the folder \(ancestor) does not exist"
            }
        default:
            break
        }
        return String(cString: strerror(code))
    }

    /// The first folder on the way to `folder` (itself included) that is
    /// missing, or there but not a folder (`exists`), or nil when every one is a folder.
    private static func firstUnusableAncestor(of folder: String) -> (String, exists: Bool)? {
        guard !folder.isEmpty else { return nil }
        var prefix = folder.hasPrefix("/") ? "/" : ""
        for component in folder.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            if stat(prefix, &info) != 0 { return errno == ENOENT ? (prefix, false) : nil }
            if (info.st_mode & S_IFMT) != S_IFDIR { return (prefix, true) }
        }
        return nil
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return !path.isEmpty && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// `a/b/` as `a/b`; `/` stays `/`.
    private static func withoutTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    /// The folder part of `path` (`""` for a name in the working directory).
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
