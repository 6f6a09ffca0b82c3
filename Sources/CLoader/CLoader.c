#define _GNU_SOURCE   // pipe2
#include "CLoader.h"

#include <fcntl.h>
#include <unistd.h>

int cloader_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
