// Streaming decoders for HTTP content codings (gzip, deflate, br, zstd) that
// say whether the stream really ended and whether its check value matched.
// libcurl 7.88's own decoders hand over a stream cut before its end (a gzip
// member without its trailer, a zstd frame or brotli stream without its last
// block) as if it were whole; these do not. Only Sources/Fetch/ContentDecoder.swift imports this module.
#ifndef ASYNCFETCH_CDECODE_H
#define ASYNCFETCH_CDECODE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CDECODE_GZIP = 1,     // RFC 1952 (also x-gzip); members one after another
    CDECODE_DEFLATE = 2,  // RFC 1950 zlib stream; a raw RFC 1951 stream is accepted too, as browsers do
    CDECODE_BR = 3,       // RFC 7932
    CDECODE_ZSTD = 4,     // RFC 8878; frames one after another
} cdecode_coding;

typedef enum {
    CDECODE_OK = 0,
    CDECODE_CORRUPT = -1,        // not a valid stream of this coding
    CDECODE_BAD_CHECK = -2,      // the trailer's check value does not match (CRC-32, Adler-32, zstd checksum)
    CDECODE_BAD_LENGTH = -3,     // the gzip trailer's ISIZE does not match
    CDECODE_NO_MEMORY = -4,
} cdecode_status;

typedef struct cdecode cdecode;

/// A decoder for `coding`, or NULL when out of memory.
cdecode *cdecode_new(cdecode_coding coding);
void cdecode_free(cdecode *decoder);

/// Decodes from `*input` (`*input_length` bytes, both advanced past what was
/// consumed) into `output` (`capacity` bytes; `*produced` set). Call again
/// while input remains or the output was filled. Bytes after the end of the
/// last member or frame that do not start another one are consumed and ignored.
cdecode_status cdecode_step(cdecode *decoder, const uint8_t **input, size_t *input_length,
                            uint8_t *output, size_t capacity, size_t *produced);

/// 1 when the stream ended where its coding says it ends (with its check value
/// verified) and nothing decoded is still held inside; 0 when it was cut short.
/// A decoder that was never given a byte counts as ended (an empty body).
int cdecode_finished(const cdecode *decoder);

/// The library's own words for the last failure (may be empty).
const char *cdecode_message(const cdecode *decoder);

#endif
