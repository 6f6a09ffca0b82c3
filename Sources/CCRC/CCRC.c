#include "CCRC.h"
#include <isa-l/crc.h>

uint32_t ccrc_crc32(uint32_t crc, const void *data, size_t len) {
    // crc32_gzip_refl is the reflected CRC-32 of gzip, zlib and PNG, with the same pre/post inversion as zlib's crc32.
    return crc32_gzip_refl(crc, (const unsigned char *)data, (uint64_t)len);
}
