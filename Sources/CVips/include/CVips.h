// The C that ImageDecoding needs from libvips 8.14 (Debian's libvips-dev):
// start the library once, open a body sequentially with failure on the
// decoder's error, read its declared size, and pull every pixel through
// once. Every call here returns a checked result; the error text is taken
// from libvips' error buffer, which is the process's: only a decode that
// runs alone (`cvips_open`'s `alone`) reads it. Only
// Sources/ImageDecoding/VipsDecoder.swift imports it.
#ifndef ASYNCFETCH_CVIPS_H
#define ASYNCFETCH_CVIPS_H

#include <stddef.h>
#include <stdint.h>

/// Starts libvips (VIPS_INIT) once per process, with its operation cache
/// off (every body is a new file) and no worker threads beyond one. 0 on
/// success, else -1 with the reason in `error` (at most `error_len` bytes).
int cvips_start(char *error, size_t error_len);

/// An image opened for one sequential pass; NULL-safe to close.
typedef struct cvips_image cvips_image;

/// Whether this libvips has the loader operation `loader` (e.g. "jxlload");
/// starts libvips first (0 when it cannot start).
int cvips_has_loader(const char *loader);

/// Opens `path` with the loader `loader` (e.g. "jpegload": the format the
/// structure check found, never a guess) and sequential access. `fail_on_warning` non-zero makes
/// the decoder's first warning fatal (libjpeg reports damaged scan data
/// only as a warning), else its first error. NULL on failure, with the
/// reason in `error`. `alone` non-zero: no other decode runs until
/// `cvips_close` (a failure's reason is libvips' own); zero: others may run
/// at once (a decoder's failure then leaves `error` empty, as its message
/// cannot be told from theirs: run it again alone to learn it).
cvips_image *cvips_open(const char *path, const char *loader, int fail_on_warning, int alone, char *error, size_t error_len);

/// The declared width and height (from the header; nothing decoded yet).
void cvips_size(const cvips_image *image, int64_t *width, int64_t *height);

/// Decodes every pixel once (vips_avg over the whole image: memory stays
/// bounded by sequential access). 0 when every pixel decoded, else -1
/// with the reason in `error` (empty for a decode not run alone).
int cvips_decode_all(cvips_image *image, char *error, size_t error_len);

/// Releases the image, and the decode's turn (NULL is fine).
void cvips_close(cvips_image *image);


#endif
