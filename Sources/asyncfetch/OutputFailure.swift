import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// What a failed write of results means for the exit status. A reader that
/// went away (`EPIPE`, as with `| head`) ends the run with 141, as SIGPIPE
/// would have; any other error (a full disk, an I/O error) is a failure on
/// stderr with status 1, never a silent success: a script must not take
/// missing results for a good run.
enum OutputFailure {
    static func error(errno code: Int32, what: String = "standard output") -> Error {
        if code == EPIPE { return ExitCode(128 + SIGPIPE) }
        return RuntimeFailure("cannot write \(what): \(String(cString: strerror(code)))")
    }
}
