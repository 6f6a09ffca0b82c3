import enum Fetch.Defaults
import DiskCache
import Support
#if canImport(Glibc)
import Glibc
#endif

/// `--output-dir DIR` (`-P`, `-O` for the current directory): every
/// successful URL's body also appears in DIR under a readable name
/// (`OutputName`).
///
/// - Nothing is written outside DIR: names are made safe, every folder
///   below DIR is opened relative to its parent with `O_NOFOLLOW` (a
///   symbolic link inside DIR is never followed), and the file is created
///   under a temporary name and renamed over the final one (a symbolic link
///   there is replaced, not followed).
/// - A name an earlier URL of the same run took gets `-2`, `-3`, … before
///   its extension; a file left by an earlier run is replaced, so running
///   the same batch again gives the same names.
/// - The file is a reflink of the cache's (`FICLONE`: shared blocks, no
///   extra space until one side changes) where the file system has them,
///   else a copy of the data (never the cache's extended attributes).
///   `--link` makes a hard link instead: instant and no extra space, but it
///   *is* the cache's file, so editing it in place edits the cache entry.
public final class OutputDirectory: BodyReceiver, Sendable {
    public let path: String
    public let name: OutputName
    public let hardLink: Bool
    public let givenNames: GivenNames
    private let fd: Int32
    /// Names taken in this run: hash of the relative path -> hash of the URL
    /// (16 bytes a URL, so a list of millions stays small; a collision only
    /// numbers a name that did not need it).
    private let taken = Locked<[Int: Int]>([:])

    /// Opens (creating it, mode 0755 before the umask) the directory. A
    /// directory that cannot be created, opened or written into is an `io`
    /// `LoadError` naming it with strerror's words; the cache directory
    /// itself (`cacheDirectory`) is a `usage` one (its files there would
    /// replace cache entries).
    public init(path: String, name: OutputName = OutputName(), hardLink: Bool = false, givenNames: GivenNames = GivenNames(),
                cacheDirectory: String? = nil) throws(LoadError) {
        func failure(_ what: String, _ code: Int32 = errno) -> LoadError {
            LoadError(kind: .io, message: "\(what) --output-dir \(path): \(String(cString: strerror(code)))", path: path)
        }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw failure("cannot create") }
        let opened = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard opened >= 0 else { throw failure("cannot use") }
        if faccessat(opened, ".", W_OK, 0) != 0 {
            let code = errno
            close(opened)
            throw failure("cannot write into", code)
        }
        var folder = stat(), cache = stat()
        if let cacheDirectory, fstat(opened, &folder) == 0, stat(cacheDirectory, &cache) == 0,
           folder.st_dev == cache.st_dev, folder.st_ino == cache.st_ino {
            close(opened)
            throw LoadError(kind: .usage, message: "--output-dir \(path) is the cache directory; its files there would "
                            + "replace cache entries (a folder inside it is fine)", path: path)
        }
        self.path = path
        self.name = name
        self.hardLink = hardLink
        self.givenNames = givenNames
        fd = opened
    }

    deinit { close(fd) }

    /// Places `body` under its output name; a body that cannot be placed is the URL's `io` failure (a `LoadError`).
    public func receive(url: String, body: String, result: LoadResult) throws -> DeliveryReceipt {
        let md5 = result.path.map { String($0.split(separator: "/").last ?? "") }
            ?? ((try? CacheKey(url: url))?.hex ?? "body")
        let wanted = name.components(url: url, given: givenNames.name(for: url), md5: md5, format: result.format,
                                     contentType: result.contentType)
        let components = claim(wanted, for: url)
        let relative = components.joined(separator: "/")
        let shown = path.hasSuffix("/") ? path + relative : path + "/" + relative
        do {
            let (method, note) = try place(body, at: components)
            return DeliveryReceipt(path: shown, method: method, note: note)
        } catch {
            release(relative)
            throw LoadError(kind: .io, message: "cannot write \(shown): \(error.message)")
        }
    }

    /// The components with the last one made unique in this run.
    private func claim(_ components: [String], for url: String) -> [String] {
        let owner = url.hashValue
        return taken.withLock { taken in
            var candidate = components
            var number = 1
            while let holder = taken[candidate.joined(separator: "/").hashValue], holder != owner {
                number += 1
                candidate[candidate.count - 1] = Self.numbered(components[components.count - 1], number)
            }
            taken[candidate.joined(separator: "/").hashValue] = owner
            return candidate
        }
    }

    private func release(_ relative: String) {
        taken.withLock { _ = $0.removeValue(forKey: relative.hashValue) }
    }

    /// `cat.png` → `cat-2.png`; `README` → `README-2`.
    public static func numbered(_ name: String, _ number: Int) -> String {
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return OutputName.shortened(String(name[..<dot]) + "-\(number)" + String(name[dot...]))
        }
        return OutputName.shortened(name + "-\(number)")
    }

    /// Creates the folders (never through a symbolic link), then the file
    /// under a temporary name, then renames it into place.
    private func place(_ body: String, at components: [String]) throws(OutputDirectoryError) -> (method: String, note: String?) {
        var parent = fd
        defer { if parent != fd { close(parent) } }
        for folder in components.dropLast() {
            if mkdirat(parent, folder, 0o755) != 0 && errno != EEXIST { throw .errno("cannot create folder \(folder)") }
            let next = openat(parent, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                throw errno == ELOOP || errno == ENOTDIR
                    ? OutputDirectoryError(message: "\(folder) is not a folder (a symbolic link is never followed)")
                    : .errno("cannot open folder \(folder)")
            }
            if parent != fd { close(parent) }
            parent = next
        }
        let final = components[components.count - 1]
        let temporary = ".\(final.prefix(32)).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).part"
        var method = "hard link", note: String?
        if !hardLink || linkat(AT_FDCWD, body, parent, temporary, 0) != 0 {
            // A hard link across file systems (EXDEV), or one the file system refuses: a reflink or copy instead.
            let refused = hardLink ? errno : 0
            if hardLink && refused != EXDEV && refused != EPERM && refused != EMLINK { throw .errno("cannot link") }
            method = try Self.cloneOrCopy(body, into: parent, name: temporary)
            if hardLink { note = "no hard link: \(String(cString: strerror(refused)))" }
        }
        if renameat(parent, temporary, parent, final) != 0 {
            throw Self.removing(temporary, in: parent, after: .errno("cannot rename into place"))
        }
        return (method, note)
    }

    /// `failure`, once the temporary file of the placement it ended is
    /// removed; one that cannot be removed is named in it (it stays in the
    /// folder, where the user will find it): the failure is never lost for it.
    static func removing(_ temporary: String, in parent: Int32, after failure: OutputDirectoryError) -> OutputDirectoryError {
        guard unlinkat(parent, temporary, 0) != 0, errno != ENOENT else { return failure }
        let problem = String(cString: strerror(errno))
        return OutputDirectoryError(message: failure.message + "; the temporary file \(temporary) is left behind (cannot remove it: \(problem))")
    }

    /// A reflink where the file system has them, else a copy of the data
    /// (`sendfile`: in the kernel; no extended attributes).
    static func cloneOrCopy(_ body: String, into parent: Int32, name: String) throws(OutputDirectoryError) -> String {
        let input = DiskCacheStore.openForReading(body)   // copying an entry out is not a use of it
        guard input >= 0 else { throw .errno("cannot read \(body)") }
        defer { close(input) }
        let output = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw .errno("cannot create") }
        var method = "reflink"
        var failure: OutputDirectoryError?
        if ioctl(output, Self.ficlone, CInt(input)) != 0 {
            method = "copy"
            var offset: off_t = 0
            while true {
                let n = sendfile(output, input, &offset, Defaults.outputCopyChunkBytes)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failure = .errno("cannot copy"); break }
                if n == 0 { break }
            }
        }
        if close(output) != 0 && failure == nil { failure = .errno("cannot write") }
        if let failure { throw removing(name, in: parent, after: failure) }
        return method
    }

    /// `FICLONE` from `<linux/fs.h>` (`_IOW(0x94, 9, int)`), which Swift does not import.
    static let ficlone = UInt(0x4004_9409)
}

/// Why a body could not be placed in the directory: `receive` throws it
/// as the URL's `io` failure (a `LoadError`).
struct OutputDirectoryError: Error {
    let message: String

    static func errno(_ what: String) -> OutputDirectoryError {
        OutputDirectoryError(message: "\(what): \(String(cString: strerror(Glibc.errno)))")
    }
}
