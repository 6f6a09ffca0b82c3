#define _GNU_SOURCE   // pipe2, pwritev2, RWF_NOWAIT
#include "CLoader.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

int cloader_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

long cloader_write_nowait(int fd, const void *buffer, unsigned long count) {
    struct iovec part = { (void *)buffer, count };
    return (long)pwritev2(fd, &part, 1, -1, RWF_NOWAIT);
}
