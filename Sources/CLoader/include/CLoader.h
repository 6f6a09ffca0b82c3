// The C that Loader needs and Swift's Glibc module does not bring, declared
// only under _GNU_SOURCE: pipe2(2) and pwritev2(2)'s RWF_NOWAIT. Only
// Sources/Loader/Input/SelfPipe.swift and
// Sources/Loader/Loading/CancellableWrite.swift import it.
#ifndef ASYNCFETCH_CLOADER_H
#define ASYNCFETCH_CLOADER_H

/// A pipe whose two ends are close-on-exec from the start (pipe2 with
/// O_CLOEXEC): fds[0] reads, fds[1] writes. 0, or -1 with errno set.
int cloader_pipe_cloexec(int fds[2]);

/// write(2) that never waits, without O_NONBLOCK (which lives on the open
/// file, shared with whoever else holds it): pwritev2 at the current offset
/// with RWF_NOWAIT. Bytes written, or -1 with errno set: EAGAIN when a pipe
/// or socket has no room; EOPNOTSUPP where the file does not support it (a
/// regular file's buffered write, a terminal; Linux before 6.4 for pipes).
long cloader_write_nowait(int fd, const void *buffer, unsigned long count);

#endif
