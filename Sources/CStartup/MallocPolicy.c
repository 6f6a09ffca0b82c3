#include "CStartup.h"
#include <malloc.h>

// glibc gives the free memory at the top of a thread's heap back to the
// kernel (`madvise(MADV_DONTNEED)`) once it exceeds the trim threshold,
// 128 KiB until the process frees a block it had mapped on its own (the
// dynamic threshold). A cold batch crossed it hundreds to thousands of times
// per 10,000 URLs: libcurl 7.88 allocates a transfer's receive buffer
// (CURLOPT_BUFFERSIZE, 64 KiB) when the transfer starts and frees it when it
// ends, and held bodies made on the transfer loop are freed on a completion
// worker. Every page given back was faulted in again by the next transfer's
// `recv` or copy. Both thresholds are fixed here (mallopt turns the dynamic
// rule off for both, so both are set): blocks below `mmap_threshold` come
// from the heap, and the top is trimmed past `trim_threshold`.
int cstartup_malloc_thresholds(long trim_threshold, long mmap_threshold) {
    if (trim_threshold <= 0 || mmap_threshold <= 0 || trim_threshold > 0x7fffffffL || mmap_threshold > 0x7fffffffL) return 0;
    // mallopt answers 1 on success, 0 on failure.
    if (mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) != 1) return 0;
    return mallopt(M_TRIM_THRESHOLD, (int)trim_threshold) == 1;
}
