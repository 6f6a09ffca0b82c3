#define _GNU_SOURCE   /* sched_getaffinity */
#include "CCurl.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <curl/mprintf.h>

#include <dlfcn.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

/*
 * libcurl is loaded on first use with dlopen instead of being linked.
 *
 * Why: libcurl pulls in about 46 shared libraries, which costs 6-7 ms at
 * every process start (FACTS.md). A run answered from the cache, or an
 * --offline query, never needs the network and so never pays it.
 *
 * How: this file defines the libcurl functions the Swift side calls, under
 * libcurl's own names, as trampolines through pointers resolved once (under
 * pthread_once) from libcurl.so.4. The typed ccurl_* wrappers call the
 * variadic functions through pointers of their real (variadic) types.
 * ccurl_global_init is always the first call (CurlGlobal in Swift); it
 * reports CURLE_FAILED_INIT when the library or a symbol is missing, and
 * nothing else is called after such a failure.
 */

/*
 * Debian's libcurl4 (OpenSSL) also loads GnuTLS (through librtmp and
 * libldap, for rtmp:// and ldap://, which we never use). GnuTLS initialises
 * itself in a constructor as it is loaded (crypto back ends, random pool,
 * configuration): about 0.9 MB of resident pages in every run that loads
 * libcurl (bench/README, memory). That constructor first asks the weak
 * hook below, which GnuTLS exports for programs to override (the
 * executable's definition wins the lookup); a program that uses GnuTLS
 * still calls gnutls_global_init itself. The environment switch for the
 * same (GNUTLS_NO_IMPLICIT_INIT) is not used: a setenv before main moves
 * `environ`, from which the Swift runtime finds argv.
 */
__attribute__((visibility("default"), used)) int _gnutls_global_init_skip(void);
__attribute__((visibility("default"), used)) int _gnutls_global_init_skip(void) { return 1; }

#define CCURL_SYMBOLS(X) \
    X(CURLcode, curl_global_init_mem, (long flags, curl_malloc_callback m, curl_free_callback f, \
        curl_realloc_callback r, curl_strdup_callback s, curl_calloc_callback c)) \
    X(curl_version_info_data *, curl_version_info, (CURLversion v)) \
    X(CURLcode, curl_easy_setopt, (CURL *h, CURLoption o, ...)) \
    X(CURLcode, curl_easy_getinfo, (CURL *h, CURLINFO i, ...)) \
    X(CURLMcode, curl_multi_setopt, (CURLM *m, CURLMoption o, ...)) \
    X(CURLMsg *, curl_multi_info_read, (CURLM *m, int *queued)) \
    X(CURL *, curl_easy_init, (void)) \
    X(void, curl_easy_cleanup, (CURL *h)) \
    X(void, curl_easy_reset, (CURL *h)) \
    X(CURLcode, curl_easy_pause, (CURL *h, int bitmask)) \
    X(const char *, curl_easy_strerror, (CURLcode c)) \
    X(CURLM *, curl_multi_init, (void)) \
    X(CURLMcode, curl_multi_cleanup, (CURLM *m)) \
    X(CURLMcode, curl_multi_add_handle, (CURLM *m, CURL *h)) \
    X(CURLMcode, curl_multi_remove_handle, (CURLM *m, CURL *h)) \
    X(CURLMcode, curl_multi_socket_action, (CURLM *m, curl_socket_t s, int ev_bitmask, int *running)) \
    X(const char *, curl_multi_strerror, (CURLMcode c)) \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s)) \
    X(void, curl_slist_free_all, (struct curl_slist *l)) \
    X(CURLSH *, curl_share_init, (void)) \
    X(CURLSHcode, curl_share_setopt, (CURLSH *s, CURLSHoption o, ...)) \
    X(CURLSHcode, curl_share_cleanup, (CURLSH *s)) \
    X(const char *, curl_share_strerror, (CURLSHcode c)) \
    X(CURLU *, curl_url, (void)) \
    X(void, curl_url_cleanup, (CURLU *u)) \
    X(CURLUcode, curl_url_set, (CURLU *u, CURLUPart part, const char *content, unsigned int flags)) \
    X(CURLUcode, curl_url_get, (const CURLU *u, CURLUPart part, char **content, unsigned int flags)) \
    X(void, curl_free, (void *p)) \
    X(int, curl_strequal, (const char *a, const char *b)) \
    X(int, curl_strnequal, (const char *a, const char *b, size_t n)) \
    X(int, curl_mvsnprintf, (char *buffer, size_t max, const char *format, va_list ap)) \
    X(char *, curl_mvaprintf, (const char *format, va_list ap))

/*
 * OpenSSL, for the CA store one client shares (ccurl_ca_store_new): found
 * through libcurl's handle (dlsym searches its dependencies), so they are the
 * very libssl and libcrypto that libcurl's TLS connections use, and nothing
 * more is loaded. Optional: a libcurl built on another TLS library lacks
 * them, and then libcurl reads the CA files itself.
 */
typedef int (*ccurl_new_session_callback)(SSL *ssl, SSL_SESSION *session);
#define CCURL_OPENSSL_SYMBOLS(X) \
    X(X509_STORE *, X509_STORE_new, (void)) \
    X(void, X509_STORE_free, (X509_STORE *s)) \
    X(int, X509_STORE_up_ref, (X509_STORE *s)) \
    X(int, X509_STORE_set_flags, (X509_STORE *s, unsigned long flags)) \
    X(X509_LOOKUP *, X509_STORE_add_lookup, (X509_STORE *s, X509_LOOKUP_METHOD *m)) \
    X(X509_LOOKUP_METHOD *, X509_LOOKUP_hash_dir, (void)) \
    X(int, X509_LOOKUP_ctrl, (X509_LOOKUP *l, int cmd, const char *argc, long argl, char **ret)) \
    X(int, X509_STORE_load_file, (X509_STORE *s, const char *file)) \
    X(STACK_OF(X509_OBJECT) *, X509_STORE_get0_objects, (const X509_STORE *s)) \
    X(int, OPENSSL_sk_num, (const OPENSSL_STACK *st)) \
    X(void *, OPENSSL_sk_value, (const OPENSSL_STACK *st, int i)) \
    X(X509 *, X509_OBJECT_get0_X509, (const X509_OBJECT *o)) \
    X(X509_CRL *, X509_OBJECT_get0_X509_CRL, (const X509_OBJECT *o)) \
    X(int, X509_STORE_add_cert, (X509_STORE *s, X509 *x)) \
    X(int, X509_STORE_add_crl, (X509_STORE *s, X509_CRL *x)) \
    X(X509_OBJECT *, X509_OBJECT_new, (void)) \
    X(void, X509_OBJECT_free, (X509_OBJECT *o)) \
    X(int, X509_OBJECT_up_ref_count, (X509_OBJECT *o)) \
    X(X509_NAME *, X509_get_subject_name, (const X509 *x)) \
    X(int, X509_LOOKUP_by_subject, (X509_LOOKUP *l, X509_LOOKUP_TYPE t, const X509_NAME *name, X509_OBJECT *ret)) \
    X(void, SSL_CTX_set_cert_store, (SSL_CTX *ctx, X509_STORE *s)) \
    X(ccurl_new_session_callback, SSL_CTX_sess_get_new_cb, (SSL_CTX *ctx)) \
    X(void, SSL_CTX_sess_set_new_cb, (SSL_CTX *ctx, ccurl_new_session_callback cb)) \
    X(SSL_SESSION *, SSL_SESSION_dup, (const SSL_SESSION *s)) \
    X(void, SSL_SESSION_free, (SSL_SESSION *s)) \
    X(void, ERR_clear_error, (void)) \
    X(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *m)) \
    X(int, SSL_CTX_up_ref, (SSL_CTX *ctx)) \
    X(void, SSL_CTX_free, (SSL_CTX *ctx)) \
    X(uint64_t, SSL_CTX_get_options, (const SSL_CTX *ctx)) \
    X(uint64_t, SSL_CTX_clear_options, (SSL_CTX *ctx, uint64_t op)) \
    X(uint64_t, SSL_CTX_set_options, (SSL_CTX *ctx, uint64_t op)) \
    X(long, SSL_CTX_ctrl, (SSL_CTX *ctx, int cmd, long larg, void *parg)) \
    X(int, SSL_CTX_set_alpn_protos, (SSL_CTX *ctx, const unsigned char *protos, unsigned int len)) \
    X(void, SSL_CTX_set_msg_callback, (SSL_CTX *ctx, void (*cb)(int, int, int, const void *, size_t, SSL *, void *))) \
    X(void, SSL_CTX_set_verify, (SSL_CTX *ctx, int mode, SSL_verify_cb cb)) \
    X(void, SSL_CTX_set_keylog_callback, (SSL_CTX *ctx, SSL_CTX_keylog_cb_func cb)) \
    X(void, SSL_CTX_set_post_handshake_auth, (SSL_CTX *ctx, int val))

#define DECLARE_POINTER(ret, name, args) static ret (*p_##name) args;
CCURL_SYMBOLS(DECLARE_POINTER)
CCURL_OPENSSL_SYMBOLS(DECLARE_POINTER)
static int openssl_loaded = 0;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
/* Why libcurl could not be loaded (ccurl_load_error): dlopen's own words, or the symbol missing. */
static char load_error[512] = "could not load libcurl.so.4 (install libcurl4)";

static void load_libcurl(void) {
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        if (why != NULL) snprintf(load_error, sizeof load_error, "could not load libcurl.so.4 (install libcurl4): %s", why);
        return;
    }
    /* A libcurl without one of CCURL_SYMBOLS is unusable (load_error says which); one without an
     * OpenSSL symbol is used without the shared CA store (openssl_loaded stays 0). */
#define RESOLVE(ret, name, args) \
    p_##name = (ret (*) args)dlsym(lib, #name); \
    if (p_##name == NULL) { \
        if (!loaded) snprintf(load_error, sizeof load_error, "libcurl.so.4 has no %s (libcurl 7.88 or later is needed)", #name); \
        return; \
    }
    CCURL_SYMBOLS(RESOLVE)
    loaded = 1;
    CCURL_OPENSSL_SYMBOLS(RESOLVE)
    openssl_loaded = 1;
}

/*
 * libcurl's memory functions (curl_global_init_mem): glibc's, with two changes for the small
 * blocks libcurl 7.88 makes at every transfer on the loop thread (bench/history/cold.md,
 * "Session 22: cold"). Every block is still glibc's own: libcurl's free, realloc and strdup of
 * it, and libcurl freeing a block made elsewhere (curl_maprintf's below), work as before.
 * - calloc is malloc and memset. glibc's calloc never takes a block from the thread's cache
 *   (tcache) and always goes through the arena; libcurl callocs ~11 blocks a transfer (one per
 *   response field in Curl_headers_push, the temporary connection, the URL handle's copy).
 * - realloc of no block (how a libcurl dynbuf makes its first block, of 32 bytes) makes a block
 *   of at least LIBCURL_FIRST_BLOCK bytes, and realloc of a block to a size it already has room
 *   for keeps it: the request's dynbuf grew 32 -> 64 -> 128 -> 256 bytes, each growth a new
 *   block and a copy. libcurl keeps its own count of the room it asked for.
 */
enum { LIBCURL_FIRST_BLOCK = 256 };

static void *libcurl_calloc(size_t count, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
    void *block = malloc(bytes);
    /* Hides the block's origin from the compiler, which would make malloc and memset a calloc. */
    __asm__("" : "+r"(block));
    if (block != NULL) memset(block, 0, bytes);
    return block;
}

static void *libcurl_realloc(void *block, size_t size) {
    if (block == NULL) return malloc(size < LIBCURL_FIRST_BLOCK ? LIBCURL_FIRST_BLOCK : size);
    if (size != 0 && size <= malloc_usable_size(block)) return block;
    return realloc(block, size);
}

CURLcode ccurl_global_init(void) {
    if (pthread_once(&load_once, load_libcurl) != 0 || !loaded) return CURLE_FAILED_INIT;
    /* glibc's own malloc, free and strdup: a function between would cost each call (~100 frees a transfer). */
    return p_curl_global_init_mem(CURL_GLOBAL_ALL, malloc, free, libcurl_realloc, strdup, libcurl_calloc);
}

const char *ccurl_load_error(void) {
    return loaded ? NULL : load_error;
}

const char *ccurl_version(void) {
    if (ccurl_global_init() != CURLE_OK) return "unavailable";
    return p_curl_version_info(CURLVERSION_NOW)->version;
}

/* Trampolines under libcurl's names, for the Swift side (valid only after a
 * successful ccurl_global_init).
 *
 * Hidden: the Swift code linked into the same executable still finds them,
 * but the executable does not export them. Exported, they interposed on
 * every other library's calls to libcurl's API: --decode loads libvips,
 * which brings libcurl-gnutls (and libcurl.so.4 again, through libhdf5), and
 * the dynamic linker bound libcurl-gnutls's own internal calls
 * (curl_multi_init, _perform, _poll… from its curl_easy_perform) and
 * libcfitsio's curl_easy_init to these, that is into the OpenSSL libcurl,
 * or through a null pointer when the network was never used
 * (LD_DEBUG=bindings showed 24 such bindings). */
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN CURL *curl_easy_init(void) { return p_curl_easy_init(); }
HIDDEN void curl_easy_cleanup(CURL *h) { p_curl_easy_cleanup(h); }
HIDDEN void curl_easy_reset(CURL *h) { p_curl_easy_reset(h); }
HIDDEN CURLcode curl_easy_pause(CURL *h, int bitmask) { return p_curl_easy_pause(h, bitmask); }
HIDDEN const char *curl_easy_strerror(CURLcode c) { return loaded ? p_curl_easy_strerror(c) : "libcurl not loaded"; }
HIDDEN CURLM *curl_multi_init(void) { return p_curl_multi_init(); }
HIDDEN CURLMcode curl_multi_cleanup(CURLM *m) { return p_curl_multi_cleanup(m); }
HIDDEN CURLMcode curl_multi_add_handle(CURLM *m, CURL *h) { return p_curl_multi_add_handle(m, h); }
HIDDEN CURLMcode curl_multi_remove_handle(CURLM *m, CURL *h) { return p_curl_multi_remove_handle(m, h); }
HIDDEN CURLMcode curl_multi_socket_action(CURLM *m, curl_socket_t s, int ev_bitmask, int *running) {
    return p_curl_multi_socket_action(m, s, ev_bitmask, running);
}
HIDDEN const char *curl_multi_strerror(CURLMcode c) { return loaded ? p_curl_multi_strerror(c) : "libcurl not loaded"; }
HIDDEN struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s) { return p_curl_slist_append(l, s); }
HIDDEN void curl_slist_free_all(struct curl_slist *l) { p_curl_slist_free_all(l); }
HIDDEN CURLSH *curl_share_init(void) { return p_curl_share_init(); }
HIDDEN CURLSHcode curl_share_cleanup(CURLSH *s) { return p_curl_share_cleanup(s); }
HIDDEN const char *curl_share_strerror(CURLSHcode c) { return loaded ? p_curl_share_strerror(c) : "libcurl not loaded"; }

/* The flags of libcurl 7.88's own parse of CURLOPT_URL (url.c, parseurlandfillconn; no
 * CURLOPT_DISALLOW_USERNAME_IN_URL or CURLOPT_PATH_AS_IS, which would add theirs, is set). */
#define LIBCURL_URL_FLAGS (CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME)

struct ccurl_url {
    CURLU *parsed;
    /* The scheme and authority ("http://host:port") of the last URL libcurl parsed whole into
     * `parsed`, whose parse of them `parsed` still holds; origin_length 0: none. */
    size_t origin_length;
    char origin[256];
};

ccurl_url *ccurl_url_new(void) {
    ccurl_url *url = calloc(1, sizeof *url);
    if (url == NULL) return NULL;
    url->parsed = p_curl_url();
    if (url->parsed == NULL) {
        free(url);
        return NULL;
    }
    return url;
}

void ccurl_url_free(ccurl_url *url) {
    if (url == NULL) return;
    p_curl_url_cleanup(url->parsed);
    free(url);
}

/* Where `url`'s scheme and authority end, when it starts "http://" or "https://" and a host:
 * libcurl 7.88's parseurl reads the host (with any user, password and port) up to the first '/',
 * '?' or '#', and reads all of the scheme and authority from these bytes alone. 0: another shape
 * (no host, a third slash, another scheme). */
static size_t origin_end(const char *url) {
    size_t start = strncmp(url, "http://", 7) == 0 ? 7 : strncmp(url, "https://", 8) == 0 ? 8 : 0;
    if (start == 0 || url[start] == '\0' || strchr("/?#", url[start]) != NULL) return 0;
    return start + strcspn(url + start, "/?#");
}

/* Whether libcurl 7.88's parse would keep `tail` (a path from its '/', maybe a '?' and a query)
 * byte for byte, as setting the path and the query as parts does: printable ASCII without space
 * (the parse refuses spaces and controls), no '%' (a part set lowercases a percent-encoding's hex
 * digits, the parse keeps them), no '#' (a fragment), and no path segment starting with '.' (the
 * parse removes "." and ".." segments). `path_length`: the path's bytes, before any '?'. */
static int plain_tail(const char *tail, size_t *path_length) {
    /* 0: a plain byte; 1: one the parse would not keep as it is; 2: '?'; 3: '/' */
    static const unsigned char kind[256] = {
        [0 ... ' '] = 1, ['#'] = 1, ['%'] = 1, [0x7f ... 0xff] = 1, ['?'] = 2, ['/'] = 3,
    };
    const unsigned char *p = (const unsigned char *)tail;
    for (;; p++) {
        unsigned char k = kind[*p];
        if (k == 0) continue;
        if (k == 3 && p[1] != '.') continue;
        if (k != 2 && *p != '\0') return 0;
        break;
    }
    *path_length = (size_t)(p - (const unsigned char *)tail);
    if (*p == '\0') return 1;
    for (p++; kind[*p] != 1; p++) {}
    return *p == '\0';
}

/* `tail` (plain_tail's) set as the path, the query and no fragment of `parsed`, which holds the
 * parse of a URL of the same scheme and authority: what parsing the whole URL would leave. */
static int set_tail(CURLU *parsed, const char *tail, size_t path_length) {
    char copy[2048];
    const char *path = tail, *query = tail[path_length] == '?' ? tail + path_length + 1 : NULL;
    if (query != NULL) {
        if (path_length >= sizeof copy) return 0;
        memcpy(copy, tail, path_length);
        copy[path_length] = '\0';
        path = copy;
    }
    /* The parse leaves no path for "/" (libcurl reads none as "/"). */
    return p_curl_url_set(parsed, CURLUPART_PATH, path_length > 1 ? path : NULL, 0) == CURLUE_OK
        && p_curl_url_set(parsed, CURLUPART_QUERY, query, 0) == CURLUE_OK
        && p_curl_url_set(parsed, CURLUPART_FRAGMENT, NULL, 0) == CURLUE_OK;
}

int ccurl_url_parse(ccurl_url *url, const char *text) {
    size_t length = url->origin_length, path_length;
    if (length > 0 && strncmp(text, url->origin, length) == 0 && text[length] == '/'
        && plain_tail(text + length, &path_length) && set_tail(url->parsed, text + length, path_length)) return 2;
    /* Parsed whole (a URL it refuses leaves `parsed` as it was). */
    int ok = p_curl_url_set(url->parsed, CURLUPART_URL, text, LIBCURL_URL_FLAGS) == CURLUE_OK;
    size_t end = ok ? origin_end(text) : 0;
    url->origin_length = end < sizeof url->origin ? end : 0;
    memcpy(url->origin, text, url->origin_length);
    return ok;
}

CURLcode ccurl_easy_set_url(CURL *handle, ccurl_url *url, const char *text) {
    CURLcode rc = p_curl_easy_setopt(handle, CURLOPT_URL, text);
    if (rc != CURLE_OK || url == NULL) return rc;
    /* A URL libcurl refuses: no parse handed over, libcurl parses it and says why, as ever. */
    return p_curl_easy_setopt(handle, CURLOPT_CURLU, ccurl_url_parse(url, text) != 0 ? url->parsed : NULL);
}

/*
 * libcurl's curl_url_get, in the executable's place as well (exported: Package.swift). libcurl
 * 7.88 calls it through the PLT 8 times at every transfer's start (parseurlandfillconn), once for
 * the path with CURLU_URLENCODE: a copy written a byte at a time through its dynbuf
 * (urlencode_str, ~1.5 k instructions for an 18-byte path) that only turns a space into "%20" and
 * a byte past ASCII into its %XX. A non-empty path of printable ASCII without space comes out of
 * it as it went in: that one is answered with libcurl's plain copy (the same call without the
 * flag, ~0.2 k). Every other call goes to libcurl's own, as it was made. A second libcurl in the
 * process (libcurl-gnutls, which libvips loads) may bind to this one as well: it loads ours, of
 * the same version (7.88.1, the same URL handle).
 */
__attribute__((visibility("default")))
CURLUcode curl_url_get(CURLU *url, CURLUPart what, char **part, unsigned int flags) {
    if (pthread_once(&load_once, load_libcurl) != 0 || !loaded) return CURLUE_OUT_OF_MEMORY;
    if (what != CURLUPART_PATH || flags != CURLU_URLENCODE) return p_curl_url_get(url, what, part, flags);
    CURLUcode rc = p_curl_url_get(url, CURLUPART_PATH, part, 0);
    if (rc != CURLUE_OK || *part == NULL) return rc;
    const unsigned char *p = (const unsigned char *)*part;
    while (*p > ' ' && *p < 0x7f) p++;
    if (*p == '\0' && p != (const unsigned char *)*part) return CURLUE_OK;
    p_curl_free(*part);
    *part = NULL;
    return p_curl_url_get(url, what, part, flags);
}

int ccurl_url_get_mismatches(const char *text, const char *path) {
    if (ccurl_global_init() != CURLE_OK) return -1;
    CURLU *url = p_curl_url();
    if (url == NULL) return -1;
    int mismatches = -1;
    if (p_curl_url_set(url, CURLUPART_URL, text, LIBCURL_URL_FLAGS) == CURLUE_OK
        && (path == NULL || p_curl_url_set(url, CURLUPART_PATH, path, 0) == CURLUE_OK)) {
        static const CURLUPart parts[] = { CURLUPART_URL, CURLUPART_HOST, CURLUPART_PATH, CURLUPART_QUERY };
        static const unsigned int flags[] = { 0, CURLU_URLENCODE, CURLU_URLDECODE, CURLU_URLENCODE | CURLU_URLDECODE };
        mismatches = 0;
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
                char *ours = NULL, *theirs = NULL;
                CURLUcode rc_ours = curl_url_get(url, parts[p], &ours, flags[f]);
                CURLUcode rc_theirs = p_curl_url_get(url, parts[p], &theirs, flags[f]);
                if (rc_ours != rc_theirs || (ours == NULL) != (theirs == NULL) || (ours != NULL && strcmp(ours, theirs) != 0)) mismatches++;
                p_curl_free(ours);
                p_curl_free(theirs);
            }
        }
    }
    p_curl_url_cleanup(url);
    return mismatches;
}

/* Whether two parses answer every part alike (each part with each flag libcurl's transfers and
 * redirects read it with). */
static int same_parts(const CURLU *first, const CURLU *second) {
    static const CURLUPart parts[] = {
        CURLUPART_URL, CURLUPART_SCHEME, CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS,
        CURLUPART_HOST, CURLUPART_ZONEID, CURLUPART_PORT, CURLUPART_PATH, CURLUPART_QUERY, CURLUPART_FRAGMENT,
    };
    static const unsigned int flags[] = {
        0, CURLU_DEFAULT_PORT, CURLU_NO_DEFAULT_PORT, CURLU_URLDECODE, CURLU_URLENCODE, CURLU_PUNYCODE,
    };
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
            char *a = NULL, *b = NULL;
            CURLUcode rc_a = p_curl_url_get(first, parts[p], &a, flags[f]);
            CURLUcode rc_b = p_curl_url_get(second, parts[p], &b, flags[f]);
            int same = rc_a == rc_b && (a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0);
            p_curl_free(a);
            p_curl_free(b);
            if (!same) return 0;
        }
    }
    return 1;
}

int ccurl_url_reparse_check(const char *first, const char *next) {
    if (ccurl_global_init() != CURLE_OK) return -1;
    ccurl_url *reused = ccurl_url_new();
    CURLU *whole = p_curl_url();
    int result = -1;
    if (reused != NULL && whole != NULL) {
        (void)ccurl_url_parse(reused, first);
        int how = ccurl_url_parse(reused, next);
        int whole_ok = p_curl_url_set(whole, CURLUPART_URL, next, LIBCURL_URL_FLAGS) == CURLUE_OK;
        if ((how != 0) != whole_ok) result = 0;
        else if (!whole_ok) result = 1;   /* both refused */
        else result = same_parts(reused->parsed, whole) ? how : 0;
    }
    ccurl_url_free(reused);
    if (whole != NULL) p_curl_url_cleanup(whole);
    return result;
}

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return p_curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return p_curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return p_curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return p_curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return p_curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback cb) {
    return p_curl_easy_setopt(handle, option, cb);
}
CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback cb) {
    return p_curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, cb);
}
CURLcode ccurl_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback cb) {
    return p_curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, cb);
}
CURLcode ccurl_easy_setopt_closesocket_callback(CURL *handle, curl_closesocket_callback cb) {
    return p_curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, cb);
}
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback cb) {
    return p_curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, cb);
}
CURLcode ccurl_easy_setopt_ssl_ctx_callback(CURL *handle, ccurl_ssl_ctx_callback cb) {
    return p_curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, cb);
}

CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return p_curl_easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return p_curl_easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return p_curl_easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return p_curl_easy_getinfo(handle, info, value);
}

CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return p_curl_multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return p_curl_multi_setopt(multi, option, value);
}
CURLMcode ccurl_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback cb) {
    return p_curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, cb);
}
CURLMcode ccurl_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback cb) {
    return p_curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, cb);
}

CURLSHcode ccurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return p_curl_share_setopt(share, option, value);
}

int ccurl_multi_next_message(CURLM *multi, ccurl_message *out) {
    int queued = 0;
    CURLMsg *msg;
    while ((msg = p_curl_multi_info_read(multi, &queued)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            out->is_done = 1;
            out->easy = msg->easy_handle;
            out->result = msg->data.result;
            char *context = NULL;
            out->context = p_curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &context) == CURLE_OK ? context : NULL;
            return 1;
        }
    }
    return 0;
}

/*
 * The CA store of one client (CertificateStore in Swift says why). Flags as
 * libcurl 7.88 sets them on the stores it fills (populate_x509_store, with
 * the peer verified and no CRL file): trusted issuers first, and a CA in the
 * store is a trust anchor even when it is an intermediate.
 */
/*
 * OpenSSL asks a directory lookup only for subjects its store holds no
 * certificate of, so a CA of `extra` named like a system CA would hide that
 * CA (with a bundle file both are in the store, and both are tried). The
 * directory's certificates with the subjects of `extra`'s (already read into
 * `extras`) are therefore loaded into the store first. 1, or 0 on a failure.
 */
static int load_namesakes(X509_LOOKUP *directory, X509_STORE *extras) {
    STACK_OF(X509_OBJECT) *objects = p_X509_STORE_get0_objects(extras);
    int count = objects != NULL ? p_OPENSSL_sk_num((const OPENSSL_STACK *)objects) : 0;
    for (int i = 0; i < count; i++) {
        X509 *cert = p_X509_OBJECT_get0_X509(p_OPENSSL_sk_value((const OPENSSL_STACK *)objects, i));
        if (cert == NULL) continue;   /* a CRL */
        X509_OBJECT *found = p_X509_OBJECT_new();
        if (found == NULL) return 0;
        /* 0: the directory has no such subject, nothing to load (and nothing to tell apart from a
         * failure). 1: loaded into the store, and `found` borrows the store's certificate (OpenSSL
         * 3.0's by_dir takes no reference for it), so one is taken for X509_OBJECT_free to drop. */
        if (p_X509_LOOKUP_by_subject(directory, X509_LU_X509, p_X509_get_subject_name(cert), found) == 1 &&
            p_X509_OBJECT_up_ref_count(found) != 1) {
            return 0;   /* `found` still borrows: freeing it would drop the store's reference */
        }
        p_X509_OBJECT_free(found);
    }
    return 1;
}

/*
 * Adds every certificate and CRL of `extras` to `store`, each with its own
 * reference: what X509_STORE_load_file of the same file would add (it reads
 * the file into such objects and adds them one by one), without reading and
 * parsing the file a second time. 1, or 0 on a failure.
 */
static int add_all(X509_STORE *store, X509_STORE *extras) {
    STACK_OF(X509_OBJECT) *objects = p_X509_STORE_get0_objects(extras);
    int count = objects != NULL ? p_OPENSSL_sk_num((const OPENSSL_STACK *)objects) : 0;
    for (int i = 0; i < count; i++) {
        const X509_OBJECT *object = p_OPENSSL_sk_value((const OPENSSL_STACK *)objects, i);
        X509 *cert = p_X509_OBJECT_get0_X509(object);
        X509_CRL *crl = cert == NULL ? p_X509_OBJECT_get0_X509_CRL(object) : NULL;
        if (cert != NULL && p_X509_STORE_add_cert(store, cert) != 1) return 0;
        if (crl != NULL && p_X509_STORE_add_crl(store, crl) != 1) return 0;
    }
    return 1;
}

/*
 * `extra` (--cacert) is read once, into a store of its own, whatever the
 * system's CAs are: a pipe (`--cacert <(…)`) can be read only once, and a
 * second parse of a bundle costs as much as the first.
 */
void *ccurl_ca_store_new(const char *system, const char *extra, const char **why) {
    *why = NULL;
    if (ccurl_global_init() != CURLE_OK || !openssl_loaded) {
        *why = "libcurl's OpenSSL functions were not found";
        return NULL;
    }
    X509_STORE *extras = NULL;
    if (extra != NULL && ((extras = p_X509_STORE_new()) == NULL || p_X509_STORE_load_file(extras, extra) != 1)) {
        *why = "could not load the CA file";
    }
    X509_STORE *store = *why == NULL ? p_X509_STORE_new() : NULL;
    if (*why == NULL && store == NULL) {
        *why = "X509_STORE_new failed";
    }
    if (*why == NULL && p_X509_STORE_set_flags(store, X509_V_FLAG_TRUSTED_FIRST | X509_V_FLAG_PARTIAL_CHAIN) != 1) {
        *why = "X509_STORE_set_flags failed";
    }
    struct stat info;
    if (*why == NULL && system != NULL && stat(system, &info) == 0 && S_ISDIR(info.st_mode)) {
        /* Certificates by subject hash: each is read when a chain asks for
         * its subject, and kept in the store from then on. */
        X509_LOOKUP *lookup = p_X509_STORE_add_lookup(store, p_X509_LOOKUP_hash_dir());
        if (lookup == NULL || p_X509_LOOKUP_ctrl(lookup, X509_L_ADD_DIR, system, X509_FILETYPE_PEM, NULL) != 1) {
            *why = "could not add the system's CA directory";
        } else if (extras != NULL && !load_namesakes(lookup, extras)) {
            *why = "could not load the CA file";
        }
    } else if (*why == NULL && system != NULL && p_X509_STORE_load_file(store, system) != 1) {
        *why = "could not load the system's CA bundle";
    }
    if (*why == NULL && extras != NULL && !add_all(store, extras)) {
        *why = "could not load the CA file";
    }
    if (extras != NULL) p_X509_STORE_free(extras);   /* the store holds its own references */
    if (*why != NULL) {
        if (store != NULL) p_X509_STORE_free(store);
        p_ERR_clear_error();   /* the reason is in *why; later handshakes on this thread must not see it */
        return NULL;
    }
    return store;
}

void ccurl_ca_store_free(void *store) {
    if (store != NULL && openssl_loaded) p_X509_STORE_free(store);
}

CURLcode ccurl_ssl_ctx_use_store(void *ssl_ctx, void *store) {
    if (!openssl_loaded || p_X509_STORE_up_ref(store) != 1) return CURLE_OUT_OF_MEMORY;
    p_SSL_CTX_set_cert_store(ssl_ctx, store);
    return CURLE_OK;
}

/*
 * TLS sessions that stay resumable (ccurl_ssl_ctx_keep_sessions). libcurl
 * 7.88 caches the very session object its connection uses, and closes an
 * HTTP/2 connection's TLS layer after its socket, without sending a
 * close_notify (ossl_close shuts down only while the socket is connected).
 * OpenSSL then takes the session for a bad one (SSL_free:
 * ssl_clear_bad_session) and marks it not resumable: the cached session was
 * offered on the next connection and never resumed (nginx, the bench's
 * simulator). So libcurl's callback is handed a copy; the connection keeps
 * its own. libcurl's callback is the same function for every connection.
 */
static ccurl_new_session_callback curl_new_session;

static int store_session_copy(SSL *ssl, SSL_SESSION *session) {
    ccurl_new_session_callback store = __atomic_load_n(&curl_new_session, __ATOMIC_ACQUIRE);
    SSL_SESSION *copy = store != NULL ? p_SSL_SESSION_dup(session) : NULL;
    if (copy == NULL) return 0;
    if (store(ssl, copy) != 1) p_SSL_SESSION_free(copy);   /* 1: libcurl keeps the copy */
    return 0;   /* OpenSSL drops the reference it took for the callback */
}

void ccurl_ssl_ctx_keep_sessions(void *ssl_ctx) {
    if (!openssl_loaded) return;
    ccurl_new_session_callback store = p_SSL_CTX_sess_get_new_cb(ssl_ctx);
    if (store == NULL || store == store_session_copy) return;
    __atomic_store_n(&curl_new_session, store, __ATOMIC_RELEASE);
    p_SSL_CTX_sess_set_new_cb(ssl_ctx, store_session_copy);
}

/*
 * One SSL_CTX per transfer loop thread, not one per TLS connection
 * (ccurl_ssl_ctx_reuse_begin). libcurl 7.88 makes a new SSL_CTX for every
 * TLS connection, and OpenSSL 3.0's SSL_CTX_new fetches its ciphers, digests,
 * groups and signature algorithms from the provider and builds its cipher
 * lists each time: about 1.2 M instructions, 11 % of all the instructions of
 * the HTTPS bench run (bench/history/internet.md, "Session 18: HTTPS CPU").
 *
 * How: the executable defines SSL_CTX_new and exports it (Package.swift:
 * --export-dynamic-symbol), so libcurl's calls come here. On a thread that
 * asked for it, the context made first is kept and handed out again, with one
 * more reference (libcurl's SSL_CTX_free drops it), after everything libcurl
 * or our callback set on it is put back as SSL_CTX_new left it: options,
 * mode, protocol versions, ALPN, the verify mode, the message, keylog and
 * new-session callbacks, the session cache mode, post-handshake auth; its CA
 * store is set to the client's (the one the loop gave when it asked), never
 * to another or an empty one. libcurl then configures it for the new
 * connection as it would a new one, the SSL_CTX callback installs that same
 * store again, and SSL_new copies the settings into the connection. What an
 * SSL reads from its context later (the CA store, the new-session and keylog
 * callbacks) is the same for every connection of a loop. What libcurl sets
 * only for options we never give (client certificates, TLS 1.2 cipher lists,
 * curves, SRP) is not put back; the TLS 1.3 suites (CURLOPT_TLS13_CIPHERS)
 * every transfer gives the same list (Defaults.tls13CipherSuites), which
 * libcurl sets on each connection's context. Other threads, and a loop thread before it asks, get
 * a new context. A loop asks only when its client has a CA store of its own
 * (CurlLoop): an SSL verifies with its context's store as it is at that
 * moment, so every connection sharing the context must get the same store
 * from the callback; and a handshake under way on one connection still finds
 * that store when another connection's set-up stops between SSL_CTX_new and
 * the callback (a libcurl error in between).
 */
static __thread SSL_CTX *kept_ctx;
static __thread X509_STORE *kept_store;   /* the client's CA store, one reference of ours */
static __thread const SSL_METHOD *kept_method;
static __thread int reuse_ctx;
static __thread uint64_t kept_options;
static __thread long kept_mode, kept_min_version, kept_max_version;
static unsigned long contexts_made, contexts_reused;

static SSL_CTX *real_ssl_ctx_new(const SSL_METHOD *m) {
    (void)pthread_once(&load_once, load_libcurl);
    if (p_SSL_CTX_new != NULL) return p_SSL_CTX_new(m);
    /* libcurl not loaded by us (never the case in asyncfetch): the libssl already in the process */
    void *ssl = dlopen("libssl.so.3", RTLD_NOW | RTLD_NOLOAD);
    SSL_CTX *(*made)(const SSL_METHOD *) = ssl != NULL ? (SSL_CTX *(*)(const SSL_METHOD *))dlsym(ssl, "SSL_CTX_new") : NULL;
    return made != NULL ? made(m) : NULL;
}

/* Puts back what a connection's set-up changed; 0 when the context cannot be reused. */
static int reset_kept_ctx(SSL_CTX *ctx) {
    if (p_X509_STORE_up_ref(kept_store) != 1) return 0;
    p_SSL_CTX_set_cert_store(ctx, kept_store);   /* drops the context's old reference (to this same store) */
    p_SSL_CTX_clear_options(ctx, UINT64_MAX);
    p_SSL_CTX_set_options(ctx, kept_options);
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_CLEAR_MODE, -1L, NULL);
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, kept_mode, NULL);
    if (p_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, kept_min_version, NULL) != 1) return 0;
    if (p_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, kept_max_version, NULL) != 1) return 0;
    if (p_SSL_CTX_set_alpn_protos(ctx, NULL, 0) != 0) return 0;   /* 0 is success here */
    p_SSL_CTX_set_msg_callback(ctx, NULL);
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, NULL);
    p_SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    p_SSL_CTX_set_keylog_callback(ctx, NULL);
    p_SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_SERVER, NULL);
    p_SSL_CTX_sess_set_new_cb(ctx, NULL);
    p_SSL_CTX_set_post_handshake_auth(ctx, 0);
    return 1;
}

SSL_CTX *SSL_CTX_new(const SSL_METHOD *m) {
    if (reuse_ctx && kept_ctx != NULL && kept_method == m && reset_kept_ctx(kept_ctx)
        && p_SSL_CTX_up_ref(kept_ctx) == 1) {
        __atomic_add_fetch(&contexts_reused, 1, __ATOMIC_RELAXED);
        return kept_ctx;
    }
    SSL_CTX *ctx = real_ssl_ctx_new(m);
    if (ctx == NULL) return NULL;
    __atomic_add_fetch(&contexts_made, 1, __ATOMIC_RELAXED);
    if (reuse_ctx && kept_ctx == NULL && p_SSL_CTX_up_ref(ctx) == 1) {
        kept_ctx = ctx;
        kept_method = m;
        kept_options = p_SSL_CTX_get_options(ctx);
        kept_mode = p_SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, 0, NULL);
        kept_min_version = p_SSL_CTX_ctrl(ctx, SSL_CTRL_GET_MIN_PROTO_VERSION, 0, NULL);
        kept_max_version = p_SSL_CTX_ctrl(ctx, SSL_CTRL_GET_MAX_PROTO_VERSION, 0, NULL);
    }
    return ctx;
}

void ccurl_ssl_ctx_reuse_begin(void *store) {
    if (!openssl_loaded || store == NULL || kept_store != NULL || p_X509_STORE_up_ref(store) != 1) return;
    kept_store = store;
    reuse_ctx = 1;
}

void ccurl_ssl_ctx_reuse_end(void) {
    if (kept_ctx != NULL) p_SSL_CTX_free(kept_ctx);   /* connections still open hold their own references */
    if (kept_store != NULL) p_X509_STORE_free(kept_store);
    kept_ctx = NULL;
    kept_store = NULL;
    kept_method = NULL;
    reuse_ctx = 0;
}

unsigned long ccurl_ssl_contexts_made(void) {
    return __atomic_load_n(&contexts_made, __ATOMIC_RELAXED);
}

unsigned long ccurl_ssl_contexts_reused(void) {
    return __atomic_load_n(&contexts_reused, __ATOMIC_RELAXED);
}

CURLcode ccurl_easy_clear_ca_files(CURL *handle) {
    CURLcode rc = p_curl_easy_setopt(handle, CURLOPT_CAINFO, (char *)NULL);
    if (rc == CURLE_OK) rc = p_curl_easy_setopt(handle, CURLOPT_CAPATH, (char *)NULL);
    return rc;
}

/*
 * A held body is copied out of libcurl's receive buffer on the loop thread and
 * read next by a completion worker, on the other core. memcpy's cached stores
 * must first take each of the destination's lines from wherever they were
 * last (the worker that read and freed the previous body there), and the
 * worker must then take them back from the loop's core: in the cold 10k case
 * that copy was the loop thread's largest item of its own (3 % of the
 * process's perf samples). Non-temporal stores send the lines towards memory
 * instead, with no ownership to take, and the worker reads them from there.
 */
void ccurl_copy_past_cache(void *destination, const void *source, size_t count) {
#if defined(__x86_64__) && defined(__SSE2__)
    if (count >= 256) {
        unsigned char *to = destination;
        const unsigned char *from = source;
        size_t head = (16 - ((uintptr_t)to & 15)) & 15;   /* _mm_stream_si128 needs 16-byte alignment */
        memcpy(to, from, head);
        size_t done = head;
        for (; done + 64 <= count; done += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(from + done));
            __m128i b = _mm_loadu_si128((const __m128i *)(from + done + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(from + done + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(from + done + 48));
            _mm_stream_si128((__m128i *)(to + done), a);
            _mm_stream_si128((__m128i *)(to + done + 16), b);
            _mm_stream_si128((__m128i *)(to + done + 32), c);
            _mm_stream_si128((__m128i *)(to + done + 48), d);
        }
        _mm_sfence();   /* the stores are weakly ordered: done before the body is handed over */
        memcpy(to + done, from + done, count - done);
        return;
    }
#endif
    memcpy(destination, source, count);
}

long ccurl_usable_cores(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return count;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? online : 1;
}

/*
 * libcurl's ASCII case-insensitive comparisons, in the executable's place
 * (exported: Package.swift). libcurl 7.88 calls its own exported
 * curl_strequal and curl_strnequal through the PLT (143 and 122 call sites:
 * `checkprefix` of each response header line against each field it knows,
 * `Curl_checkheaders` over the request's fields, scheme and host names), and
 * they call an out-of-line Curl_raw_toupper twice a character: about 7.5 k
 * instructions a transfer on the loop thread, ~100 calls (bench/history/cold.md,
 * "Session 19: the loop thread"). These give the same answer for every input
 * (strcase.c: only a-z fold, no locale, NULL pointers as there), and fold
 * only bytes that differ. Self-contained, so a second libcurl in the process
 * (libcurl-gnutls, which libvips loads) may bind to them as well.
 */
/* Whether two bytes that differ are the same ASCII letter in two cases. */
static inline int same_letter(unsigned a, unsigned b) {
    a |= 0x20;
    return a == (b | 0x20) && a - 'a' < 26u;
}

__attribute__((visibility("default"))) int curl_strequal(const char *first, const char *second) {
    if (first == NULL || second == NULL) return first == NULL && second == NULL;
    for (;; first++, second++) {
        unsigned a = (unsigned char)*first, b = (unsigned char)*second;
        if (a == b) {
            if (a == 0) return 1;
        } else if (!same_letter(a, b)) {
            return 0;   /* a NUL against anything else included */
        }
    }
}

__attribute__((visibility("default"))) int curl_strnequal(const char *first, const char *second, size_t max) {
    if (first == NULL || second == NULL) return first == NULL && second == NULL && max;
    for (; max > 0; max--, first++, second++) {
        unsigned a = (unsigned char)*first, b = (unsigned char)*second;
        if (a == b) {
            if (a == 0) return 1;
        } else if (!same_letter(a, b)) {
            return 0;
        }
    }
    return 1;
}

int ccurl_libcurl_strequal(const char *first, const char *second) {
    return p_curl_strequal(first, second);
}

int ccurl_libcurl_strnequal(const char *first, const char *second, size_t max) {
    return p_curl_strnequal(first, second, max);
}

/*
 * libcurl's curl_msnprintf and curl_maprintf, in the executable's place for
 * the formats libcurl 7.88 writes on every transfer (exported: Package.swift).
 * libcurl calls them through the PLT (90 and 83 call sites), and its printf
 * engine hands the output on a character at a time through a function call
 * (~100 instructions a character): the connection cache's key ("%u/%ld/%s"),
 * "Connection #%ld to host %s left intact" (written at every transfer's end
 * whether or not anything shows it), the request's "Host: %s%s%s:%d\r\n", a
 * URL's port ("%ld") and IPv4 address ("%u.%u.%u.%u"): ~7.8 k instructions
 * a transfer on the loop thread (bench/history/cold.md, "Session 19: the loop
 * thread"). Here a format of text and up to 64 plain %s (not NULL), %d, %u,
 * %ld and %lu, whose output fits 512 bytes, is written directly, exactly as
 * libcurl's engine writes it (decimal digits, a '-' before a negative number;
 * and msnprintf's truncation: at most `max` - 1 characters and the NUL, the
 * count of those characters returned). Anything else (flags, a width, another
 * conversion, "%%", a NULL string, longer output) goes to libcurl's own
 * curl_mvsnprintf / curl_mvaprintf with the arguments untouched. A second
 * libcurl in the process (libcurl-gnutls, which libvips loads) may bind to
 * these as well: they load ours if it is not loaded yet.
 */
enum { PLAIN_FORMAT_MAX = 512, PLAIN_FORMAT_CONVERSIONS = 64 };

/* Writes `format` into out[0, PLAIN_FORMAT_MAX); the length, or -1 when libcurl's engine must write it. */
static int plain_format_copy(char *out, const char *format, va_list ap) {
    size_t n = 0;
    int conversions = 0;
    for (const char *f = format; *f; f++) {
        if (*f != '%') {
            if (n == PLAIN_FORMAT_MAX) return -1;
            out[n++] = *f;
            continue;
        }
        f++;
        if (++conversions > PLAIN_FORMAT_CONVERSIONS) return -1;   /* libcurl's engine writes nothing past 128 */
        int is_long = *f == 'l';
        if (is_long) f++;
        unsigned long magnitude;
        int negative = 0;
        if (*f == 's' && !is_long) {
            const char *text = va_arg(ap, const char *);
            if (text == NULL) return -1;   /* libcurl writes "(nil)" */
            size_t length = strlen(text);
            if (length > PLAIN_FORMAT_MAX - n) return -1;
            memcpy(out + n, text, length);
            n += length;
            continue;
        } else if (*f == 'd') {
            long value = is_long ? va_arg(ap, long) : (long)va_arg(ap, int);
            negative = value < 0;
            magnitude = negative ? 0UL - (unsigned long)value : (unsigned long)value;
        } else if (*f == 'u') {
            magnitude = is_long ? va_arg(ap, unsigned long) : (unsigned long)va_arg(ap, unsigned int);
        } else {
            return -1;
        }
        char digits[24];
        size_t count = 0;
        do {
            digits[count++] = (char)('0' + magnitude % 10);
            magnitude /= 10;
        } while (magnitude > 0);
        if (count + (size_t)negative > PLAIN_FORMAT_MAX - n) return -1;
        if (negative) out[n++] = '-';
        while (count > 0) out[n++] = digits[--count];
    }
    return (int)n;
}

/* plain_format_copy on a copy of `ap`: the caller's arguments stay unread for libcurl's engine. */
static int plain_format(char *out, const char *format, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int length = plain_format_copy(out, format, copy);
    va_end(copy);
    return length;
}

/* libcurl's own engine, loaded if a second libcurl called before ours was (NULL: not loadable).
 * The pointers are read only after pthread_once, which orders them after load_libcurl's writes. */
static int (*libcurl_vsnprintf(void))(char *, size_t, const char *, va_list) {
    if (pthread_once(&load_once, load_libcurl) != 0) return NULL;
    return p_curl_mvsnprintf;
}

static char *(*libcurl_vaprintf(void))(const char *, va_list) {
    if (pthread_once(&load_once, load_libcurl) != 0) return NULL;
    return p_curl_mvaprintf;
}

__attribute__((visibility("default"))) int curl_msnprintf(char *buffer, size_t max, const char *format, ...) {
    char out[PLAIN_FORMAT_MAX];
    va_list ap;
    va_start(ap, format);
    int length = plain_format(out, format, ap);
    if (length < 0) {
        int (*engine)(char *, size_t, const char *, va_list) = libcurl_vsnprintf();
        length = engine != NULL ? engine(buffer, max, format, ap) : 0;
        if (engine == NULL && max > 0) buffer[0] = '\0';
        va_end(ap);
        return length;
    }
    va_end(ap);
    if (max == 0) return 0;
    size_t kept = (size_t)length < max ? (size_t)length : max - 1;
    memcpy(buffer, out, kept);
    buffer[kept] = '\0';
    return (int)kept;
}

__attribute__((visibility("default"))) char *curl_maprintf(const char *format, ...) {
    char out[PLAIN_FORMAT_MAX];
    va_list ap;
    va_start(ap, format);
    int length = plain_format(out, format, ap);
    if (length < 0) {
        char *(*engine)(const char *, va_list) = libcurl_vaprintf();
        char *made = engine != NULL ? engine(format, ap) : NULL;
        va_end(ap);
        return made;
    }
    va_end(ap);
    char *made = malloc((size_t)length + 1);   /* libcurl frees it with free() */
    if (made == NULL) return NULL;
    memcpy(made, out, (size_t)length);
    made[length] = '\0';
    return made;
}

/* libcurl's own engine, for ccurl_printf_mismatches. */
static int libcurl_snprintf(char *buffer, size_t max, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int length = p_curl_mvsnprintf(buffer, max, format, ap);
    va_end(ap);
    return length;
}

static char *libcurl_aprintf(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    char *made = p_curl_mvaprintf(format, ap);
    va_end(ap);
    return made;
}

/* Every size of buffer from 0 to 700 bytes, and the allocated string. */
#define COMPARE_PRINTF(...) do { \
        for (size_t max = 0; max <= sizeof ours; max++) { \
            memset(ours, 'x', sizeof ours); \
            memset(theirs, 'x', sizeof theirs); \
            int ours_rc = curl_msnprintf(ours, max, __VA_ARGS__); \
            int theirs_rc = libcurl_snprintf(theirs, max, __VA_ARGS__); \
            if (ours_rc != theirs_rc || memcmp(ours, theirs, sizeof ours) != 0) mismatches++; \
        } \
        char *ours_made = curl_maprintf(__VA_ARGS__), *theirs_made = libcurl_aprintf(__VA_ARGS__); \
        if (ours_made == NULL || theirs_made == NULL || strcmp(ours_made, theirs_made) != 0) mismatches++; \
        free(ours_made); \
        free(theirs_made); \
    } while (0)

int ccurl_printf_mismatches(void) {
    if (ccurl_global_init() != CURLE_OK) return -1;
    char ours[700], theirs[700], long_host[601], host511[512], host512[513];
    memset(long_host, 'h', 600);
    long_host[600] = '\0';
    memset(host511, 'a', 511);
    host511[511] = '\0';
    memset(host512, 'b', 512);
    host512[512] = '\0';
    int mismatches = 0;
    COMPARE_PRINTF("%u/%ld/%s", 0u, 80L, "example.com");
    COMPARE_PRINTF("%u/%ld/%s", 4294967295u, -1L, long_host);
    COMPARE_PRINTF("%ld/%s", 443L, "Example.COM");
    COMPARE_PRINTF("Connection #%ld to host %s left intact", 0L, "127.0.0.1");
    COMPARE_PRINTF("Connection #%ld to host %s left intact", LONG_MAX, "h");
    COMPARE_PRINTF("Connection #%ld to host %s left intact", LONG_MIN, "");
    COMPARE_PRINTF("Host: %s%s%s:%d\r\n", "[", "::1", "]", 8080);
    COMPARE_PRINTF("Host: %s%s%s:%d\r\n", "", "example.com", "", -5);
    COMPARE_PRINTF("Host: %s%s%s\r\n", "", "example.com", "");
    COMPARE_PRINTF("%ld", 0L);
    COMPARE_PRINTF("%ld", 58813L);
    COMPARE_PRINTF("%ld", LONG_MIN);
    COMPARE_PRINTF("%lu", ULONG_MAX);
    COMPARE_PRINTF("%u.%u.%u.%u", 127u, 0u, 0u, 1u);
    COMPARE_PRINTF("%u.%u.%u.%u", 255u, 255u, 255u, 255u);
    COMPARE_PRINTF("%d %s %u", INT_MIN, "x", 0u);
    COMPARE_PRINTF("%d", INT_MAX);
    COMPARE_PRINTF("%s", "");
    COMPARE_PRINTF("%s", (char *)NULL);
    COMPARE_PRINTF("%s", long_host);
    COMPARE_PRINTF("%s%s", host511, "a");
    COMPARE_PRINTF("%s%s", host512, "ab");
    COMPARE_PRINTF("%s:%d", host511, 7);
    COMPARE_PRINTF("%s", "");
    COMPARE_PRINTF("no conversion at all");
    COMPARE_PRINTF("100%% %d", 5);
    COMPARE_PRINTF("%5d|%-3u|%05ld", 3, 4u, 5L);
    COMPARE_PRINTF("%zu %zd", (size_t)5, (ssize_t)-5);
    COMPARE_PRINTF("%.*s", 3, "abcdef");
    COMPARE_PRINTF("%x %X %o %c", 255u, 255u, 8u, 'c');
    COMPARE_PRINTF("%2$s %1$s", "a", "b");
    COMPARE_PRINTF("%" CURL_FORMAT_CURL_OFF_T " bytes", (curl_off_t)-123456789);
    COMPARE_PRINTF("%s%%", "50");
    const char *trailing = "trailing %", *bare_long = "%l";   /* not literals: the compiler checks those */
    COMPARE_PRINTF(trailing, 1);
    COMPARE_PRINTF(bare_long, 1L);
    COMPARE_PRINTF("%lld %llu", -5LL, 5ULL);
    return mismatches;
}

/*
 * glibc's sscanf (the ISO C99 one every library built against glibc 2.7 or later calls), in the
 * executable's place (exported: Package.swift) for the status line libcurl 7.88 reads at every
 * HTTP/1 response: sscanf(line, " HTTP/%1d.%1d%c%3d%c", &major, &minor, &separator, &code,
 * &digit4), ~2.3 k instructions a response in glibc's engine on the loop thread (bench/history/
 * cold.md, "Session 22: cold"). A line of that format that starts "HTTP/", a digit, '.', a digit,
 * any character, three digits and any character (as "HTTP/1.1 200 OK\r\n") is read here as glibc
 * reads it: the five assigned, 5 returned. Any other line, and any other format (of libcurl or of
 * any library in the process), goes to glibc's own with the arguments untouched.
 */
extern int __isoc99_vsscanf(const char *text, const char *format, va_list ap);

static const char libcurl_status_format[] = " HTTP/%1d.%1d%c%3d%c";

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Whether `line` is read the short way: what glibc's engine does with it is then plain. */
static int plain_status_line(const char *line) {
    return strncmp(line, "HTTP/", 5) == 0 && is_digit(line[5]) && line[6] == '.' && is_digit(line[7])
        && line[8] != '\0' && is_digit(line[9]) && is_digit(line[10]) && is_digit(line[11]) && line[12] != '\0';
}

__attribute__((visibility("default"))) int __isoc99_sscanf(const char *text, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int assigned;
    if (strcmp(format, libcurl_status_format) == 0 && plain_status_line(text)) {
        *va_arg(ap, int *) = text[5] - '0';
        *va_arg(ap, int *) = text[7] - '0';
        *va_arg(ap, char *) = text[8];
        *va_arg(ap, int *) = (text[9] - '0') * 100 + (text[10] - '0') * 10 + (text[11] - '0');
        *va_arg(ap, char *) = text[12];
        assigned = 5;
    } else {
        assigned = __isoc99_vsscanf(text, format, ap);
    }
    va_end(ap);
    return assigned;
}

/* glibc's own, for ccurl_sscanf_mismatches. */
static int glibc_sscanf(const char *text, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int assigned = __isoc99_vsscanf(text, format, ap);
    va_end(ap);
    return assigned;
}

/* Whether ours and glibc's read `line` alike with libcurl's status-line format. */
static int status_line_mismatch(const char *line) {
    int major[2] = {-7, -7}, minor[2] = {-7, -7}, code[2] = {-7, -7};
    char separator[2] = {'?', '?'}, digit4[2] = {'?', '?'};
    int ours = __isoc99_sscanf(line, libcurl_status_format, &major[0], &minor[0], &separator[0], &code[0], &digit4[0]);
    int theirs = glibc_sscanf(line, libcurl_status_format, &major[1], &minor[1], &separator[1], &code[1], &digit4[1]);
    return ours != theirs || major[0] != major[1] || minor[0] != minor[1] || separator[0] != separator[1]
        || code[0] != code[1] || digit4[0] != digit4[1];
}

int ccurl_sscanf_mismatches(void) {
    static const char *const lines[] = {
        "HTTP/1.1 200 OK\r\n", "HTTP/1.0 404 Not Found\r\n", "HTTP/1.1 200", "HTTP/1.1 200 ", "HTTP/1.1 2000 x",
        "HTTP/1.1 20", "HTTP/1.1 20 x", "HTTP/1.1", "HTTP/1.1 ", "HTTP/1.", "HTTP/", "HTTP", "", " HTTP/1.1 200 OK",
        "\r\nHTTP/1.1 200 OK", "http/1.1 200 OK", "HTTP/2 200\r\n", "HTTP/2.0 200 OK", "HTTP/1.1 -20 x",
        "HTTP/1.1 +20 x", "HTTP/1.1 099 x", "HTTP/a.1 200 OK", "HTTP/1.x 200 OK", "HTTP/1.1\t200 OK",
        "HTTP/1.1  200 OK", "HTTP/1.12 200 OK", "HTTP/11.1 200 OK", "HTTP/ 1.1 200 OK", "HTTP/1. 1 200 OK",
        "HTTP/1.1 2 00 OK", "HTTP/9.9 999\n", "HTTP/0.0 000\0hidden",
    };
    int mismatches = 0;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) mismatches += status_line_mismatch(lines[i]);
    /* Every byte at every place of a usual line, and the line cut at every length. */
    const char usual[] = "HTTP/1.1 200 OK\r\n";
    char line[sizeof usual];
    for (size_t at = 0; at + 1 < sizeof usual; at++) {
        for (int byte = 1; byte < 256; byte++) {
            memcpy(line, usual, sizeof usual);
            line[at] = (char)byte;
            mismatches += status_line_mismatch(line);
        }
        memcpy(line, usual, sizeof usual);
        line[at] = '\0';
        mismatches += status_line_mismatch(line);
    }
    /* Another format goes to glibc's engine. */
    int a = 0, b = 0;
    char word[2][8] = {"", ""};
    if (__isoc99_sscanf("HTTP/2 301", " HTTP/%1[23] %d", word[0], &a) != glibc_sscanf("HTTP/2 301", " HTTP/%1[23] %d", word[1], &b)
        || a != b || strcmp(word[0], word[1]) != 0) mismatches++;
    return mismatches;
}
