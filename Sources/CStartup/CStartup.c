#define _GNU_SOURCE   // dup3
#include "CStartup.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// Reserves descriptors 0, 1 and 2 when the process starts with one closed
// (`asyncfetch URL >&-`). Otherwise the first descriptor the process opens
// takes its number: libdispatch's eventfd took 1, result lines went into
// it (an 8-byte write would have been read as a wake-up) or failed with
// EINVAL, and a read of `-i -` read the eventfd.
//
// A closed descriptor gets /dev/null opened the other way round (stdin for
// writing, stdout and stderr for reading): the number is taken, and every
// read of stdin, or write to stdout or stderr, still fails with EBADF, as it
// would on the closed descriptor. The tool then reports lost results as it
// reports any failed write, and its exit status stays true. O_CLOEXEC: a
// child process sees the descriptor closed, as the user left it.
//
// It runs from .preinit_array: before the initialisers of every shared
// library (libdispatch.so in a debug build) and of the executable itself
// (libdispatch is linked statically into a release build), so nothing can
// have opened a descriptor yet.

static int reserve_errno = 0;
static int failed_descriptor = -1;

static int fail(int fd) {
    reserve_errno = errno;
    failed_descriptor = fd;
    return -1;
}

// A descriptor that cannot be reserved (no /dev/null: a chroot or a
// container without /dev) ends the process here, with status 2 (a problem
// of the machine, as a bad cache directory is), before anything else runs:
// any later open could take the free number, and a write meant for stdout
// or stderr would land in that file. The reason goes to stderr only when
// stderr is the descriptor the process was given (open at start, and not
// the one that failed).
static void refuse_to_start(int stderr_given) {
    if (stderr_given) {
        static const char *const names[] = {"standard input", "standard output", "standard error"};
        char line[256];
        int length = snprintf(line, sizeof line,
                              "asyncfetch: %s is closed, and /dev/null could not be opened in its place: %s\n",
                              names[failed_descriptor], strerror(reserve_errno));
        if (length > 0) {
            size_t left = (size_t)length < sizeof line ? (size_t)length : sizeof line - 1;
            const char *next = line;
            while (left > 0) {
                ssize_t written = write(2, next, left);
                if (written < 0 && errno == EINTR) continue;
                if (written <= 0) break;   // nowhere else to say it; the status tells
                next += written;
                left -= (size_t)written;
            }
        }
    }
    _exit(2);
}

static int reserve(int fd) {
    if (fcntl(fd, F_GETFD) != -1) return 0;
    if (errno != EBADF) return fail(fd);
    int opened = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (opened == -1) return fail(fd);
    if (opened == fd) return 0;
    // Not reached while the lower descriptors are open (open takes the
    // lowest free number); kept correct all the same.
    if (dup3(opened, fd, O_CLOEXEC) == -1) {
        int saved = errno;
        (void)close(opened);
        errno = saved;
        return fail(fd);
    }
    if (close(opened) == -1) return fail(fd);
    return 0;
}

static void reserve_standard_descriptors(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    int saved = errno;
    int stderr_given = fcntl(2, F_GETFD) != -1;
    for (int fd = 0; fd <= 2; fd++) {
        if (reserve(fd) == -1) refuse_to_start(stderr_given && fd != 2);
    }
    errno = saved;
}

__attribute__((section(".preinit_array"), used))
static void (*const reserve_at_start)(int, char **, char **) = reserve_standard_descriptors;

int cstartup_reserve_errno(void) { return reserve_errno; }
