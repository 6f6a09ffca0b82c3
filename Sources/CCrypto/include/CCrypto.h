// MD5 through OpenSSL 3's EVP interface (MD5() itself is deprecated).
// Only Sources/DiskCache/MD5.swift imports this module.
#ifndef ASYNCFETCH_CCRYPTO_H
#define ASYNCFETCH_CCRYPTO_H

#include <stddef.h>

/// One-shot MD5 of `len` bytes into `out` (16 bytes). Returns 1 on success, 0 on failure.
int ccrypto_md5(const void *data, size_t len, unsigned char out[16]);

/// Streaming MD5. `ccrypto_md5_new` returns NULL on failure.
typedef struct ccrypto_md5_ctx ccrypto_md5_ctx;
ccrypto_md5_ctx *ccrypto_md5_new(void);
int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len);
/// Writes 16 bytes and resets the context for reuse. Returns 1 on success.
int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]);
void ccrypto_md5_free(ccrypto_md5_ctx *ctx);

#endif
