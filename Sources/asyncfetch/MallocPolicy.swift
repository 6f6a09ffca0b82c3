import CStartup
#if canImport(Glibc)
import Glibc
#endif
import enum Fetch.Defaults

/// glibc malloc's thresholds for the whole process, fixed at its start
/// (`Sources/CStartup/MallocPolicy.c`). With glibc's defaults a cold batch
/// gave the top of the transfer loop's heap back to the kernel hundreds to
/// thousands of times per 10,000 URLs (libcurl frees each transfer's 64 KiB
/// receive buffer, workers free the bodies the loop held) and faulted the
/// same pages in again at the next transfer: about one `madvise` per ten URLs
/// and one to three page faults per URL (bench/history/cold.md "Session 21: system
/// calls per cold URL"). Blocks below `Defaults.mallocMmapThreshold` come
/// from the heap, and a heap's free top is kept up to
/// `Defaults.mallocTrimThreshold`: the state glibc's own dynamic rule reaches
/// once the process has freed a mapped block of that size.
/// A user who tunes malloc through the environment (`MALLOC_TRIM_THRESHOLD_`,
/// `MALLOC_MMAP_THRESHOLD_`, or a `glibc.malloc.` tunable in `GLIBC_TUNABLES`)
/// keeps those settings: the policy is then not applied.
enum MallocPolicy {
    static func apply() {
        guard !userTunesMalloc() else { return }
        // A refusal leaves glibc's defaults: slower, not wrong. Nothing to report.
        _ = cstartup_malloc_thresholds(Defaults.mallocTrimThreshold, Defaults.mallocMmapThreshold)
    }

    private static func userTunesMalloc() -> Bool {
        if getenv("MALLOC_TRIM_THRESHOLD_") != nil || getenv("MALLOC_MMAP_THRESHOLD_") != nil { return true }
        guard let tunables = getenv("GLIBC_TUNABLES") else { return false }
        return String(cString: tunables).contains("glibc.malloc.")
    }
}
