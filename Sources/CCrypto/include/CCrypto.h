// The C that DiskCache needs: MD5 through OpenSSL (its low-level MD5() and
// MD5_Init/Update/Final, which need no provider set-up), and the calls
// Swift's Glibc module does not bring: the extended-attribute calls of
// <sys/xattr.h> (and getxattrat), O_TMPFILE and linkat's AT_EMPTY_PATH
// (_GNU_SOURCE), and syncfs. Only DiskCache imports it.
#ifndef ASYNCFETCH_CCRYPTO_H
#define ASYNCFETCH_CCRYPTO_H

#include <stddef.h>

/// One-shot MD5 of `len` bytes into `out` (16 bytes). Returns 1 on success, 0 on failure.
int ccrypto_md5(const void *data, size_t len, unsigned char out[16]);

/// Streaming MD5. `ccrypto_md5_new` returns NULL on failure.
typedef struct ccrypto_md5_ctx ccrypto_md5_ctx;
ccrypto_md5_ctx *ccrypto_md5_new(void);
int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len);
/// Writes 16 bytes and resets the context for reuse. Returns 1 on success.
int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]);
void ccrypto_md5_free(ccrypto_md5_ctx *ctx);

#include <sys/types.h>

/// getxattrat(2) of `name` in directory `dirfd`, not following a symlink
/// (Linux 6.13+: one path component to resolve instead of the whole path);
/// where the kernel lacks it, lgetxattr(2) of `directory`/`name` (the same
/// file; `directory` is `dirfd`'s path), joined here only then. The value's
/// length, or -1 with errno set (ENAMETOOLONG when the joined path does not
/// fit PATH_MAX, as lgetxattr would answer).
ssize_t cdisk_getxattrat(int dirfd, const char *directory, const char *name, const char *attribute, void *value, size_t size);
/// From now on cdisk_getxattrat uses lgetxattr, as on a kernel without getxattrat (for tests).
void cdisk_refuse_getxattrat(void);
/// The size of the calling thread's buffer (`cdisk_thread_buffer`).
#define CDISK_THREAD_BUFFER_SIZE 2048
/// The calling thread's buffer of CDISK_THREAD_BUFFER_SIZE bytes (NULL when
/// `size` is larger): for reads whose bytes are used up before the thread
/// runs anything else (a hit's record, decoded at once). Its bytes are
/// whatever the thread's last use left.
void *cdisk_thread_buffer(size_t size);
/// fsetxattr(2) and lsetxattr(2) (flags 0): 0, or -1 with errno set.
int cdisk_fsetxattr(int fd, const char *name, const void *value, size_t size);
int cdisk_lsetxattr(const char *path, const char *name, const void *value, size_t size);
/// lremovexattr(2) and fremovexattr(2): 0, or -1 with errno set.
int cdisk_lremovexattr(const char *path, const char *name);
int cdisk_fremovexattr(int fd, const char *name);

/// An unnamed file in directory `dirfd` (open(2) with O_TMPFILE, read-write,
/// close-on-exec): its descriptor, or -1 with errno set (EOPNOTSUPP, EISDIR
/// or EINVAL where the file system has no O_TMPFILE).
int cdisk_open_tmpfile(int dirfd, unsigned mode);
/// Gives the unnamed file `fd` the name `name` in `dirfd` (linkat(2) with
/// AT_EMPTY_PATH; where that is refused, through /proc/self/fd/N with
/// AT_SYMLINK_FOLLOW). Never replaces an existing name (EEXIST). 0, or -1
/// with errno set.
int cdisk_link_tmpfile(int fd, int dirfd, const char *name);
/// syncfs(2) of the file system holding `fd`: 0, or -1 with errno set.
int cdisk_syncfs(int fd);

#endif
