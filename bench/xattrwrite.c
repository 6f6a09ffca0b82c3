/* Issue 22 item 4: the cost of an entry's record on ext4. Writes COUNT new
 * files of BODY bytes into DIR (created), each with a `user.asyncfetch.meta`
 * attribute of RECORD bytes: open, write, fsetxattr, close per file, as the
 * cache's write path does without its O_TMPFILE and link. The bodies are the
 * same bytes every time; the records differ per file (no shared xattr block).
 *
 *   cc -O2 -o xattrwrite bench/xattrwrite.c && ./xattrwrite DIR 10000 12420 473
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s DIR COUNT BODY-BYTES RECORD-BYTES\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    long count = atol(argv[2]), body = atol(argv[3]), record = atol(argv[4]);
    if (count <= 0 || body < 0 || record < 8 || record > 4000) {
        fprintf(stderr, "bad sizes\n");
        return 2;
    }
    if (mkdir(dir, 0755) != 0) { perror(dir); return 1; }
    char *data = malloc((size_t)body + 1), *meta = malloc((size_t)record);
    if (!data || !meta) { perror("malloc"); return 1; }
    for (long i = 0; i < body; i++) data[i] = (char)(i * 131 + 7);
    memset(meta, 'm', (size_t)record);
    char path[4096];
    for (long i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%032lx", dir, i);
        snprintf(meta, (size_t)record, "%016lx", i);   /* a distinct record per file */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) { perror(path); return 1; }
        if (write(fd, data, (size_t)body) != body) { perror("write"); return 1; }
        if (fsetxattr(fd, "user.asyncfetch.meta", meta, (size_t)record, 0) != 0) { perror("fsetxattr"); return 1; }
        if (close(fd) != 0) { perror("close"); return 1; }
    }
    free(data);
    free(meta);
    return 0;
}
