/* The offline reference: for each URL on stdin-or-file, the hex MD5 of the
 * URL (OpenSSL EVP, as asyncfetch computes it) and one stat() of
 * DIR/<md5>. Prints how many exist. This is the floor `asyncfetch --offline`
 * is compared with. Build: cc -O2 md5stat.c -lcrypto */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: md5stat CACHE_DIR URL_FILE\n"); return 2; }
    FILE *in = fopen(argv[2], "r");
    if (!in) { perror(argv[2]); return 2; }
    char line[8192], path[8192 + 64];
    unsigned char digest[16];
    unsigned int len;
    static const char hex[] = "0123456789abcdef";
    long found = 0, total = 0;
    size_t dirlen = strlen(argv[1]);
    memcpy(path, argv[1], dirlen);
    path[dirlen] = '/';
    while (fgets(line, sizeof line, in)) {
        size_t n = strcspn(line, "\r\n");
        if (n == 0 || line[0] == '#') continue;
        if (EVP_Digest(line, n, digest, &len, EVP_md5(), NULL) != 1) return 1;
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
