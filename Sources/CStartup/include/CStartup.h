// The C that the process's start needs and Swift cannot express, code that
// runs before any library initialises: descriptors 0-2 reserved (CStartup.c),
// SIGINT and SIGTERM caught from the start (EarlySignals.c). Only
// Sources/asyncfetch/StandardStreams.swift and EarlySignals.swift import it;
// only the executable links it.
#ifndef ASYNCFETCH_CSTARTUP_H
#define ASYNCFETCH_CSTARTUP_H

#include "EarlySignals.h"

/// 0 when descriptors 0, 1 and 2 were open at start or could be reserved.
/// Never anything else where Swift can ask: a reservation that fails ends
/// the process (status 2) before any library initialises.
int cstartup_reserve_errno(void);

#endif
