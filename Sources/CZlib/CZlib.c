#include "CZlib.h"
#include <zlib.h>

uint32_t czlib_crc32(uint32_t crc, const void *data, size_t len) {
    return (uint32_t)crc32_z((uLong)crc, (const Bytef *)data, (z_size_t)len);
}
