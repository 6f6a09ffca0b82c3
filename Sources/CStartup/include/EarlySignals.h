// SIGINT and SIGTERM before a run's handler exists: see EarlySignals.c.
#ifndef ASYNCFETCH_EARLYSIGNALS_H
#define ASYNCFETCH_EARLYSIGNALS_H

/// A run takes SIGINT and SIGTERM over: from now on each one's number is
/// written to `fd` (the write end of the run's self-pipe). The handler is
/// installed where start-up did not (an inherited SIG_IGN). Returns the
/// signal that came before (the run's first), 0 if none, or -1 with errno
/// set (sigaction).
int cstartup_hand_over_signals(int fd);

/// The process will not run a batch (a `cache` command, --help, --version,
/// a usage error): SIGINT and SIGTERM get their default disposition back,
/// and one that came before ends the process now, killed by it. Does
/// nothing after `cstartup_hand_over_signals`.
void cstartup_signals_default(void);

/// A run ignores SIGPIPE: a closed stdout (or a peer gone) shows up as EPIPE
/// instead of killing the process. 0, or -1 with errno set (sigaction).
int cstartup_ignore_sigpipe(void);

#endif
