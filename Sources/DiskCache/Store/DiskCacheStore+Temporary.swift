#if canImport(Glibc)
import Glibc
#endif

/// The files a new entry is written in before it is published: unnamed
/// (`O_TMPFILE`) where the file system has them, else named in `DIR/.tmp`
/// (`<key>.<pid>.<n>`), and how they get a name and are published.
extension DiskCacheStore {
    func makeTemporaryName(for key: String) -> String {
        "\(temporaryDirectory)/\(key).\(Self.processID).\(temporaryNames.withLock { $0 += 1; return $0 })"
    }

    /// This process's id, read once (it is in every temporary name).
    static let processID = getpid()

    /// A file for a new entry: unnamed (`O_TMPFILE`) where the file system
    /// allows, else named in `.tmp`.
    func createTemporaryFile(for key: String) throws(DiskCacheError) -> TemporaryFile {
        if let unnamed = try TemporaryFile.unnamed(in: directoryFD, directory: directory) { return unnamed }
        return try createNamedTemporaryFile(for: key)
    }

    /// Creates a locked temporary file in `.tmp`. The folder is created when
    /// it is missing (ENOENT) rather than with a `mkdir` before every file.
    ///
    /// A name can already exist: a killed run that had this process's pid
    /// (containers reuse pid 1) leaves files the sweep keeps for a minute.
    /// Then the next number is tried.
    func createNamedTemporaryFile(for key: String, suffix: String = "") throws(DiskCacheError) -> TemporaryFile {
        var attempt = 0
        while true {
            attempt += 1
            let path = makeTemporaryName(for: key) + suffix
            do throws(DiskCacheError) {
                return try TemporaryFile(path: path)
            } catch where error.errno == ENOENT && attempt <= 2 {
                try ensureTemporaryDirectory()
            } catch where error.errno == EEXIST && attempt <= CacheDefaults.temporaryNameAttempts {
                continue
            }
        }
    }

    /// Gives `file` a name in `.tmp` if it has none (`linkat`), creating
    /// `.tmp` when it is missing (ENOENT) rather than checking every time,
    /// and moving on to the next number when a name is taken (a leftover of
    /// a killed run that had this pid).
    func name(_ file: inout TemporaryFile, key: String, suffix: String = "") throws(DiskCacheError) -> String {
        var attempt = 0
        while true {
            attempt += 1
            do throws(DiskCacheError) {
                return try file.name { makeTemporaryName(for: key) + suffix }
            } catch where error.errno == ENOENT && attempt <= 2 {
                try ensureTemporaryDirectory()
            } catch where error.errno == EEXIST && attempt <= CacheDefaults.temporaryNameAttempts {
                continue
            }
        }
    }

    /// Publishes a complete file (body and record) as `key`'s entry,
    /// atomically for every reader: an unnamed file is linked straight to the
    /// entry's name when there is none yet (one `linkat`); otherwise it gets a
    /// name in `.tmp` and one `rename` replaces the old entry. `path` is
    /// `bodyPath(key)`, which the caller has made already.
    func publish(_ file: inout TemporaryFile, key: String) throws(DiskCacheError) {
        try publish(&file, digest: Self.digest(ofKey: key))
    }

    /// `publish(file, key:)` of the key `digest` is: linked by a name written on the stack
    /// (`MD5.Digest.withHex`), no string made per download. The path only when linking
    /// by name did not do (or for its error): not built per download either.
    func publish(_ file: inout TemporaryFile, digest: MD5.Digest) throws(DiskCacheError) {
        let linked = digest.withHex { _, name in
            Result { () throws(DiskCacheError) in
                try file.linkIfAbsent(directoryFD: directoryFD, name: name, path: bodyPath(digest.hex))
            }
        }
        if try linked.get() { return }
        let key = digest.hex
        _ = try name(&file, key: key)
        try file.publish(as: bodyPath(key))
    }

    func ensureTemporaryDirectory() throws(DiskCacheError) {
        if mkdir(temporaryDirectory, 0o700) != 0 && errno != EEXIST {
            throw DiskCacheError.system("cannot create", path: temporaryDirectory)
        }
    }
}
