import CStartup
#if canImport(Glibc)
import Glibc
#endif

/// Descriptors 0, 1 and 2 as the process found them. The C corner
/// (`Sources/CStartup`) reserves a closed one before anything else runs,
/// so that no descriptor the process opens takes its number; reads of a
/// reserved stdin and writes to a reserved stdout or stderr still fail with
/// `EBADF`, as on a closed descriptor. With stdout closed the run goes on
/// and its results are a failed write (`OutputFailure`: exit status 1,
/// "cannot write standard output: Bad file descriptor"); with stderr closed
/// messages are lost and the exit status still tells.
///
/// Where one cannot be reserved (no `/dev/null`), the corner ends the
/// process itself, with status 2 and the reason on stderr, before any
/// library initialises: from then on any file opened could take the number.
enum StandardStreams {
    /// True once the process is past that point (it always is when Swift
    /// code runs). Asking keeps the corner, and its `.preinit_array` entry,
    /// linked into the executable.
    static var reserved: Bool { cstartup_reserve_errno() == 0 }

    /// Whether stdin is a pipe, a socket or a regular file that is not
    /// empty: something given to read, not a terminal or cron's `/dev/null`.
    static var inputIsPipeOrFile: Bool {
        var info = stat()
        guard fstat(0, &info) == 0 else { return false }
        switch info.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return true
        case S_IFREG: return info.st_size > 0
        default: return false
        }
    }
}
