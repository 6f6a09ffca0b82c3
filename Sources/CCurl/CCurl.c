#define _GNU_SOURCE   /* memfd_create, pthread_setname_np, sched_getaffinity */
#include "CCurl.h"

#include <dlfcn.h>
#include <sys/mman.h>
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
    X(const char *, curl_share_strerror, (CURLSHcode c))

#define DECLARE_POINTER(ret, name, args) static ret (*p_##name) args;
CCURL_SYMBOLS(DECLARE_POINTER)

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
 * successful ccurl_global_init). */
CURL *curl_easy_init(void) { return p_curl_easy_init(); }
void curl_easy_cleanup(CURL *h) { p_curl_easy_cleanup(h); }
void curl_easy_reset(CURL *h) { p_curl_easy_reset(h); }
CURLcode curl_easy_pause(CURL *h, int bitmask) { return p_curl_easy_pause(h, bitmask); }
const char *curl_easy_strerror(CURLcode c) { return loaded ? p_curl_easy_strerror(c) : "libcurl not loaded"; }
CURLM *curl_multi_init(void) { return p_curl_multi_init(); }
CURLMcode curl_multi_cleanup(CURLM *m) { return p_curl_multi_cleanup(m); }
CURLMcode curl_multi_add_handle(CURLM *m, CURL *h) { return p_curl_multi_add_handle(m, h); }
CURLMcode curl_multi_remove_handle(CURLM *m, CURL *h) { return p_curl_multi_remove_handle(m, h); }
CURLMcode curl_multi_perform(CURLM *m, int *running) { return p_curl_multi_perform(m, running); }
CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd fds[], unsigned int n, int ms, int *numfds) {
    return p_curl_multi_poll(m, fds, n, ms, numfds);
}
CURLMcode curl_multi_wakeup(CURLM *m) { return p_curl_multi_wakeup(m); }
const char *curl_multi_strerror(CURLMcode c) { return loaded ? p_curl_multi_strerror(c) : "libcurl not loaded"; }
struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s) { return p_curl_slist_append(l, s); }
void curl_slist_free_all(struct curl_slist *l) { p_curl_slist_free_all(l); }
CURLSH *curl_share_init(void) { return p_curl_share_init(); }
CURLSHcode curl_share_cleanup(CURLSH *s) { return p_curl_share_cleanup(s); }
const char *curl_share_strerror(CURLSHcode c) { return loaded ? p_curl_share_strerror(c) : "libcurl not loaded"; }

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

int ccurl_memfd(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
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

int ccurl_name_thread(const char *name) {
    char shortened[16];
    size_t n = 0;
    while (n < sizeof shortened - 1 && name[n] != 0) { shortened[n] = name[n]; n++; }
    shortened[n] = 0;
    return pthread_setname_np(pthread_self(), shortened);
}
