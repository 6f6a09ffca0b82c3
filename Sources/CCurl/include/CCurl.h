// Typed, non-variadic wrappers over the parts of libcurl that Swift cannot
// call directly (curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// C variadic functions, which Swift does not import).
//
// Only Sources/Fetch/Curl/*.swift imports this module.
#ifndef ASYNCFETCH_CCURL_H
#define ASYNCFETCH_CCURL_H

#include <curl/curl.h>
#include <sys/types.h>

typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
typedef int (*ccurl_prereq_callback)(void *userdata, char *primary_ip, char *local_ip, int primary_port,
                                     int local_port);
/// CURLOPT_SSL_CTX_FUNCTION's signature (`ssl_ctx`: OpenSSL's SSL_CTX *).
typedef CURLcode (*ccurl_ssl_ctx_callback)(CURL *handle, void *ssl_ctx, void *userdata);
typedef int (*ccurl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);

/// Loads libcurl (dlopen, once) and runs curl_global_init. CURLE_FAILED_INIT
/// when libcurl.so.4 or one of its symbols is missing (see ccurl_load_error).
CURLcode ccurl_global_init(void);
/// Why loading failed (dlopen's words, or the symbol libcurl.so.4 lacks), or NULL.
const char *ccurl_load_error(void);
const char *ccurl_version(void);

/// One easy handle's URL for ccurl_easy_set_url: libcurl's URL handle (CURLU) and what it was
/// last parsed from. NULL: out of memory. Freed with ccurl_url_free after the easy handle (NULL: nothing).
typedef struct ccurl_url ccurl_url;
ccurl_url *ccurl_url_new(void);
void ccurl_url_free(ccurl_url *url);
/// Makes `url` hold libcurl 7.88's parse of `text` (curl_url_set of the whole URL with the flags
/// of its own parse of CURLOPT_URL). When `text` has the scheme and authority of the URL `url` last
/// parsed whole, and a path and query that parse would keep byte for byte (printable ASCII, no
/// '%', no '#', no dot segment), only the path and the query are set (~0.5 k instructions against
/// ~5 k): the same parts as the whole parse. 0: libcurl refuses `text` (`url` holds what it held);
/// 1: parsed whole; 2: path and query set.
int ccurl_url_parse(ccurl_url *url, const char *text);
/// CURLOPT_URL, and CURLOPT_CURLU to `url` holding libcurl's parse of `text` (ccurl_url_parse; no
/// parse when libcurl refuses the URL: it then parses CURLOPT_URL itself and says why). libcurl
/// 7.88 then copies the parse at the transfer's start instead of parsing the URL and formatting it
/// back whole (`curl_url_get`, ~7 k instructions): see CurlEasy.prepare. `url` must not change
/// until the transfer ends (a retry copies it again). NULL `url`: CURLOPT_URL alone.
CURLcode ccurl_easy_set_url(CURL *handle, ccurl_url *url, const char *text);
/// For tests: parses `first` then `next` with ccurl_url_parse on one ccurl_url, and `next` whole on
/// a new CURLU, and compares every part (curl_url_get, with each flag libcurl reads it with).
/// 2: the same, path and query set; 1: the same (parsed whole, or both refused); 0: they differ;
/// -1: libcurl missing or out of memory.
int ccurl_url_reparse_check(const char *first, const char *next);
/// For tests: parses `text` (and sets `path` as its path, unless NULL) and compares every part
/// with each encoding flag as the executable's curl_url_get answers it (the one libcurl binds to)
/// and as libcurl's own does. The count of differences; -1 when libcurl refuses or is missing.
int ccurl_url_get_mismatches(const char *text, const char *path);

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback cb);
CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback cb);
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback cb);
/// CURLOPT_SSL_CTX_FUNCTION: CURLE_NOT_BUILT_IN from a libcurl whose TLS
/// library has no such hook. libcurl 7.88 (OpenSSL) calls it for every new
/// TLS connection once its TCP connection is made, before the handshake.
CURLcode ccurl_easy_setopt_ssl_ctx_callback(CURL *handle, ccurl_ssl_ctx_callback cb);

CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value);

CURLcode ccurl_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback cb);
CURLcode ccurl_easy_setopt_closesocket_callback(CURL *handle, curl_closesocket_callback cb);
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);
CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value);
CURLMcode ccurl_multi_setopt_socket_callback(CURLM *multi, curl_socket_callback cb);
CURLMcode ccurl_multi_setopt_timer_callback(CURLM *multi, curl_multi_timer_callback cb);
CURLSHcode ccurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

/// A new OpenSSL X509_STORE (loads libcurl first) trusting `system` (a
/// directory of certificates by subject hash, read lazily, or a bundle file;
/// NULL: none) and the certificates of `extra` (a PEM file, read once, so a
/// pipe serves too; NULL: none). NULL on failure, with the step that failed in `*why`.
void *ccurl_ca_store_new(const char *system, const char *extra, const char **why);
/// Drops the caller's reference to a store from ccurl_ca_store_new (NULL: nothing).
void ccurl_ca_store_free(void *store);
/// Makes a new TLS connection verify with `store` (from ccurl_ca_store_new;
/// one more reference, dropped with the SSL_CTX): for an SSL_CTX callback.
CURLcode ccurl_ssl_ctx_use_store(void *ssl_ctx, void *store);
/// Hands libcurl's "new session" callback a copy of each TLS session, so the
/// session it caches stays resumable when the connection is closed without a
/// close_notify (libcurl 7.88 does so with HTTP/2): for an SSL_CTX callback.
/// Does nothing without OpenSSL's functions or without libcurl's callback.
void ccurl_ssl_ctx_keep_sessions(void *ssl_ctx);
/// From now on the calling thread (a transfer loop's) makes one SSL_CTX and
/// hands it to each of its new TLS connections again, set back to a new
/// context's settings (libcurl 7.88 makes one per connection). Only where the
/// executable exports SSL_CTX_new (Package.swift); nothing without OpenSSL.
/// Only for a thread whose every TLS connection gets `store` (an X509_STORE *,
/// which the thread holds a reference to until ccurl_ssl_ctx_reuse_end) from
/// the SSL_CTX callback: the context's store is what a handshake verifies with,
/// and a context handed out again has `store` from the start. Nothing when
/// `store` is NULL.
void ccurl_ssl_ctx_reuse_begin(void *store);
/// Ends ccurl_ssl_ctx_reuse_begin on the calling thread and drops its context.
void ccurl_ssl_ctx_reuse_end(void);
/// SSL_CTXs made by OpenSSL in this process through the exported SSL_CTX_new,
/// and those handed out again instead (ccurl_ssl_ctx_reuse_begin): for tests.
unsigned long ccurl_ssl_contexts_made(void);
unsigned long ccurl_ssl_contexts_reused(void);
/// CURLOPT_CAINFO and CURLOPT_CAPATH NULL, so libcurl loads no CA file
/// itself (the SSL_CTX callback installs the store). The first failing setopt's code.
CURLcode ccurl_easy_clear_ca_files(CURL *handle);

/// libcurl's own curl_strequal and curl_strnequal (the library's, not the
/// executable's, which take their place for libcurl: CCurl.c): for tests.
int ccurl_libcurl_strequal(const char *first, const char *second);
int ccurl_libcurl_strnequal(const char *first, const char *second, size_t max);

/// How many of a table of formats (the ones libcurl writes on every transfer,
/// and others it hands to its own engine) the executable's curl_msnprintf and
/// curl_maprintf (CCurl.c) write unlike libcurl's, at every buffer size from
/// 0 to 700 bytes; -1 when libcurl is not loaded: for tests.
int ccurl_printf_mismatches(void);

/// How many of a table of status lines (usual ones, every byte of a usual
/// one changed, the line cut at every length) the executable's sscanf
/// (CCurl.c) reads unlike glibc's with libcurl's status-line format, plus
/// one other format: for tests.
int ccurl_sscanf_mismatches(void);

/// Cores this process may run on (sched_getaffinity: a cpuset or `taskset`
/// counts, not the machine's), else the online cores; at least 1.
long ccurl_usable_cores(void);

/// Copies `count` bytes from `source` to `destination` (not overlapping), as memcpy, but with
/// stores that go past the cache (non-temporal) for all but the ends: a held body, which the
/// loop thread writes and a completion worker on the other core reads next (bench/history/cold.md,
/// "Session 29 — cold21"). memcpy where there are no such stores, and for fewer than 256 bytes.
void ccurl_copy_past_cache(void *destination, const void *source, size_t count);

/// The CURLMsg fields Swift needs, flattened (CURLMsg holds a union).
typedef struct {
    int is_done;
    CURL *easy;
    /// The handle's CURLINFO_PRIVATE (NULL when libcurl gives none).
    void *context;
    CURLcode result;
} ccurl_message;

/// Wraps curl_multi_info_read, with the finished handle's CURLINFO_PRIVATE.
/// Returns 0 when the queue is empty.
int ccurl_multi_next_message(CURLM *multi, ccurl_message *out);

/// A transfer loop's events (CCurlEvents.c): an epoll set of the sockets libcurl asks to be
/// watched (CURLMOPT_SOCKETFUNCTION), libcurl's timer (CURLMOPT_TIMERFUNCTION) and an eventfd
/// that wakes the loop, driving one multi handle with curl_multi_socket_action. Used on the loop's
/// thread only, but for ccurl_events_wake.
typedef struct ccurl_events ccurl_events;
/// Makes the set and installs its callbacks on `multi`; NULL with the call that failed in `*why`
/// (and errno, 0 when libcurl refused). Freed with ccurl_events_free after curl_multi_cleanup.
ccurl_events *ccurl_events_new(CURLM *multi, const char **why);
void ccurl_events_free(ccurl_events *events);
/// Opens and closes `easy`'s connections' sockets through the set (CURLOPT_OPENSOCKETFUNCTION,
/// CURLOPT_CLOSESOCKETFUNCTION), so that it may keep an idle one in it; once per easy handle, which
/// then belongs to this set's multi handle. CURLE_OK or libcurl's refusal.
CURLcode ccurl_events_attach(ccurl_events *events, CURL *easy);
/// Wakes ccurl_events_run, now or at its next call; from any thread.
void ccurl_events_wake(ccurl_events *events);
/// Waits up to `max_wait_ms` (0: not at all; never past libcurl's timer) for a socket or a
/// wake-up, then hands libcurl each ready socket and, once due, its timer. CURLM_OK, or the first
/// code curl_multi_socket_action returned (CURLM_ABORTED_BY_CALLBACK: see ccurl_events_failure).
CURLMcode ccurl_events_run(ccurl_events *events, int max_wait_ms);
/// The errno of the set's first failure since the last look (0: none), with the call that failed
/// in `*call`; clears it. A socket the set could not watch made libcurl end every transfer of the
/// multi handle (CURLE_ABORTED_BY_CALLBACK, not a cancellation).
int ccurl_events_failure(ccurl_events *events, const char **call);

#endif
