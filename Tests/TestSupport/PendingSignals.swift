import Glibc

/// Runs `executable` with `signals` already pending when its own code starts:
/// the child starts with SIGINT and SIGTERM blocked (the mask a child
/// inherits; every disposition the default) as a one-line Perl wrapper
/// (`/usr/bin/perl`, Debian's essential perl-base) that sends itself each of
/// `signals` and then execs `executable`. A blocked signal stays pending
/// through `execve`, so it waits there until a thread of `executable` takes
/// it: the earliest moment a signal can reach a program, whatever the load.
/// (Sent by this process after `posix_spawn` returned, a signal came late
/// when this thread was descheduled: the child had begun its run by then.)
/// `environment` is merged over this process's; standard input is /dev/null.
/// The child is killed (SIGKILL) after `timeout` seconds, and `timedOut` is then true.
public func runWithSignalsPending(_ executable: String, _ arguments: [String], environment: [String: String],
                                  signals: [Int32], timeout: Double = 30) throws -> ProcessResult {
    // `perl -e SCRIPT SIGNALS EXECUTABLE ARGUMENTS...`: exec's first argument is the program, the
    // list its argv (its argv[0] the executable's path, as a direct spawn gave).
    let script = "kill $_, $$ for split /,/, shift; exec { $ARGV[0] } @ARGV; die \"exec $ARGV[0]: $!\\n\""
    let wrapped = ["-e", script, signals.map(String.init).joined(separator: ","), executable] + arguments
    return try SpawnedProcess(executable: "/usr/bin/perl", arguments: wrapped, environment: environment, stdin: nil,
                              timeout: timeout, blockedSignals: [SIGINT, SIGTERM]).wait()
}
