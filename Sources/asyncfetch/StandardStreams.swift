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
enum StandardStreams {
    /// Why a closed descriptor could not be reserved (no `/dev/null`):
    /// the run must not start, or its results could go into a descriptor
    /// the process opened for something else.
    static var reservationProblem: UsageError? {
        let code = cstartup_reserve_errno()
        guard code != 0 else { return nil }
        let name = ["standard input", "standard output", "standard error"][Int(max(0, min(2, cstartup_failed_descriptor())))]
        return UsageError(environment: "\(name) is closed, and /dev/null could not be opened in its place: \(String(cString: strerror(code)))")
    }
}
