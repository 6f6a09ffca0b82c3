/* What a hit's system calls cost, without asyncfetch around them: for every
 * file of DIR named by 32 characters (a cache's bodies), the calls MODE asks
 * for, relative to DIR as a hit makes them; prints the CPU (getrusage) per
 * file, best of PASSES.
 *
 *   MODE 1  getxattrat(DIR, name, "user.asyncfetch.meta") into a buffer of SIZE bytes (the record)
 *   MODE 2  fstatat(DIR, name, AT_SYMLINK_NOFOLLOW)                        (the body's stat)
 *   MODE 4  getxattrat(DIR, name, "user.h")                              (a small attribute)
 *   sums of them: 3 = a hit as asyncfetch makes it, 6 = a small attribute and the stat
 *
 * Build: cc -O2 -o xattrread xattrread.c (Linux 6.13+: getxattrat).
 * Usage: xattrread DIR MODE SIZE [PASSES]   (bench/history/hits.md, session 26) */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_getxattrat
#define SYS_getxattrat 464
#endif

struct xattr_args { unsigned long long value; unsigned size; unsigned flags; };

static double cpu_seconds(void) {
    struct rusage r;
    if (getrusage(RUSAGE_SELF, &r) != 0) { perror("getrusage"); exit(2); }
    return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

static long get(int dirfd, const char *name, const char *attribute, void *buffer, size_t size) {
    struct xattr_args args = { (unsigned long long)(unsigned long)buffer, (unsigned)size, 0 };
    return syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute, &args, sizeof args);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: xattrread DIR MODE SIZE [PASSES]\n"); return 2; }
    const char *dir = argv[1];
    char *end;
    long mode = strtol(argv[2], &end, 10);
    if (*end != '\0' || mode < 1 || mode > 7) { fprintf(stderr, "MODE: 1 to 7 (1 the record, 2 stat, 4 user.h)\n"); return 2; }
    long sized = strtol(argv[3], &end, 10);
    if (*end != '\0' || sized < 1) { fprintf(stderr, "SIZE: a number of bytes\n"); return 2; }
    size_t size = (size_t)sized;
    long passes = argc > 4 ? strtol(argv[4], &end, 10) : 3;
    if (argc > 4 && (*end != '\0' || passes < 1)) { fprintf(stderr, "PASSES: a number, at least 1\n"); return 2; }
    static char names[100000][33];
    static char buffer[65536];
    if (size > sizeof buffer) size = sizeof buffer;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
    DIR *listing = opendir(dir);
    if (dirfd < 0 || !listing) { perror(dir); return 2; }
    int n = 0;
    for (struct dirent *e; (e = readdir(listing)) && n < 100000;)
        if (strlen(e->d_name) == 32) memcpy(names[n++], e->d_name, 33);
    if (closedir(listing) != 0) { perror("closedir"); return 2; }
    if (n == 0) { fprintf(stderr, "no entries in %s\n", dir); return 2; }
    double best = 1e9;
    long failed = 0;
    for (int pass = 0; pass < passes; pass++) {
        double start = cpu_seconds();
        failed = 0;
        for (int i = 0; i < n; i++) {
            struct stat st;
            if ((mode & 1) && get(dirfd, names[i], "user.asyncfetch.meta", buffer, size) <= 0) failed++;
            if ((mode & 2) && fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) failed++;
            if ((mode & 4) && get(dirfd, names[i], "user.h", buffer, size) <= 0) failed++;
        }
        double perFile = (cpu_seconds() - start) / n * 1e6;
        if (perFile < best) best = perFile;
    }
    printf("%s mode %ld size %zu: %.2f us a file (best of %ld, %d files, %ld calls failed)\n", dir, mode, size, best, passes, n, failed);
    return failed ? 1 : 0;
}
