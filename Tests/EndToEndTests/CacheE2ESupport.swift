import Foundation
import Glibc
import TestSupport

/// Helpers for the cache's end-to-end tests: reading entries the way a user
/// would (files, `md5sum`), and privileged set-ups (tmpfs mounts, running as
/// `nobody`) that are probed once and skipped with a reason where the
/// machine does not allow them.
enum CacheE2E {
    /// `mount -t tmpfs` works here (root in a VM or a privileged container).
    static let canMount: Bool = {
        guard let temp = try? TempDirectory(prefix: "asyncfetch-mount-probe") else { return false }
        guard let mount = try? TmpfsMount(at: temp.path + "/m", size: "64k") else { return false }
        let readOnly = (try? mount.remountReadOnly()) != nil
        mount.unmount()
        return readOnly
    }()

    /// `setpriv` can run a child as `nobody` (we are root), so permission bits apply to it.
    static let canDropPrivileges: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let result = try? runProcess("/usr/bin/setpriv", nobody + ["/usr/bin/id", "-u"])
        return result?.status == 0 && result?.stdout == "65534\n"
    }()

    static let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

    /// The key file name of a URL already in normal form.
    static func key(_ url: String) throws -> String { try CLI.md5sum(url) }

    /// The fields of a `.meta` file (`h` lines as "h Name" keys).
    /// The fields of an entry's metadata: the record on the body (the
    /// extended attribute `user.asyncfetch.meta`, read with Python's
    /// `os.getxattr`), else its sidecar `<body>.meta`.
    static func metadata(body path: String) -> [String: String]? {
        let script = "import os,sys\ntry: sys.stdout.buffer.write(os.getxattr(sys.argv[1], 'user.asyncfetch.meta'))\nexcept OSError: sys.exit(1)"
        if let result = try? runProcess("/usr/bin/python3", ["-c", script, path]), result.status == 0 {
            return fields(result.stdout)
        }
        return metadata(path + ".meta")
    }

    /// The fields of a sidecar file.
    static func metadata(_ path: String) -> [String: String]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return fields(text)
    }

    static func fields(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            if parts[0] == "h" {
                let header = parts[1].split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                fields["h " + header[0].lowercased()] = header.count > 1 ? String(header[1]) : ""
            } else {
                fields[String(parts[0])] = String(parts[1])
            }
        }
        return fields
    }

    /// `xxhsum -H2` (XXH3-128) of a file, as the metadata records it.
    static func xxh3(file: String) throws -> String {
        let result = try runProcess("/usr/bin/xxhsum", ["-H2", file])
        return String(result.stdout.split(separator: " ").first ?? "")
    }

    /// Open files of process `pid` that have no name in `directory` (a body
    /// being written with `O_TMPFILE` shows in /proc as `DIR/#inode (deleted)`).
    static func unnamedFiles(of pid: Int32, in directory: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.filter { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)") else { return false }
            return target.hasPrefix(directory + "/#") && target.hasSuffix("(deleted)")
        }.count
    }

    /// `md5sum` of files, by path.
    static func md5(files: [String]) throws -> [String: String] {
        guard !files.isEmpty else { return [:] }
        let result = try runProcess("/usr/bin/md5sum", files)
        var sums: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            sums[String(parts[1].drop { $0 == " " || $0 == "*" })] = String(parts[0])
        }
        return sums
    }

    /// Regular files in `dir` (non-recursive, hidden included).
    static func files(in dir: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { name in
            var info = stat()
            return lstat(dir + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }.sorted()
    }

    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o7777
    }
}

/// A tmpfs (or another memory file system: ramfs has no user extended
/// attributes) mounted on a fresh directory, unmounted (lazily) when done.
final class TmpfsMount: @unchecked Sendable {
    let path: String
    private var mounted = true

    /// `inodes`: a tmpfs's limit on inodes (its root's included), which also
    /// bounds the room for extended attributes (Linux 6.6+).
    init(at path: String, size: String, type: String = "tmpfs", inodes: Int? = nil) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let options = type == "tmpfs" ? "size=\(size),mode=0755" + (inodes.map { ",nr_inodes=\($0)" } ?? "") : "mode=0755"
        let result = try runProcess("/bin/mount", ["-t", type, "-o", options, type, path], timeout: 10)
        guard result.status == 0 else {
            mounted = false
            throw TestSupportError.message("mount \(type) on \(path): \(result.stderr)")
        }
    }

    func remountReadOnly() throws {
        let result = try runProcess("/bin/mount", ["-o", "remount,ro", path], timeout: 10)
        guard result.status == 0 else { throw TestSupportError.message("remount ro \(path): \(result.stderr)") }
    }

    func unmount() {
        guard mounted else { return }
        mounted = false
        _ = try? runProcess("/bin/umount", ["-l", path], timeout: 10)
    }

    deinit { unmount() }
}
