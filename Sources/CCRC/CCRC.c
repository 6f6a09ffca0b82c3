#include "CCRC.h"
#include <isa-l/crc.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

// ISA-L's AVX-512 CRC leaves the upper halves of the vector registers dirty.
// SSE code that runs next on the same thread (the XXH3 body digest, built
// for SSE2) then pays a state-transition penalty on every instruction: it ran
// four times slower in a measurement here. VZEROUPPER clears that state; it
// exists only where the CPU (and the OS, via OSXSAVE) support AVX.
// The answer is kept in a relaxed atomic: threads that check at once compute
// the same value, and a plain int read beside another thread's write is a
// data race (Thread Sanitizer reports it when two bodies are checked at once).
static int ccrc_has_avx(void) {
    static int known = -1;
    int answer = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (answer < 0) {
        unsigned a, b, c, d;
        answer = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) && (c & (1u << 28));
        __atomic_store_n(&known, answer, __ATOMIC_RELAXED);
    }
    return answer;
}

__attribute__((target("avx"))) static void ccrc_clear_upper(void) { _mm256_zeroupper(); }
#endif

uint32_t ccrc_crc32(uint32_t crc, const void *data, size_t len) {
    // crc32_gzip_refl is the reflected CRC-32 of gzip, zlib and PNG, with the same pre/post inversion as zlib's crc32.
    uint32_t result = crc32_gzip_refl(crc, (const unsigned char *)data, (uint64_t)len);
#if defined(__x86_64__)
    if (ccrc_has_avx()) ccrc_clear_upper();
#endif
    return result;
}
