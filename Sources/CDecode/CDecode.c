#include "CDecode.h"

#include <brotli/decode.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/*
 * Every library result is checked: a data error becomes CDECODE_CORRUPT (or
 * the check-value case), an allocation failure CDECODE_NO_MEMORY, and
 * `ended` is set only when the library itself said the stream is complete:
 * zlib's Z_STREAM_END (after it verified the gzip CRC-32 and ISIZE, or the
 * zlib Adler-32), BROTLI_DECODER_RESULT_SUCCESS, or ZSTD_decompressStream
 * returning 0 (a frame decoded, its checksum verified when present, and
 * fully flushed).
 */

struct cdecode {
    cdecode_coding coding;
    int started;     /* some input was given */
    int ended;       /* the last member / frame / stream is complete */
    int trailing;    /* past the end: further bytes are ignored */
    int raw_tried;   /* deflate: fell back to a raw RFC 1951 stream */
    const char *message;
    z_stream zlib;
    BrotliDecoderState *brotli;
    ZSTD_DStream *zstd;
};

cdecode *cdecode_new(cdecode_coding coding) {
    cdecode *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->coding = coding;
    d->message = "";
    switch (coding) {
    case CDECODE_GZIP:
    case CDECODE_DEFLATE:
        /* 15 + 16: gzip only (header and trailer checked); 15: zlib. */
        if (inflateInit2(&d->zlib, coding == CDECODE_GZIP ? 15 + 16 : 15) != Z_OK) {
            free(d);
            return NULL;
        }
        return d;
    case CDECODE_BR:
        d->brotli = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        if (d->brotli == NULL) {
            free(d);
            return NULL;
        }
        return d;
    case CDECODE_ZSTD:
        d->zstd = ZSTD_createDStream();
        if (d->zstd == NULL || ZSTD_isError(ZSTD_initDStream(d->zstd))) {
            if (d->zstd != NULL) ZSTD_freeDStream(d->zstd);
            free(d);
            return NULL;
        }
        return d;
    }
    free(d);
    return NULL;
}

void cdecode_free(cdecode *d) {
    if (d == NULL) return;
    switch (d->coding) {
    case CDECODE_GZIP:
    case CDECODE_DEFLATE: (void)inflateEnd(&d->zlib); break;   /* Z_STREAM_ERROR only for a bad stream pointer */
    case CDECODE_BR: BrotliDecoderDestroyInstance(d->brotli); break;
    case CDECODE_ZSTD: (void)ZSTD_freeDStream(d->zstd); break;   /* fails only for a static stream */
    }
    free(d);
}

static cdecode_status zlib_step(cdecode *d, const uint8_t **in, size_t *in_len, uint8_t *out, size_t cap,
                                size_t *produced) {
    const uint8_t *start = *in;
    int first_call = d->zlib.total_in == 0 && d->zlib.total_out == 0;
    d->zlib.next_in = (Bytef *)*in;
    d->zlib.avail_in = (uInt)(*in_len > UINT32_MAX ? UINT32_MAX : *in_len);
    size_t offered = d->zlib.avail_in;
    d->zlib.next_out = out;
    d->zlib.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
    int rc = inflate(&d->zlib, Z_NO_FLUSH);
    size_t used = offered - d->zlib.avail_in;
    *produced = (size_t)(d->zlib.next_out - out);
    *in = start + used;
    *in_len -= used;
    switch (rc) {
    case Z_OK:
        return CDECODE_OK;
    case Z_BUF_ERROR:   /* no progress possible: needs more input (or output room) */
        return CDECODE_OK;
    case Z_STREAM_END:
        d->ended = 1;
        if (d->coding == CDECODE_GZIP && *in_len >= 2 && (*in)[0] == 0x1f && (*in)[1] == 0x8b) {
            /* Another gzip member follows (RFC 1952 §2.2). */
            if (inflateReset(&d->zlib) != Z_OK) return CDECODE_CORRUPT;
            d->ended = 0;
        } else if (*in_len > 0) {
            d->trailing = 1;
            *in += *in_len;
            *in_len = 0;
        }
        return CDECODE_OK;
    case Z_DATA_ERROR:
        d->message = d->zlib.msg != NULL ? d->zlib.msg : "";
        if (d->coding == CDECODE_DEFLATE && first_call && !d->raw_tried && *produced == 0) {
            /* Not a zlib header: a raw deflate stream, as some servers send for "deflate". */
            /* Start over on the same bytes now: a step that consumed and produced
               nothing would read as a decoder making no progress. */
            d->raw_tried = 1;
            if (inflateReset2(&d->zlib, -15) != Z_OK) return CDECODE_CORRUPT;
            *in = start;
            *in_len += used;
            d->message = "";
            return zlib_step(d, in, in_len, out, cap, produced);
        }
        if (strcmp(d->message, "incorrect data check") == 0) return CDECODE_BAD_CHECK;
        if (strcmp(d->message, "incorrect length check") == 0) return CDECODE_BAD_LENGTH;
        return CDECODE_CORRUPT;
    case Z_MEM_ERROR:
        return CDECODE_NO_MEMORY;
    default:   /* Z_NEED_DICT (no preset dictionary in HTTP), Z_STREAM_ERROR */
        d->message = d->zlib.msg != NULL ? d->zlib.msg : "unexpected zlib state";
        return CDECODE_CORRUPT;
    }
}

static cdecode_status brotli_step(cdecode *d, const uint8_t **in, size_t *in_len, uint8_t *out, size_t cap,
                                  size_t *produced) {
    size_t avail_out = cap;
    uint8_t *next_out = out;
    BrotliDecoderResult rc = BrotliDecoderDecompressStream(d->brotli, in_len, in, &avail_out, &next_out, NULL);
    *produced = cap - avail_out;
    switch (rc) {
    case BROTLI_DECODER_RESULT_SUCCESS:
        d->ended = 1;
        if (*in_len > 0) {
            d->trailing = 1;
            *in += *in_len;
            *in_len = 0;
        }
        return CDECODE_OK;
    case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
    case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
        return CDECODE_OK;
    case BROTLI_DECODER_RESULT_ERROR:
    default: {
        BrotliDecoderErrorCode code = BrotliDecoderGetErrorCode(d->brotli);
        d->message = BrotliDecoderErrorString(code);
        if (code == BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MODES || code == BROTLI_DECODER_ERROR_ALLOC_TREE_GROUPS
            || code == BROTLI_DECODER_ERROR_ALLOC_CONTEXT_MAP || code == BROTLI_DECODER_ERROR_ALLOC_RING_BUFFER_1
            || code == BROTLI_DECODER_ERROR_ALLOC_RING_BUFFER_2 || code == BROTLI_DECODER_ERROR_ALLOC_BLOCK_TYPE_TREES) {
            return CDECODE_NO_MEMORY;
        }
        return CDECODE_CORRUPT;
    }
    }
}

static cdecode_status zstd_step(cdecode *d, const uint8_t **in, size_t *in_len, uint8_t *out, size_t cap,
                                size_t *produced) {
    ZSTD_inBuffer input = { *in, *in_len, 0 };
    ZSTD_outBuffer output = { out, cap, 0 };
    size_t rc = ZSTD_decompressStream(d->zstd, &output, &input);
    *produced = output.pos;
    *in += input.pos;
    *in_len -= input.pos;
    if (ZSTD_isError(rc)) {
        d->message = ZSTD_getErrorName(rc);
        switch (ZSTD_getErrorCode(rc)) {
        case ZSTD_error_checksum_wrong: return CDECODE_BAD_CHECK;
        case ZSTD_error_memory_allocation: return CDECODE_NO_MEMORY;
        default: return CDECODE_CORRUPT;
        }
    }
    /* 0: a frame is complete and flushed; another may follow in the same body.
     * A call that moved nothing (draining an empty input) says nothing new:
     * after a frame it returns the next frame header's size hint instead. */
    if (input.pos > 0 || output.pos > 0) d->ended = rc == 0;
    return CDECODE_OK;
}

cdecode_status cdecode_step(cdecode *d, const uint8_t **in, size_t *in_len, uint8_t *out, size_t cap,
                            size_t *produced) {
    *produced = 0;
    if (*in_len == 0 && cap == 0) return CDECODE_OK;
    if (*in_len > 0) d->started = 1;
    if (d->trailing) {
        *in += *in_len;
        *in_len = 0;
        return CDECODE_OK;
    }
    switch (d->coding) {
    case CDECODE_GZIP:
    case CDECODE_DEFLATE: return zlib_step(d, in, in_len, out, cap, produced);
    case CDECODE_BR: return brotli_step(d, in, in_len, out, cap, produced);
    case CDECODE_ZSTD: return zstd_step(d, in, in_len, out, cap, produced);
    }
    return CDECODE_CORRUPT;
}

int cdecode_finished(const cdecode *d) {
    if (!d->started) return 1;
    if (!d->ended) return 0;
    /* brotli: output still held inside (the caller drains with empty input until nothing comes). */
    if (d->coding == CDECODE_BR && BrotliDecoderHasMoreOutput(d->brotli)) return 0;
    return 1;
}

const char *cdecode_message(const cdecode *d) {
    return d->message;
}
