/* MD5 (RFC 1321), written out here rather than taken from OpenSSL: a URL's
 * key is an MD5, and linking libcrypto for it cost every run, a cache-only
 * one included, the dynamic loader's relocation of libcrypto (about 17,000
 * relative and 4,000 symbol relocations: a third of the instructions of a
 * one-URL start). TLS still uses OpenSSL, through libcurl, which is loaded
 * on first use (CCurl.c). Body digests are XXH3-128 (CXXHash); MD5 body
 * digests remain only in version-1 records. */
#define _GNU_SOURCE 1
#include "CCrypto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

struct ccrypto_md5_ctx {
    uint32_t state[4];
    uint64_t length;          /* bytes hashed so far */
    unsigned char block[64];  /* a partial block */
    size_t used;              /* bytes of it in use */
};

#define MD5_F(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))
#define MD5_G(x, y, z) ((y) ^ ((z) & ((x) ^ (y))))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define F MD5_F
#define G MD5_G
#define H MD5_H
#define I MD5_I
/* One of the 64 steps: a = b + ((a + f(b, c, d) + m + t) <<< s). */
#define STEP(f, a, b, c, d, m, t, s) \
    (a) += f((b), (c), (d)) + (m) + (t); \
    (a) = ((a) << (s)) | ((a) >> (32 - (s))); \
    (a) += (b);

static inline uint32_t load_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void store_le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* The compression function over `blocks` whole 64-byte blocks. The
 * constants are floor(|sin(i + 1)| * 2^32), the shifts and word orders
 * those of RFC 1321 section 3.4. */
static void md5_blocks(uint32_t state[4], const unsigned char *p, size_t blocks) {
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    while (blocks-- > 0) {
        uint32_t x[16];
        for (int i = 0; i < 16; i++) x[i] = load_le32(p + 4 * i);
        const uint32_t sa = a, sb = b, sc = c, sd = d;
        /* round 1 */
        STEP(F, a, b, c, d, x[0], 0xd76aa478u, 7)
        STEP(F, d, a, b, c, x[1], 0xe8c7b756u, 12)
        STEP(F, c, d, a, b, x[2], 0x242070dbu, 17)
        STEP(F, b, c, d, a, x[3], 0xc1bdceeeu, 22)
        STEP(F, a, b, c, d, x[4], 0xf57c0fafu, 7)
        STEP(F, d, a, b, c, x[5], 0x4787c62au, 12)
        STEP(F, c, d, a, b, x[6], 0xa8304613u, 17)
        STEP(F, b, c, d, a, x[7], 0xfd469501u, 22)
        STEP(F, a, b, c, d, x[8], 0x698098d8u, 7)
        STEP(F, d, a, b, c, x[9], 0x8b44f7afu, 12)
        STEP(F, c, d, a, b, x[10], 0xffff5bb1u, 17)
        STEP(F, b, c, d, a, x[11], 0x895cd7beu, 22)
        STEP(F, a, b, c, d, x[12], 0x6b901122u, 7)
        STEP(F, d, a, b, c, x[13], 0xfd987193u, 12)
        STEP(F, c, d, a, b, x[14], 0xa679438eu, 17)
        STEP(F, b, c, d, a, x[15], 0x49b40821u, 22)
        /* round 2 */
        STEP(G, a, b, c, d, x[1], 0xf61e2562u, 5)
        STEP(G, d, a, b, c, x[6], 0xc040b340u, 9)
        STEP(G, c, d, a, b, x[11], 0x265e5a51u, 14)
        STEP(G, b, c, d, a, x[0], 0xe9b6c7aau, 20)
        STEP(G, a, b, c, d, x[5], 0xd62f105du, 5)
        STEP(G, d, a, b, c, x[10], 0x02441453u, 9)
        STEP(G, c, d, a, b, x[15], 0xd8a1e681u, 14)
        STEP(G, b, c, d, a, x[4], 0xe7d3fbc8u, 20)
        STEP(G, a, b, c, d, x[9], 0x21e1cde6u, 5)
        STEP(G, d, a, b, c, x[14], 0xc33707d6u, 9)
        STEP(G, c, d, a, b, x[3], 0xf4d50d87u, 14)
        STEP(G, b, c, d, a, x[8], 0x455a14edu, 20)
        STEP(G, a, b, c, d, x[13], 0xa9e3e905u, 5)
        STEP(G, d, a, b, c, x[2], 0xfcefa3f8u, 9)
        STEP(G, c, d, a, b, x[7], 0x676f02d9u, 14)
        STEP(G, b, c, d, a, x[12], 0x8d2a4c8au, 20)
        /* round 3 */
        STEP(H, a, b, c, d, x[5], 0xfffa3942u, 4)
        STEP(H, d, a, b, c, x[8], 0x8771f681u, 11)
        STEP(H, c, d, a, b, x[11], 0x6d9d6122u, 16)
        STEP(H, b, c, d, a, x[14], 0xfde5380cu, 23)
        STEP(H, a, b, c, d, x[1], 0xa4beea44u, 4)
        STEP(H, d, a, b, c, x[4], 0x4bdecfa9u, 11)
        STEP(H, c, d, a, b, x[7], 0xf6bb4b60u, 16)
        STEP(H, b, c, d, a, x[10], 0xbebfbc70u, 23)
        STEP(H, a, b, c, d, x[13], 0x289b7ec6u, 4)
        STEP(H, d, a, b, c, x[0], 0xeaa127fau, 11)
        STEP(H, c, d, a, b, x[3], 0xd4ef3085u, 16)
        STEP(H, b, c, d, a, x[6], 0x04881d05u, 23)
        STEP(H, a, b, c, d, x[9], 0xd9d4d039u, 4)
        STEP(H, d, a, b, c, x[12], 0xe6db99e5u, 11)
        STEP(H, c, d, a, b, x[15], 0x1fa27cf8u, 16)
        STEP(H, b, c, d, a, x[2], 0xc4ac5665u, 23)
        /* round 4 */
        STEP(I, a, b, c, d, x[0], 0xf4292244u, 6)
        STEP(I, d, a, b, c, x[7], 0x432aff97u, 10)
        STEP(I, c, d, a, b, x[14], 0xab9423a7u, 15)
        STEP(I, b, c, d, a, x[5], 0xfc93a039u, 21)
        STEP(I, a, b, c, d, x[12], 0x655b59c3u, 6)
        STEP(I, d, a, b, c, x[3], 0x8f0ccc92u, 10)
        STEP(I, c, d, a, b, x[10], 0xffeff47du, 15)
        STEP(I, b, c, d, a, x[1], 0x85845dd1u, 21)
        STEP(I, a, b, c, d, x[8], 0x6fa87e4fu, 6)
        STEP(I, d, a, b, c, x[15], 0xfe2ce6e0u, 10)
        STEP(I, c, d, a, b, x[6], 0xa3014314u, 15)
        STEP(I, b, c, d, a, x[13], 0x4e0811a1u, 21)
        STEP(I, a, b, c, d, x[4], 0xf7537e82u, 6)
        STEP(I, d, a, b, c, x[11], 0xbd3af235u, 10)
        STEP(I, c, d, a, b, x[2], 0x2ad7d2bbu, 15)
        STEP(I, b, c, d, a, x[9], 0xeb86d391u, 21)
        a += sa;
        b += sb;
        c += sc;
        d += sd;
        p += 64;
    }
    state[0] = a;
    state[1] = b;
    state[2] = c;
    state[3] = d;
}

#undef F
#undef G
#undef H
#undef I
#undef STEP

static void md5_init(ccrypto_md5_ctx *ctx) {
    ctx->state[0] = 0x67452301u;
    ctx->state[1] = 0xefcdab89u;
    ctx->state[2] = 0x98badcfeu;
    ctx->state[3] = 0x10325476u;
    ctx->length = 0;
    ctx->used = 0;
}

static void md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len) {
    if (len == 0) return;
    const unsigned char *p = (const unsigned char *)data;
    ctx->length += len;
    if (ctx->used > 0) {
        size_t take = 64 - ctx->used;
        if (take > len) take = len;
        memcpy(ctx->block + ctx->used, p, take);
        ctx->used += take;
        p += take;
        len -= take;
        if (ctx->used < 64) return;
        md5_blocks(ctx->state, ctx->block, 1);
        ctx->used = 0;
    }
    if (len >= 64) {
        md5_blocks(ctx->state, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    if (len > 0) {
        memcpy(ctx->block, p, len);
        ctx->used = len;
    }
}

/* Pads (0x80, zeros, the length in bits, little-endian) and writes the digest. */
static void md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]) {
    const uint64_t bits = ctx->length * 8;
    static const unsigned char padding[64] = { 0x80 };
    md5_update(ctx, padding, ctx->used < 56 ? 56 - ctx->used : 120 - ctx->used);
    unsigned char length[8];
    for (int i = 0; i < 8; i++) length[i] = (unsigned char)(bits >> (8 * i));
    md5_update(ctx, length, 8);
    for (int i = 0; i < 4; i++) store_le32(out + 4 * i, ctx->state[i]);
}

int ccrypto_md5(const void *data, size_t len, unsigned char out[16]) {
    ccrypto_md5_ctx ctx;
    md5_init(&ctx);
    md5_update(&ctx, data, len);
    md5_final(&ctx, out);
    return 1;
}

ccrypto_md5_ctx *ccrypto_md5_new(void) {
    ccrypto_md5_ctx *ctx = (ccrypto_md5_ctx *)malloc(sizeof *ctx);
    if (ctx == NULL) return NULL;
    md5_init(ctx);
    return ctx;
}

int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len) {
    md5_update(ctx, data, len);
    return 1;
}

int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]) {
    md5_final(ctx, out);
    md5_init(ctx);
    return 1;
}

void ccrypto_md5_free(ccrypto_md5_ctx *ctx) {
    free(ctx);
}

#ifndef SYS_getxattrat
#define SYS_getxattrat 464   /* the same number on every architecture (generic table, Linux 6.13) */
#endif

struct cdisk_xattr_args { uint64_t value; uint32_t size; uint32_t flags; };

/* Set once the kernel (or a seccomp filter that does not know the call,
 * EPERM) refuses getxattrat; a race only costs another refused call. */
static int getxattrat_refused = 0;

void cdisk_refuse_getxattrat(void) { __atomic_store_n(&getxattrat_refused, 1, __ATOMIC_RELAXED); }

ssize_t cdisk_getxattrat(int dirfd, const char *name, const char *path, const char *attribute, void *value, size_t size) {
    if (!__atomic_load_n(&getxattrat_refused, __ATOMIC_RELAXED)) {
        struct cdisk_xattr_args args = { (uint64_t)(uintptr_t)value, (uint32_t)size, 0 };
        long n = syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute, &args, sizeof args);
        if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return (ssize_t)n;
        __atomic_store_n(&getxattrat_refused, 1, __ATOMIC_RELAXED);
    }
    return lgetxattr(path, attribute, value, size);
}

int cdisk_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

int cdisk_lsetxattr(const char *path, const char *name, const void *value, size_t size) {
    return lsetxattr(path, name, value, size, 0);
}

int cdisk_lremovexattr(const char *path, const char *name) {
    return lremovexattr(path, name);
}

int cdisk_fremovexattr(int fd, const char *name) {
    return fremovexattr(fd, name);
}

int cdisk_open_tmpfile(int dirfd, unsigned mode) {
    return openat(dirfd, ".", O_RDWR | O_TMPFILE | O_CLOEXEC, (mode_t)mode);
}

/* AT_EMPTY_PATH long needed CAP_DAC_READ_SEARCH (Linux 6.10 lets the opener
 * use it) and then fails with ENOENT, as a missing target folder does;
 * /proc/self/fd works for anyone where /proc is mounted. Once the /proc way
 * has worked where AT_EMPTY_PATH did not, it is used from then on; a race
 * only costs another refused call. */
static int empty_path_refused = 0;

int cdisk_link_tmpfile(int fd, int dirfd, const char *name) {
    if (!__atomic_load_n(&empty_path_refused, __ATOMIC_RELAXED)) {
        if (linkat(fd, "", dirfd, name, AT_EMPTY_PATH) == 0) return 0;
        if (errno != ENOENT && errno != EPERM) return -1;
    }
    char proc[64];
    if (snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd) >= (int)sizeof proc) { errno = EINVAL; return -1; }
    if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) != 0) return -1;
    __atomic_store_n(&empty_path_refused, 1, __ATOMIC_RELAXED);
    return 0;
}

int cdisk_syncfs(int fd) {
    return syncfs(fd);
}
