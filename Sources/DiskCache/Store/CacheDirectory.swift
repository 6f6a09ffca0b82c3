#if canImport(Glibc)
import Glibc
#endif

/// Where the cache lives (SPEC §4): `--cache-dir`, else
/// `$ASYNCFETCH_CACHE_DIR`, else `$XDG_CACHE_HOME/asyncfetch` when that is an
/// absolute path (the XDG spec says to ignore a relative one), else
/// `$HOME/.cache/asyncfetch`, with the home directory from the passwd entry
/// when `HOME` is unset, empty or relative (`$HOME/.cache` is the XDG
/// default, so a relative one is as invalid as a relative `XDG_CACHE_HOME`:
/// it would make one cache per working directory). A relative `--cache-dir`
/// or `ASYNCFETCH_CACHE_DIR`, which name the cache itself, is taken from the
/// working directory. The result is `normalized`: `/tmp/c/` and `/tmp//./c` are
/// `/tmp/c`, so every path built on it reads `/tmp/c/<md5>`; a `..` after a
/// name that is not there goes with it (`foldingMissing`).
public enum CacheDirectory {
    public static func resolve(explicit: String?, environment: [String: String]) throws(DiskCacheError) -> String {
        try resolve(explicit: explicit) { environment[$0] }
    }

    /// Resolves against this process's environment (no Foundation needed).
    public static func resolve(explicit: String?) throws(DiskCacheError) -> String {
        try resolve(explicit: explicit) { name in getenv(name).map { String(cString: $0) } }
    }

    private static func resolve(explicit: String?, _ variable: (String) -> String?) throws(DiskCacheError) -> String {
        normalized(foldingMissing(try unnormalized(explicit: explicit, variable)))
    }

    /// A `..` after a name that is not there, folded with that name:
    /// `/a/missing/../b` is `/a/b`. The kernel cannot follow such a path
    /// (`missing` is not there to go through), so `cache list` found the
    /// cache absent while a run's `mkdir -p` made `/a/missing` to reach
    /// `/a/b`, used that cache, and printed every path through the folder it
    /// made. A name that is not there is no symbolic link, so folding it ends
    /// where `mkdir -p` does; a `..` after a name that is there is kept
    /// (through a link it is not the parent it seems). No I/O without a `..`.
    static func foldingMissing(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.hasPrefix("/"), parts.contains("..") else { return path }
        var kept: [Substring] = []
        var missing = 0   // how many of the last names in `kept` are not there
        for part in parts where part != "." {
            if part == ".." && missing > 0 {
                kept.removeLast()
                missing -= 1
                continue
            }
            kept.append(part)
            if missing > 0 {
                missing += 1   // inside a folder that is not there
            } else if part != ".." {
                var info = stat()
                if lstat("/" + kept.joined(separator: "/"), &info) != 0 && errno == ENOENT { missing = 1 }
            }
        }
        return "/" + kept.joined(separator: "/")
    }

    private static func unnormalized(explicit: String?, _ variable: (String) -> String?) throws(DiskCacheError) -> String {
        if let explicit {
            // An empty --cache-dir is a mistake (an unset shell variable), not a request for the default.
            guard !explicit.isEmpty else {
                throw DiskCacheError(.directory, path: "", message: "--cache-dir is empty: give a directory, or leave the option out for the default")
            }
            try refuseTilde(explicit, named: "--cache-dir ", variable)
            return absolute(explicit)
        }
        if let dir = variable("ASYNCFETCH_CACHE_DIR"), !dir.isEmpty {
            try refuseTilde(dir, named: "ASYNCFETCH_CACHE_DIR=", variable)
            return absolute(dir)
        }
        if let xdg = variable("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return join(xdg, "asyncfetch") }
        if let home = variable("HOME"), home.hasPrefix("/") { return join(home, ".cache/asyncfetch") }
        if let home = passwdHome() { return join(home, ".cache/asyncfetch") }
        throw DiskCacheError(.directory, path: "", message: "cannot find a cache directory: HOME is unset or relative and the user has no home directory; use --cache-dir")
    }

    /// A `~` only a shell expands, and not in quotes nor after `=`
    /// (`--cache-dir=~/c`, `ASYNCFETCH_CACHE_DIR='~/c'` in a unit file):
    /// taken as it is, it made a folder named `~` in the working directory,
    /// and the `rm -rf ~` that would tidy that up removes the home directory.
    private static func refuseTilde(_ path: String, named option: String, _ variable: (String) -> String?) throws(DiskCacheError) {
        guard path.hasPrefix("~") else { return }
        let rest = path.drop { $0 != "/" }
        let home = variable("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? passwdHome() ?? "$HOME"
        let meant = path.hasPrefix("~/") || path == "~" ? "write \(home)\(rest)" : "write the home directory out"
        throw DiskCacheError(.directory, path: path, message:
            "\(option)\(path): a leading '~' is expanded only by a shell (not in quotes, nor after '='); "
            + "\(meant), or ./\(path) for a folder named so")
    }

    /// Creates `path` and any missing parents with mode 0700 (directories
    /// that exist keep their mode), then checks that it is a directory this
    /// process can read and search, and one no other user could have planted
    /// files in (`checkTrusted`). Writing is checked where it happens (a
    /// read-only cache still answers `--offline` and fresh hits), or up front
    /// by `checkWritable`. Failures are `.directory` errors naming the path.
    public static func prepare(_ path: String) throws(DiskCacheError) {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw DiskCacheError.system("cannot use cache directory", path: path, kind: .directory)
            }
            try makeDirectories(path)
            guard stat(path, &info) == 0 else {
                throw DiskCacheError.system("cannot use cache directory", path: path, kind: .directory)
            }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw DiskCacheError(.directory, path: path, message: "cache directory \(path) exists but is not a directory",
                                 errno: ENOTDIR)
        }
        guard access(path, R_OK | X_OK) == 0 else {
            throw DiskCacheError.system("cannot read cache directory", path: path, kind: .directory)
        }
        try checkTrusted(path, info, what: "cache directory")
        // The folders inside that hold files on their way in (`.tmp`) and kept partial bodies (`.partial`).
        for folder in [CacheFileName.temporaryDirectory, DiskCacheStore.partialFolder] {
            let inner = join(path, folder)
            var innerInfo = stat()
            guard lstat(inner, &innerInfo) == 0 else { continue }   // absent: made 0700 when first needed
            if (innerInfo.st_mode & S_IFMT) == S_IFLNK {
                throw DiskCacheError(.directory, path: inner, message:
                    "cache folder \(inner) is a symbolic link, so files would go wherever it points; remove it (rm \(inner))")
            }
            try checkTrusted(inner, innerInfo, what: "cache folder", insideTheCache: true)
        }
    }

    /// Every path the tool hands out points into the cache, so nobody but this
    /// user (or root) may be able to put files there: a directory writable by
    /// other users (`o+w`, sticky or not) or owned by another user is refused,
    /// with how to fix it. Group-writable is not refused, but a cache is one
    /// user's (entries are 0600; another user's directory is refused): a team
    /// shares through the remote tier. `insideTheCache`: a folder of the
    /// cache's own (`.tmp`, `.partial`), never one to use as a cache.
    static func checkTrusted(_ path: String, _ info: stat, what: String, insideTheCache: Bool = false) throws(DiskCacheError) {
        let mode = info.st_mode & 0o7777
        let octal = String(mode, radix: 8)
        let shown = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
        if info.st_uid != geteuid() && info.st_uid != 0 {
            throw DiskCacheError(.directory, path: path, message:
                "\(what) \(path) belongs to another user (uid \(info.st_uid)), who could plant files in it; "
                + "use a directory of your own (--cache-dir DIR), or have it handed over (chown \(geteuid()) \(path))")
        }
        if mode & S_IWOTH != 0 {
            throw DiskCacheError(.directory, path: path, message:
                "\(what) \(path) is writable by other users (mode \(shown)), who could plant files in it; "
                + fix(path, mode, info, insideTheCache: insideTheCache))
        }
    }

    /// How to fix a directory others may write to. `chmod 700` only where
    /// it is this user's to change and not shared by design: a sticky one
    /// (`/tmp`, `/var/tmp`) is meant for everyone, and `chmod 700 /tmp` (as
    /// root, who may run it) would break the machine, so it gets a folder of
    /// its own inside; one another user (root) owns, its owner's chmod. A
    /// folder inside the cache is this user's to `chmod`, sticky or not.
    private static func fix(_ path: String, _ mode: mode_t, _ info: stat, insideTheCache: Bool) -> String {
        if mode & S_ISVTX != 0 && !insideTheCache {
            return "it is a shared directory (as /tmp is), so use a folder of your own in it, made with mode 0700: "
                + "--cache-dir \(join(path, "asyncfetch-" + userName()))"
        }
        if info.st_uid != geteuid() {
            return "have its owner run chmod 700 \(path), or use a directory of your own (--cache-dir DIR)"
        }
        return "run chmod 700 \(path)"
    }

    /// This user's login name (`getpwuid_r`), else the uid.
    private static func userName() -> String {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: CacheDefaults.passwdBufferBytes)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name,
              name.pointee != 0 else { return String(geteuid()) }
        return String(cString: name)
    }

    /// Whether nothing is at `path` though a cache directory could be made
    /// there: a command that only reads the cache finds no entries in it,
    /// and leaves it unmade. Whether it could be made is tried: a folder of
    /// a name of its own (`.asyncfetch-probe.<pid>.<n>`) is made in the
    /// deepest folder on the way that exists, and at once removed. Never the
    /// cache's own folders: a run creating the same directory at that
    /// moment takes one it finds (`mkdir -p`), and a probe that made and
    /// removed it lost the run its parent, or its whole cache directory
    /// (`CacheDirectoryRaceTests`). False for a directory that is there, and
    /// for one that could not be made (behind a symbolic link to nothing, or
    /// anything else odd), which `prepare` then reports as for any command.
    public static func isAbsent(_ path: String) -> Bool {
        var info = stat()
        guard path.hasPrefix("/"), stat(path, &info) != 0, errno == ENOENT else { return false }
        var parent = "/"
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            let prefix = join(parent, String(component))
            if stat(prefix, &info) == 0 {
                parent = prefix
                continue
            }
            // A name that is there though `stat` finds nothing is a symbolic link to nothing (a
            // cache on a drive not mounted): not absent, `prepare` says it cannot be made.
            guard errno == ENOENT, lstat(prefix, &info) != 0 else { return false }
            return canMakeFolder(in: parent)
        }
        return false   // it appeared meanwhile: there to be opened
    }

    /// Whether this process may make a folder in `parent`: one is made and removed.
    private static func canMakeFolder(in parent: String) -> Bool {
        for attempt in 0..<CacheDefaults.probeNameAttempts {
            let probe = join(parent, ".asyncfetch-probe.\(getpid()).\(attempt)")
            if mkdir(probe, 0o700) == 0 { return rmdir(probe) == 0 }
            guard errno == EEXIST else { return false }
        }
        return false
    }

    /// Throws a `.directory` error naming `path` unless this process may
    /// create and remove files in it (read-only filesystem, permissions).
    public static func checkWritable(_ path: String) throws(DiskCacheError) {
        guard access(path, W_OK | X_OK) == 0 else {
            throw DiskCacheError.system("cannot write cache directory", path: path, kind: .directory)
        }
    }

    private static func makeDirectories(_ path: String) throws(DiskCacheError) {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 {
                // Ours, just made: make sure a restrictive umask left it usable and 0700.
                guard chmod(prefix, 0o700) == 0 else {
                    throw DiskCacheError.system("cannot set the mode of", path: prefix, kind: .directory)
                }
            } else if errno != EEXIST {
                let code = errno
                let reason = prefix == path ? "" : " (\(prefix))"
                throw DiskCacheError(.directory, path: path, message:
                    "cannot create cache directory \(path)\(reason): \(String(cString: strerror(code)))", errno: code)
            }
        }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return join(String(cString: cwd), path)
    }

    /// `path` without empty or `.` components: no trailing slash, no `//`,
    /// no `/./` (`/` stays `/`; a relative path that names `.` alone is `.`).
    /// `..` is kept: through a symbolic link it is not the parent it seems.
    public static func normalized(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let joined = parts.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty && !path.isEmpty ? "." : joined
    }

    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }

    /// The home directory in this user's passwd entry (`getpwuid_r`: thread-safe).
    private static func passwdHome() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: CacheDefaults.passwdBufferBytes)
        let status = getpwuid_r(getuid(), &entry, &buffer, buffer.count, &found)
        guard status == 0, found != nil, let dir = entry.pw_dir else { return nil }
        let home = String(cString: dir)
        return home.isEmpty ? nil : home
    }
}

extension CacheDirectory {
    /// Whether a file at `path` lies directly in the cache directory
    /// `directory`: its folder is that directory, or the folder of what it
    /// resolves to is (a symbolic link to an entry's own body). A folder
    /// inside the cache directory does not count. Such a file could replace,
    /// or be, a cache entry (`-o FILE` is refused there, as `--output-dir` of
    /// the directory itself is).
    public static func holds(file path: String, directory: String) -> Bool {
        var cache = stat()
        guard stat(directory, &cache) == 0 else { return false }
        func parent(_ file: String) -> String {
            guard let slash = file.lastIndex(of: "/") else { return "." }
            return slash == file.startIndex ? "/" : String(file[..<slash])
        }
        var folders = [parent(path)]
        if let resolved = realpath(path, nil) {
            folders.append(parent(String(cString: resolved)))
            free(resolved)
        }
        return folders.contains { folder in
            var found = stat()
            return stat(folder, &found) == 0 && found.st_dev == cache.st_dev && found.st_ino == cache.st_ino
        }
    }
}
