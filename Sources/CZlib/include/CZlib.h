// The C that the Loader needs: zlib's CRC-32 (the PNG chunk check), which
// uses the machine's fast paths where zlib has them. Only
// Sources/Loader/ImageStructure+CRC.swift imports it.
#ifndef ASYNCFETCH_CZLIB_H
#define ASYNCFETCH_CZLIB_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32 (ISO 3309, as PNG uses it) of `len` bytes, continuing from `crc` (0 to start).
uint32_t czlib_crc32(uint32_t crc, const void *data, size_t len);

#endif
