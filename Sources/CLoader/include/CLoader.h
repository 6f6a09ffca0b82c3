// The C that Loader needs and Swift's Glibc module does not bring:
// pipe2(2), declared only under _GNU_SOURCE. Only
// Sources/Loader/Input/SelfPipe.swift imports it.
#ifndef ASYNCFETCH_CLOADER_H
#define ASYNCFETCH_CLOADER_H

/// A pipe whose two ends are close-on-exec from the start (pipe2 with
/// O_CLOEXEC): fds[0] reads, fds[1] writes. 0, or -1 with errno set.
int cloader_pipe_cloexec(int fds[2]);

#endif
