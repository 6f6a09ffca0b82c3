// The C that the process's start needs and Swift cannot express: code that
// runs before any library initialises. Only Sources/asyncfetch/StandardStreams.swift
// imports it; only the executable links it.
#ifndef ASYNCFETCH_CSTARTUP_H
#define ASYNCFETCH_CSTARTUP_H

/// 0 when descriptors 0, 1 and 2 were open at start or could be reserved;
/// else the `errno` of the step that failed (`cstartup_failed_descriptor`
/// says which descriptor).
int cstartup_reserve_errno(void);
/// The descriptor (0, 1 or 2) whose reservation failed, -1 when none did.
int cstartup_failed_descriptor(void);

#endif
