import Foundation
import Glibc

/// Runs `executable` with `signals` already pending when its own code starts:
/// the child starts with SIGINT and SIGTERM blocked (the mask a child
/// inherits; their dispositions the default) as a one-line Perl wrapper
/// (`/usr/bin/perl`, Debian's essential perl-base) that sends itself each of
/// `signals` and then execs `executable`. A blocked signal stays pending
/// through `execve`, so it waits there until a thread of `executable` takes
/// it: the earliest moment a signal can reach a program, whatever the load.
/// (Sent by this process after `posix_spawn` returned, a signal came late
/// when this thread was descheduled: the child had begun its run by then.)
/// Foundation's `Process` always starts a child with an empty mask, hence
/// `posix_spawn` here. Standard output and error go to files in `directory`;
/// standard input is /dev/null. The child is killed (SIGKILL) after `timeout`
/// seconds, and `timedOut` is then true.
public func runWithSignalsPending(_ executable: String, _ arguments: [String], environment: [String: String],
                                  signals: [Int32], directory: String, timeout: Double = 30) throws -> ProcessResult {
    let outPath = directory + "/pending-\(UUID().uuidString).out"
    let errPath = outPath.dropLast(4) + ".err"
    defer {
        unlink(outPath)
        unlink(String(errPath))
    }
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    try check("posix_spawn_file_actions_init", posix_spawn_file_actions_init(&actions))
    defer { posix_spawn_file_actions_destroy(&actions) }
    try check("posix_spawnattr_init", posix_spawnattr_init(&attributes))
    defer { posix_spawnattr_destroy(&attributes) }
    try check("addopen", posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0))
    try check("addopen", posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600))
    try check("addopen", posix_spawn_file_actions_addopen(&actions, 2, String(errPath), O_WRONLY | O_CREAT | O_TRUNC, 0o600))
    var both = sigset_t()
    sigemptyset(&both)
    sigaddset(&both, SIGINT)
    sigaddset(&both, SIGTERM)
    try check("setsigmask", posix_spawnattr_setsigmask(&attributes, &both))
    try check("setsigdefault", posix_spawnattr_setsigdefault(&attributes, &both))
    try check("setflags", posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))

    var merged = ProcessInfo.processInfo.environment
    merged.merge(environment) { _, new in new }
    // `perl -e SCRIPT SIGNALS EXECUTABLE ARGUMENTS...`: exec's first argument is the program, the
    // list its argv (its argv[0] the executable's path, as a direct spawn gave).
    let script = "kill $_, $$ for split /,/, shift; exec { $ARGV[0] } @ARGV; die \"exec $ARGV[0]: $!\\n\""
    let wrapped = ["perl", "-e", script, signals.map(String.init).joined(separator: ","), executable] + arguments
    let argv = wrapped.map { strdup($0) } + [nil]
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    try check("posix_spawn", posix_spawn(&pid, "/usr/bin/perl", &actions, &attributes, argv, envp))

    let deadline = Date().addingTimeInterval(timeout)
    var status: Int32 = 0
    var timedOut = false
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid { break }
        if done == -1 && errno != EINTR { throw TestSupportError.posix("waitpid", errno) }
        if Date() > deadline && !timedOut {
            timedOut = true
            _ = kill(pid, SIGKILL)
        }
        usleep(2_000)
    }
    let killedBy = status & 0x7f
    let exited = killedBy == 0
    return ProcessResult(status: exited ? (status >> 8) & 0xff : 128 + killedBy, signal: exited ? nil : killedBy,
                         timedOut: timedOut, stdoutBytes: Array((try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data()),
                         stderrBytes: Array((try? Data(contentsOf: URL(fileURLWithPath: String(errPath)))) ?? Data()))
}

private func check(_ call: String, _ result: Int32) throws {
    if result != 0 { throw TestSupportError.posix(call, result) }
}
