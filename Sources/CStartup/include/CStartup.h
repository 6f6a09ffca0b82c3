// The C that the process's start needs and Swift cannot express, code that
// runs before any library initialises: descriptors 0-2 reserved (CStartup.c),
// SIGINT and SIGTERM caught from the start (EarlySignals.c); and malloc's
// thresholds (MallocPolicy.c). Only Sources/asyncfetch/StandardStreams.swift,
// EarlySignals.swift and MallocPolicy.swift import it; only the executable
// links it.
#ifndef ASYNCFETCH_CSTARTUP_H
#define ASYNCFETCH_CSTARTUP_H

#include "EarlySignals.h"

/// 0 when descriptors 0, 1 and 2 were open at start or could be reserved.
/// Never anything else where Swift can ask: a reservation that fails ends
/// the process (status 2) before any library initialises.
int cstartup_reserve_errno(void);

/// Fixes glibc malloc's trim and mmap thresholds (`mallopt`), in bytes
/// (MallocPolicy.c says why). 1 when both were set, 0 when glibc refused.
int cstartup_malloc_thresholds(long trim_threshold, long mmap_threshold);

#endif
