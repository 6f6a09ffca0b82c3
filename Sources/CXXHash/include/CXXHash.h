// The C that body digests need: XXH3-128 from libxxhash (Debian's
// libxxhash-dev), streaming. Only Sources/DiskCache/Record/BodyHash.swift imports it.
#ifndef ASYNCFETCH_CXXHASH_H
#define ASYNCFETCH_CXXHASH_H

#include <stddef.h>

typedef struct cxxh_state cxxh_state;

/// A new streaming XXH3-128 state, reset; NULL when memory is short.
cxxh_state *cxxh_new(void);
/// Starts over. Returns 1 on success, 0 on failure.
int cxxh_reset(cxxh_state *state);
/// Adds `len` bytes. Returns 1 on success, 0 on failure.
int cxxh_update(cxxh_state *state, const void *data, size_t len);
/// The digest so far in canonical (big-endian) byte order, as `xxhsum -H2`
/// prints it: 16 bytes into `out`. The state is unchanged.
void cxxh_digest(const cxxh_state *state, unsigned char out[16]);
/// The digest of `len` bytes at `data` in one call, as `cxxh_digest` gives
/// it for a state fed exactly those bytes (no state made): 16 bytes into `out`.
void cxxh_whole(const void *data, size_t len, unsigned char out[16]);
/// Copies `src`'s progress into `dst` (both from cxxh_new).
void cxxh_copy(cxxh_state *dst, const cxxh_state *src);
void cxxh_free(cxxh_state *state);

#endif
