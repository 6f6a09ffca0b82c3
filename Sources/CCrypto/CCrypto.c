#include "CCrypto.h"
#include <openssl/evp.h>

struct ccrypto_md5_ctx { EVP_MD_CTX *evp; };

int ccrypto_md5(const void *data, size_t len, unsigned char out[16]) {
    unsigned int outlen = 0;
    if (EVP_Digest(data, len, out, &outlen, EVP_md5(), NULL) != 1) return 0;
    return outlen == 16;
}

ccrypto_md5_ctx *ccrypto_md5_new(void) {
    EVP_MD_CTX *evp = EVP_MD_CTX_new();
    if (evp == NULL) return NULL;
    if (EVP_DigestInit_ex(evp, EVP_md5(), NULL) != 1) { EVP_MD_CTX_free(evp); return NULL; }
    ccrypto_md5_ctx *ctx = (ccrypto_md5_ctx *)OPENSSL_malloc(sizeof *ctx);
    if (ctx == NULL) { EVP_MD_CTX_free(evp); return NULL; }
    ctx->evp = evp;
    return ctx;
}

int ccrypto_md5_update(ccrypto_md5_ctx *ctx, const void *data, size_t len) {
    return EVP_DigestUpdate(ctx->evp, data, len) == 1;
}

int ccrypto_md5_final(ccrypto_md5_ctx *ctx, unsigned char out[16]) {
    unsigned int outlen = 0;
    if (EVP_DigestFinal_ex(ctx->evp, out, &outlen) != 1 || outlen != 16) return 0;
    return EVP_DigestInit_ex(ctx->evp, EVP_md5(), NULL) == 1;
}

void ccrypto_md5_free(ccrypto_md5_ctx *ctx) {
    if (ctx == NULL) return;
    EVP_MD_CTX_free(ctx->evp);
    OPENSSL_free(ctx);
}
