#include "CXXHash.h"
#include <xxhash.h>
#include <stdlib.h>
#include <string.h>

struct cxxh_state { XXH3_state_t *xxh; };

cxxh_state *cxxh_new(void) {
    XXH3_state_t *xxh = XXH3_createState();
    if (xxh == NULL) return NULL;
    if (XXH3_128bits_reset(xxh) != XXH_OK) { XXH3_freeState(xxh); return NULL; }
    cxxh_state *state = (cxxh_state *)malloc(sizeof *state);
    if (state == NULL) { XXH3_freeState(xxh); return NULL; }
    state->xxh = xxh;
    return state;
}

int cxxh_reset(cxxh_state *state) { return XXH3_128bits_reset(state->xxh) == XXH_OK; }

int cxxh_update(cxxh_state *state, const void *data, size_t len) {
    return XXH3_128bits_update(state->xxh, data, len) == XXH_OK;
}

void cxxh_digest(const cxxh_state *state, unsigned char out[16]) {
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state->xxh));
    memcpy(out, canonical.digest, 16);
}

void cxxh_copy(cxxh_state *dst, const cxxh_state *src) {
    XXH3_copyState(dst->xxh, src->xxh);
}

void cxxh_free(cxxh_state *state) {
    if (state == NULL) return;
    XXH3_freeState(state->xxh);
    free(state);
}
