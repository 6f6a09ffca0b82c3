#include "CVips.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vips/vips.h>

struct cvips_image {
    VipsImage *image;
};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_result = -1;
static char start_error[256];

/// Copies libvips' error buffer (trimmed of its final newline) into `error`, then clears it.
static void take_error(const char *fallback, char *error, size_t error_len) {
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

static void start(void) {
    if (VIPS_INIT("asyncfetch") != 0) {
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

cvips_image *cvips_open(const char *path, const char *loader, int fail_on_warning, char *error, size_t error_len) {
    vips_error_clear();
    if (!cvips_has_loader(loader)) {
        if (error && error_len) snprintf(error, error_len, "this libvips has no %s", loader);
        return NULL;
    }
    VipsFailOn level = fail_on_warning ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_ERROR;
    VipsImage *image = NULL;
    if (vips_call(loader, path, &image, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", level, NULL) != 0 || image == NULL) {
        take_error("the decoder could not open the image", error, error_len);
        if (image) g_object_unref(image);
        return NULL;
    }
    cvips_image *opened = g_try_malloc0(sizeof *opened);
    if (opened == NULL) {
        g_object_unref(image);
        if (error && error_len) snprintf(error, error_len, "%s", "out of memory");
        return NULL;
    }
    opened->image = image;
    return opened;
}

void cvips_size(const cvips_image *image, int64_t *width, int64_t *height) {
    *width = image ? vips_image_get_width(image->image) : 0;
    *height = image ? vips_image_get_height(image->image) : 0;
}

int cvips_decode_all(cvips_image *image, char *error, size_t error_len) {
    vips_error_clear();
    double average = 0;
    if (image == NULL || vips_avg(image->image, &average, NULL) != 0) {
        take_error("the decoder failed", error, error_len);
        return -1;
    }
    return 0;
}

void cvips_close(cvips_image *image) {
    if (image == NULL) return;
    g_object_unref(image->image);
    g_free(image);
}
