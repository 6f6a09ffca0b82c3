/* MD5 is OpenSSL's: the low-level MD5(), MD5_Init/Update/Final, deprecated
 * in 3.0 but present in every 3.x. They need no provider, so a cache-only
 * run does not pay OpenSSL's provider and configuration set-up (0.7 ms of a
 * 3 ms process start, measured with hyperfine), and they are all this file
 * uses: Package.swift links their objects from OpenSSL's own libcrypto.a
 * (md5_dgst, md5_one, the x86-64 block function, and what those need: a
 * handful of objects, ~10 KiB), kept out of the executable's dynamic symbol
 * table, so a start needs no libcrypto.so.3 and none of its relocations;
 * TLS loads libcrypto.so.3 with libcurl, which keeps its own symbols. Where
 * a build of OpenSSL leaves the deprecated API out, the EVP path is used. */
#define _GNU_SOURCE 1
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CCrypto.h"
#include <stdio.h>
#include <stdlib.h>
#include <openssl/opensslv.h>
#include <openssl/md5.h>
#include <pthread.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#if OPENSSL_VERSION_MAJOR == 3 && !defined(OPENSSL_NO_DEPRECATED_3_0) && !defined(OPENSSL_NO_MD5)
#define CCRYPTO_LOW_LEVEL_MD5 1
#endif

#ifdef CCRYPTO_LOW_LEVEL_MD5

int ccrypto_md5(const void *data, size_t len, unsigned char out[16]) {
    return MD5((const unsigned char *)data, len, out) != NULL;
}

struct ccrypto_md5_ctx { MD5_CTX md5; };

ccrypto_md5_ctx *ccrypto_md5_new(void) {
    ccrypto_md5_ctx *ctx = (ccrypto_md5_ctx *)malloc(sizeof *ctx);
    if (ctx == NULL) return NULL;
    if (MD5_Init(&ctx->md5) != 1) { free(ctx); return NULL; }
    return ctx;
}

int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len) {
    return MD5_Update(&ctx->md5, data, len) == 1;
}

int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]) {
    if (MD5_Final(out, &ctx->md5) != 1) return 0;
    return MD5_Init(&ctx->md5) == 1;
}

void ccrypto_md5_free(ccrypto_md5_ctx *ctx) {
    free(ctx);
}

#else
#include <openssl/evp.h>

struct ccrypto_md5_ctx { EVP_MD_CTX *evp; };

/* OpenSSL 3 looks the MD5 implementation up on every EVP_Digest/DigestInit
 * given the legacy EVP_md5() (an implicit fetch: about a fifth of the cost of
 * hashing a URL). It is fetched once here and reused; EVP_MD objects are
 * safe to share between threads. Falls back to EVP_md5() if the fetch fails. */
static pthread_once_t md5_once = PTHREAD_ONCE_INIT;
static EVP_MD *md5_fetched = NULL;
static void fetch_md5(void) { md5_fetched = EVP_MD_fetch(NULL, "MD5", NULL); }

static const EVP_MD *md5_method(void) {
    if (pthread_once(&md5_once, fetch_md5) != 0 || md5_fetched == NULL) return EVP_md5();
    return md5_fetched;
}

/* One digest context per thread for one-shot digests (URL keys): EVP_Digest
 * would allocate and free a context on every call, about half the cost of
 * hashing a URL. Freed when the thread exits. */
static pthread_once_t md5_context_once = PTHREAD_ONCE_INIT;
static pthread_key_t md5_context_key;
static int md5_context_key_ok = 0;

static void free_context(void *ctx) { EVP_MD_CTX_free((EVP_MD_CTX *)ctx); }

static void create_context_key(void) {
    md5_context_key_ok = pthread_key_create(&md5_context_key, free_context) == 0;
}

/* This thread's context, created on first use; NULL if that fails. */
static EVP_MD_CTX *thread_context(void) {
    if (pthread_once(&md5_context_once, create_context_key) != 0 || !md5_context_key_ok) return NULL;
    EVP_MD_CTX *ctx = (EVP_MD_CTX *)pthread_getspecific(md5_context_key);
    if (ctx != NULL) return ctx;
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) return NULL;
    if (pthread_setspecific(md5_context_key, ctx) != 0) { EVP_MD_CTX_free(ctx); return NULL; }
    return ctx;
}

int ccrypto_md5(const void *data, size_t len, unsigned char out[16]) {
    unsigned int outlen = 0;
    const EVP_MD *md = md5_method();
    EVP_MD_CTX *ctx = thread_context();
    if (ctx == NULL) {
        if (EVP_Digest(data, len, out, &outlen, md, NULL) != 1) return 0;
        return outlen == 16;
    }
    if (EVP_DigestInit_ex2(ctx, md, NULL) != 1 || EVP_DigestUpdate(ctx, data, len) != 1
        || EVP_DigestFinal_ex(ctx, out, &outlen) != 1) return 0;
    return outlen == 16;
}

ccrypto_md5_ctx *ccrypto_md5_new(void) {
    EVP_MD_CTX *evp = EVP_MD_CTX_new();
    if (evp == NULL) return NULL;
    if (EVP_DigestInit_ex(evp, md5_method(), NULL) != 1) { EVP_MD_CTX_free(evp); return NULL; }
    ccrypto_md5_ctx *ctx = (ccrypto_md5_ctx *)malloc(sizeof *ctx);
    if (ctx == NULL) { EVP_MD_CTX_free(evp); return NULL; }
    ctx->evp = evp;
    return ctx;
}

int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len) {
    return EVP_DigestUpdate(ctx->evp, data, len) == 1;
}

int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]) {
    unsigned int outlen = 0;
    if (EVP_DigestFinal_ex(ctx->evp, out, &outlen) != 1 || outlen != 16) return 0;
    return EVP_DigestInit_ex(ctx->evp, md5_method(), NULL) == 1;
}

void ccrypto_md5_free(ccrypto_md5_ctx *ctx) {
    if (ctx == NULL) return;
    EVP_MD_CTX_free(ctx->evp);
    free(ctx);
}

#endif

#ifndef SYS_getxattrat
#define SYS_getxattrat 464   /* the same number on every architecture (generic table, Linux 6.13) */
#endif

struct cdisk_xattr_args { uint64_t value; uint32_t size; uint32_t flags; };

/* Set once the kernel (or a seccomp filter that does not know the call,
 * EPERM) refuses getxattrat; a race only costs another refused call. */
static int getxattrat_refused = 0;

void cdisk_refuse_getxattrat(void) { __atomic_store_n(&getxattrat_refused, 1, __ATOMIC_RELAXED); }

ssize_t cdisk_getxattrat(int dirfd, const char *directory, const char *name, const char *attribute, void *value, size_t size) {
    if (!__atomic_load_n(&getxattrat_refused, __ATOMIC_RELAXED)) {
        struct cdisk_xattr_args args = { (uint64_t)(uintptr_t)value, (uint32_t)size, 0 };
        long n = syscall(SYS_getxattrat, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute, &args, sizeof args);
        if (n >= 0 || (errno != ENOSYS && errno != EPERM)) return (ssize_t)n;
        __atomic_store_n(&getxattrat_refused, 1, __ATOMIC_RELAXED);
    }
    char path[PATH_MAX];
    size_t dirLength = strlen(directory), nameLength = strlen(name);
    size_t slash = dirLength > 0 && directory[dirLength - 1] == '/' ? 0 : 1;   /* the root: "/name" */
    if (dirLength + slash + nameLength >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, directory, dirLength);
    if (slash) path[dirLength] = '/';
    memcpy(path + dirLength + slash, name, nameLength + 1);
    return lgetxattr(path, attribute, value, size);
}

/* Not zeroed per use (Swift has no uninitialised stack buffer: it zeroed
 * 2 KiB on every hit); static storage of each thread starts zeroed once. */
static __thread unsigned char thread_buffer[CDISK_THREAD_BUFFER_SIZE];

void *cdisk_thread_buffer(size_t size) {
    return size <= sizeof thread_buffer ? thread_buffer : NULL;
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
