// The C that ImageFormats needs: CRC-32 (the PNG chunk check) from Intel's
// ISA-L, which folds with PCLMULQDQ where the CPU has it (about 25 GB/s
// here, against zlib's 4 GB/s), then clears the vector state it leaves (see
// CCRC.c). Only Sources/ImageFormats/Common/CRC32.swift imports it.
#ifndef ASYNCFETCH_CCRC_H
#define ASYNCFETCH_CCRC_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32 (ISO 3309, as PNG and zlib compute it) of `len` bytes, continuing from `crc` (0 to start).
uint32_t ccrc_crc32(uint32_t crc, const void *data, size_t len);

#endif
