#define _GNU_SOURCE   /* PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP */
#include "CVips.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vips/vips.h>

// libvips is loaded on first use with dlopen instead of being linked: it
// pulls in about 100 shared libraries, which cost every process start tens
// of milliseconds (measured: 2 ms -> 60 ms for an empty C program on this
// VM), while only `--decode` and `cache verify --decode` use it. The
// headers give the types; each function is looked up once, in `start`.
#define CVIPS_FUNCTIONS(X) \
    X(vips_init) X(vips_error_buffer) X(vips_error_clear) X(vips_cache_set_max) \
    X(vips_concurrency_set) X(vips_leak_set) X(vips_type_find) X(vips_call) \
    X(vips_image_get_width) X(vips_image_get_height) X(vips_avg) \
    X(g_log_set_handler) X(g_object_unref) X(g_try_malloc0) X(g_free)
#define CVIPS_POINTER(name) static __typeof__(&name) p_##name;
CVIPS_FUNCTIONS(CVIPS_POINTER)
#define vips_init p_vips_init
#define vips_error_buffer p_vips_error_buffer
#define vips_error_clear p_vips_error_clear
#define vips_cache_set_max p_vips_cache_set_max
#define vips_concurrency_set p_vips_concurrency_set
#define vips_leak_set p_vips_leak_set
#define vips_type_find p_vips_type_find
#define vips_call p_vips_call
#define vips_image_get_width p_vips_image_get_width
#define vips_image_get_height p_vips_image_get_height
#define vips_avg p_vips_avg
#define g_log_set_handler p_g_log_set_handler
#define g_object_unref p_g_object_unref
#define g_try_malloc0 p_g_try_malloc0
#define g_free p_g_free

struct cvips_image {
    VipsImage *image;
    int alone;
};

// libvips keeps one error buffer for the whole process: two decodes that
// failed at once each read the other's message, or none (each clears it
// first). So a decode runs `alone` (this lock exclusive, held from
// cvips_open to cvips_close) when its failure's message is wanted, and
// beside others (shared) when it is not: a failure there says nothing and
// the caller runs it again alone (VipsDecoder), which costs a second
// decode only for a body that fails. Writers first: a decode waiting to
// run alone is not starved by a stream of shared ones.
static pthread_rwlock_t decode_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_result = -1;
static char start_error[256];

/// Copies libvips' error buffer (trimmed of its final newline) into `error`, then clears it.
static void take_error(const char *fallback, char *error, size_t error_len) {
    if (p_vips_error_buffer == NULL) {   // libvips never loaded: nothing to take
        if (error && error_len) snprintf(error, error_len, "%s", fallback);
        return;
    }
    if (error == NULL || error_len == 0) { vips_error_clear(); return; }
    const char *text = vips_error_buffer();
    if (text == NULL || text[0] == '\0') text = fallback;
    snprintf(error, error_len, "%s", text);
    size_t len = strlen(error);
    while (len > 0 && (error[len - 1] == '\n' || error[len - 1] == ' ')) error[--len] = '\0';
    for (size_t i = 0; i < len; i++) if (error[i] == '\n') error[i] = ' ';
    vips_error_clear();
}

/// libvips logs a warning per failed tile on stderr; the failure itself is returned, so the log is dropped.
static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

/// dlopen/dlsym libvips (its glib and gobject symbols come through its own
/// dependencies). 0 on success, else -1 with the reason in start_error.
static int load(void) {
    void *lib = dlopen("libvips.so.42", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        snprintf(start_error, sizeof start_error, "libvips could not be loaded: %s", why ? why : "libvips.so.42 not found");
        return -1;
    }
#define CVIPS_LOOKUP(name) \
    p_##name = (__typeof__(p_##name))dlsym(lib, #name); \
    if (p_##name == NULL) { \
        snprintf(start_error, sizeof start_error, "libvips could not be loaded: no symbol %s", #name); \
        return -1; \
    }
    CVIPS_FUNCTIONS(CVIPS_LOOKUP)
#undef CVIPS_LOOKUP
    return 0;
}

static void start(void) {
    if (load() != 0) return;
    // VIPS_INIT's own check compares the header's version with the
    // library's; the soname (libvips.so.42) already pins the ABI.
    if (vips_init("asyncfetch") != 0) {
        take_error("libvips could not start", start_error, sizeof start_error);
        return;
    }
    vips_cache_set_max(0);          // every body is a new file; nothing to reuse
    vips_concurrency_set(1);        // the caller's thread does the work: one per image
    vips_leak_set(FALSE);
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, drop_log, NULL);
    start_result = 0;
}

int cvips_start(char *error, size_t error_len) {
    if (pthread_once(&start_once, start) != 0) {
        if (error && error_len) snprintf(error, error_len, "%s", "libvips could not start (pthread_once)");
        return -1;
    }
    if (start_result != 0 && error && error_len) snprintf(error, error_len, "%s", start_error);
    return start_result;
}

int cvips_has_loader(const char *loader) {
    if (cvips_start(NULL, 0) != 0) return 0;
    return vips_type_find("VipsOperation", loader) != 0;
}

/// A failed call's reason: libvips' own for a decode that runs alone, else none (an empty string).
static void failed(int alone, const char *fallback, char *error, size_t error_len) {
    if (alone) take_error(fallback, error, error_len);
    else if (error && error_len) error[0] = '\0';
}

cvips_image *cvips_open(const char *path, const char *loader, int fail_on_warning, int alone, char *error, size_t error_len) {
    if (!cvips_has_loader(loader)) {
        if (error && error_len) snprintf(error, error_len, "this libvips has no %s", loader);
        return NULL;
    }
    int locked = alone ? pthread_rwlock_wrlock(&decode_lock) : pthread_rwlock_rdlock(&decode_lock);
    if (locked != 0) {
        if (error && error_len) snprintf(error, error_len, "the decoder's lock failed: %s", strerror(locked));
        return NULL;
    }
    if (alone) vips_error_clear();   // what failed decodes beside others left there
    VipsFailOn level = fail_on_warning ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_ERROR;
    VipsImage *image = NULL;
    if (vips_call(loader, path, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", level, NULL) != 0 || image == NULL) {
        failed(alone, "the decoder could not open the image", error, error_len);
        if (image) g_object_unref(image);
        (void)pthread_rwlock_unlock(&decode_lock);   // fails only for a lock this thread does not hold
        return NULL;
    }
    cvips_image *opened = g_try_malloc0(sizeof *opened);
    if (opened == NULL) {
        g_object_unref(image);
        (void)pthread_rwlock_unlock(&decode_lock);
        if (error && error_len) snprintf(error, error_len, "%s", "out of memory");
        return NULL;
    }
    opened->image = image;
    opened->alone = alone;
    return opened;   // the lock is held until cvips_close
}

void cvips_size(const cvips_image *image, int64_t *width, int64_t *height) {
    *width = image ? vips_image_get_width(image->image) : 0;
    *height = image ? vips_image_get_height(image->image) : 0;
}

int cvips_decode_all(cvips_image *image, char *error, size_t error_len) {
    double average = 0;
    if (image == NULL) {
        if (error && error_len) snprintf(error, error_len, "%s", "no image");
        return -1;
    }
    if (vips_avg(image->image, &average, NULL) != 0) {
        failed(image->alone, "the decoder failed", error, error_len);
        return -1;
    }
    return 0;
}

void cvips_close(cvips_image *image) {
    if (image == NULL) return;
    g_object_unref(image->image);
    g_free(image);
    (void)pthread_rwlock_unlock(&decode_lock);   // taken by cvips_open on this thread
}
