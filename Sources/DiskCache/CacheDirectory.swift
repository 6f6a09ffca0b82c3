#if canImport(Glibc)
import Glibc
#endif

/// Where the cache lives (SPEC §4): `--cache-dir`, else
/// `$ASYNCFETCH_CACHE_DIR`, else `$XDG_CACHE_HOME/asyncfetch` when that is an
/// absolute path (the XDG spec says to ignore a relative one), else
/// `$HOME/.cache/asyncfetch`, with HOME from the passwd entry when unset.
public enum CacheDirectory {
    public static func resolve(explicit: String?, environment: [String: String]) throws(DiskCacheError) -> String {
        if let explicit, !explicit.isEmpty { return absolute(explicit) }
        if let dir = environment["ASYNCFETCH_CACHE_DIR"], !dir.isEmpty { return absolute(dir) }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return join(xdg, "asyncfetch") }
        if let home = environment["HOME"], !home.isEmpty { return join(home, ".cache/asyncfetch") }
        if let home = passwdHome() { return join(home, ".cache/asyncfetch") }
        throw DiskCacheError(.directory, path: "", message: "cannot find a cache directory: HOME is unset and the user has no home directory; use --cache-dir")
    }

    /// Creates `path` and any missing parents with mode 0700 (existing
    /// directories keep their mode), then checks that it is a writable
    /// directory. Failures are `.directory` errors naming the path.
    public static func prepare(_ path: String) throws(DiskCacheError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw DiskCacheError(.directory, path: path, message: "cache directory \(path) exists but is not a directory")
            }
        } else {
            try makeDirectories(path)
        }
        guard access(path, W_OK | X_OK) == 0 else {
            throw DiskCacheError.system("cannot write cache directory", path: path, kind: .directory)
        }
    }

    private static func makeDirectories(_ path: String) throws(DiskCacheError) {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw DiskCacheError.system("cannot create cache directory", path: prefix, kind: .directory)
            }
        }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return join(String(cString: cwd), path)
    }

    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }

    private static func passwdHome() -> String? {
        guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir else { return nil }
        let home = String(cString: dir)
        return home.isEmpty ? nil : home
    }
}
