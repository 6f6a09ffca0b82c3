import Foundation
import Glibc

// glibc 2.34+ has these file actions, but declares them under _GNU_SOURCE, which the Glibc
// module does not export: look them up at run time (as PosixSupport does accept4 and pipe2).
private typealias AddCloseFromFn = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
private typealias AddChdirFn = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

private let addCloseFrom: AddCloseFromFn? = {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFromFn.self) }
}()

private let addChdir: AddChdirFn? = {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChdirFn.self) }
}()

extension ChildProcess {
    /// A started child: its pid and this process's pipe ends (-1 where a stream is /dev/null).
    struct Spawned {
        let pid: pid_t
        let stdin: Int32
        let stdout: Int32
        let stderr: Int32
    }

    /// `posix_spawn` with the streams, signals, descriptors and directory the type's comment
    /// describes. On success the child's pipe ends are closed here (EOF comes when the child's
    /// copies close); on failure every descriptor made here is.
    static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]?,
                      streams: (stdin: Stream, stdout: Stream, stderr: Stream), directory: String?,
                      blockedSignals: [Int32]) throws -> Spawned {
        var actions = posix_spawn_file_actions_t()
        try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        try check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
        defer { posix_spawnattr_destroy(&attributes) }

        var childEnds: [Int32] = []   // closed here in any case, once the child has its copies
        var ourEnds: [Int32] = []     // handed to the caller, or closed here on failure
        var handedOver = false
        defer {
            for fd in childEnds {
                let closed = close(fd), error = errno
                if closed != 0 {
                    reportFailure { throw TestSupportError.posix("close(\(fd)), the child's end of a pipe", error) }
                }
            }
            if !handedOver { ourEnds.forEach(tsClose) }
        }
        func connect(_ stream: Stream, as target: Int32) throws -> Int32 {
            switch stream {
            case .null:
                try check("posix_spawn_file_actions_addopen(\(target), /dev/null)", posix_spawn_file_actions_addopen(
                    &actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0))
                return -1
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard ends.withUnsafeMutableBufferPointer({ tsPipeCloexec($0.baseAddress!) }) == 0 else {
                    throw TestSupportError.posix("pipe for the child's descriptor \(target)", errno)
                }
                let (child, ours) = target == STDIN_FILENO ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(child)
                ourEnds.append(ours)
                try check("posix_spawn_file_actions_adddup2(\(child), \(target))",
                          posix_spawn_file_actions_adddup2(&actions, child, target))
                return ours
            }
        }
        let stdin = try connect(streams.stdin, as: STDIN_FILENO)
        let stdout = try connect(streams.stdout, as: STDOUT_FILENO)
        let stderr = try connect(streams.stderr, as: STDERR_FILENO)
        guard let addCloseFrom else {
            throw TestSupportError.message("posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later needed)")
        }
        try check("posix_spawn_file_actions_addclosefrom_np(3)", addCloseFrom(&actions, 3))
        if let directory {
            guard let addChdir else {
                throw TestSupportError.message("posix_spawn_file_actions_addchdir_np is missing (glibc 2.29 or later needed)")
            }
            try check("posix_spawn_file_actions_addchdir_np(\(directory))", addChdir(&actions, directory))
        }
        try setSignals(&attributes, blocked: blockedSignals)

        var merged = ProcessInfo.processInfo.environment
        if let environment { merged.merge(environment) { _, new in new } }
        let argv = try cStrings([executable] + arguments)
        let envp = try cStrings(merged.map { "\($0.key)=\($0.value)" })
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        try check("posix_spawn(\(executable))", posix_spawn(&pid, executable, &actions, &attributes, argv, envp))
        handedOver = true
        return Spawned(pid: pid, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// An empty mask but `blocked`, and every signal that can be caught at its default disposition.
    private static func setSignals(_ attributes: inout posix_spawnattr_t, blocked: [Int32]) throws {
        var mask = sigset_t(), defaults = sigset_t()
        guard sigemptyset(&mask) == 0, sigfillset(&defaults) == 0,
              sigdelset(&defaults, SIGKILL) == 0, sigdelset(&defaults, SIGSTOP) == 0 else {
            throw TestSupportError.posix("sigemptyset/sigfillset/sigdelset", errno)
        }
        for signal in blocked {
            guard sigaddset(&mask, signal) == 0 else { throw TestSupportError.posix("sigaddset(\(signal))", errno) }
        }
        try check("posix_spawnattr_setsigmask", posix_spawnattr_setsigmask(&attributes, &mask))
        try check("posix_spawnattr_setsigdefault", posix_spawnattr_setsigdefault(&attributes, &defaults))
        try check("posix_spawnattr_setflags",
                  posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))
    }

    /// A NULL-terminated array of `strdup` copies, for argv and envp; the caller frees them.
    private static func cStrings(_ strings: [String]) throws -> [UnsafeMutablePointer<CChar>?] {
        var copies: [UnsafeMutablePointer<CChar>?] = []
        for string in strings {
            guard let copy = strdup(string) else {
                copies.forEach { free($0) }
                throw TestSupportError.posix("strdup", errno)
            }
            copies.append(copy)
        }
        return copies + [nil]
    }

    /// posix_spawn and its helpers return the error number instead of setting errno.
    private static func check(_ call: String, _ result: Int32) throws {
        if result != 0 { throw TestSupportError.posix(call, result) }
    }
}
