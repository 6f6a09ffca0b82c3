/* The offline reference: for each URL on stdin-or-file, the hex MD5 of the
 * URL and one stat() of DIR/<md5>. Prints how many exist. This is the floor
 * `asyncfetch --offline` is compared with.
 *
 * Build: cc -O2 md5stat.c -lcrypto — the MD5 through EVP_Digest(EVP_md5()),
 * the one-shot call OpenSSL 3 documents (the reference of issues 4 and 7).
 * cc -O2 -DLOW_LEVEL_MD5 md5stat.c -lcrypto — through the deprecated MD5(),
 * as asyncfetch hashes URLs: it skips EVP's method lookup and context
 * allocation on every call, a faster floor, reported beside the other. */
#ifdef LOW_LEVEL_MD5
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/md5.h>
#else
#include <openssl/evp.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: md5stat CACHE_DIR URL_FILE\n"); return 2; }
    FILE *in = fopen(argv[2], "r");
    if (!in) { perror(argv[2]); return 2; }
    char line[8192], path[8192 + 64];
    unsigned char digest[16];
#ifndef LOW_LEVEL_MD5
    unsigned int len;
#endif
    static const char hex[] = "0123456789abcdef";
    long found = 0, total = 0;
    size_t dirlen = strlen(argv[1]);
    memcpy(path, argv[1], dirlen);
    path[dirlen] = '/';
    while (fgets(line, sizeof line, in)) {
        size_t n = strcspn(line, "\r\n");
        if (n == 0 || line[0] == '#') continue;
#ifdef LOW_LEVEL_MD5
        if (MD5((const unsigned char *)line, n, digest) == NULL) return 1;
#else
        if (EVP_Digest(line, n, digest, &len, EVP_md5(), NULL) != 1) return 1;
#endif
        for (int i = 0; i < 16; i++) {
            path[dirlen + 1 + 2 * i] = hex[digest[i] >> 4];
            path[dirlen + 2 + 2 * i] = hex[digest[i] & 15];
        }
        path[dirlen + 33] = 0;
        struct stat st;
        total++;
        if (stat(path, &st) == 0) found++;
    }
    printf("%ld of %ld cached\n", found, total);
    return found == total ? 0 : 1;
}
