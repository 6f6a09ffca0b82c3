#define _GNU_SOURCE   /* sched_getaffinity */
#include "CCurl.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <dlfcn.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stddef.h>

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
    X(CURLcode, curl_global_init, (long flags)) \
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
    X(CURLMcode, curl_multi_perform, (CURLM *m, int *running)) \
    X(CURLMcode, curl_multi_poll, (CURLM *m, struct curl_waitfd fds[], unsigned int n, int ms, int *numfds)) \
    X(CURLMcode, curl_multi_wakeup, (CURLM *m)) \
    X(const char *, curl_multi_strerror, (CURLMcode c)) \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s)) \
    X(void, curl_slist_free_all, (struct curl_slist *l)) \
    X(CURLSH *, curl_share_init, (void)) \
    X(CURLSHcode, curl_share_setopt, (CURLSH *s, CURLSHoption o, ...)) \
    X(CURLSHcode, curl_share_cleanup, (CURLSH *s)) \
    X(const char *, curl_share_strerror, (CURLSHcode c)) \
    X(CURLU *, curl_url, (void)) \
    X(void, curl_url_cleanup, (CURLU *u)) \
    X(CURLUcode, curl_url_set, (CURLU *u, CURLUPart part, const char *content, unsigned int flags))

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

static void load_libcurl(void) {
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) return;
#define RESOLVE(ret, name, args) \
    p_##name = (ret (*) args)dlsym(lib, #name); \
    if (p_##name == NULL) return;
    CCURL_SYMBOLS(RESOLVE)
    loaded = 1;
    CCURL_OPENSSL_SYMBOLS(RESOLVE)
    openssl_loaded = 1;
}

CURLcode ccurl_global_init(void) {
    if (pthread_once(&load_once, load_libcurl) != 0 || !loaded) return CURLE_FAILED_INIT;
    return p_curl_global_init(CURL_GLOBAL_ALL);
}

const char *ccurl_load_error(void) {
    return loaded ? NULL : "could not load libcurl.so.4 (install libcurl4)";
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
HIDDEN CURLMcode curl_multi_perform(CURLM *m, int *running) { return p_curl_multi_perform(m, running); }
HIDDEN CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd fds[], unsigned int n, int ms, int *numfds) {
    return p_curl_multi_poll(m, fds, n, ms, numfds);
}
HIDDEN CURLMcode curl_multi_wakeup(CURLM *m) { return p_curl_multi_wakeup(m); }
HIDDEN const char *curl_multi_strerror(CURLMcode c) { return loaded ? p_curl_multi_strerror(c) : "libcurl not loaded"; }
HIDDEN struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s) { return p_curl_slist_append(l, s); }
HIDDEN void curl_slist_free_all(struct curl_slist *l) { p_curl_slist_free_all(l); }
HIDDEN CURLSH *curl_share_init(void) { return p_curl_share_init(); }
HIDDEN CURLSHcode curl_share_cleanup(CURLSH *s) { return p_curl_share_cleanup(s); }
HIDDEN const char *curl_share_strerror(CURLSHcode c) { return loaded ? p_curl_share_strerror(c) : "libcurl not loaded"; }

CURLU *ccurl_url_new(void) { return p_curl_url(); }
void ccurl_url_free(CURLU *parsed) { if (parsed != NULL) p_curl_url_cleanup(parsed); }

CURLcode ccurl_easy_set_url(CURL *handle, CURLU *parsed, const char *url) {
    CURLcode rc = p_curl_easy_setopt(handle, CURLOPT_URL, url);
    if (rc != CURLE_OK || parsed == NULL) return rc;
    /* The flags of libcurl 7.88's own parse of CURLOPT_URL (url.c, parseurlandfillconn; no
     * CURLOPT_DISALLOW_USERNAME_IN_URL or CURLOPT_PATH_AS_IS, which would add theirs, is set).
     * A URL it refuses: no parse handed over, libcurl parses it and says why, as ever. */
    int ok = p_curl_url_set(parsed, CURLUPART_URL, url, CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK;
    return p_curl_easy_setopt(handle, CURLOPT_CURLU, ok ? parsed : NULL);
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
 * directory's certificates with the subjects of `extra`'s are therefore
 * loaded into the store first. 1, or 0 when `extra` cannot be read.
 */
static int load_namesakes(X509_LOOKUP *directory, const char *extra) {
    X509_STORE *scratch = p_X509_STORE_new();
    if (scratch == NULL) return 0;
    int ok = p_X509_STORE_load_file(scratch, extra) == 1;
    STACK_OF(X509_OBJECT) *objects = ok ? p_X509_STORE_get0_objects(scratch) : NULL;
    int count = objects != NULL ? p_OPENSSL_sk_num((const OPENSSL_STACK *)objects) : 0;
    for (int i = 0; ok && i < count; i++) {
        X509 *cert = p_X509_OBJECT_get0_X509(p_OPENSSL_sk_value((const OPENSSL_STACK *)objects, i));
        if (cert == NULL) continue;   /* a CRL */
        X509_OBJECT *found = p_X509_OBJECT_new();
        if (found == NULL) {
            ok = 0;
            break;
        }
        /* 0: the directory has no such subject, nothing to load (and nothing to tell apart from a
         * failure). 1: loaded into the store, and `found` borrows the store's certificate (OpenSSL
         * 3.0's by_dir takes no reference for it), so one is taken for X509_OBJECT_free to drop. */
        if (p_X509_LOOKUP_by_subject(directory, X509_LU_X509, p_X509_get_subject_name(cert), found) == 1 &&
            p_X509_OBJECT_up_ref_count(found) != 1) {
            ok = 0;   /* `found` still borrows: freeing it would drop the store's reference */
            break;
        }
        p_X509_OBJECT_free(found);
    }
    p_X509_STORE_free(scratch);
    return ok;
}

void *ccurl_ca_store_new(const char *system, const char *extra, const char **why) {
    *why = NULL;
    if (ccurl_global_init() != CURLE_OK || !openssl_loaded) {
        *why = "libcurl's OpenSSL functions were not found";
        return NULL;
    }
    X509_STORE *store = p_X509_STORE_new();
    if (store == NULL) {
        *why = "X509_STORE_new failed";
        return NULL;
    }
    if (p_X509_STORE_set_flags(store, X509_V_FLAG_TRUSTED_FIRST | X509_V_FLAG_PARTIAL_CHAIN) != 1) {
        *why = "X509_STORE_set_flags failed";
    }
    struct stat info;
    if (*why == NULL && system != NULL && stat(system, &info) == 0 && S_ISDIR(info.st_mode)) {
        /* Certificates by subject hash: each is read when a chain asks for
         * its subject, and kept in the store from then on. */
        X509_LOOKUP *lookup = p_X509_STORE_add_lookup(store, p_X509_LOOKUP_hash_dir());
        if (lookup == NULL || p_X509_LOOKUP_ctrl(lookup, X509_L_ADD_DIR, system, X509_FILETYPE_PEM, NULL) != 1) {
            *why = "could not add the system's CA directory";
        } else if (extra != NULL && !load_namesakes(lookup, extra)) {
            *why = "could not load the CA file";
        }
    } else if (*why == NULL && system != NULL && p_X509_STORE_load_file(store, system) != 1) {
        *why = "could not load the system's CA bundle";
    }
    if (*why == NULL && extra != NULL && p_X509_STORE_load_file(store, extra) != 1) {
        *why = "could not load the CA file";
    }
    if (*why != NULL) {
        p_X509_STORE_free(store);
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
 * the HTTPS bench run (bench/README, "Session 18: HTTPS CPU").
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
 * only for options we never give (client certificates, cipher lists, curves,
 * SRP) is not put back. Other threads, and a loop thread before it asks, get
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
