/*
 * sha256.h — SHA-256 (FIPS 180-4) for the gate: plugin file hashes, hardware
 * fingerprints and certificate checksums. Not a general crypto library: no
 * HMAC, no other digests; nothing here is secret.
 */
#ifndef TOPOML_SHA256_H
#define TOPOML_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tm_sha256 {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t used; /* bytes waiting in `block` */
} tm_sha256;

void tm_sha256_init(tm_sha256 *s);
void tm_sha256_update(tm_sha256 *s, const void *data, size_t len);
void tm_sha256_final(tm_sha256 *s, uint8_t digest[32]);

/* One-shot digest of a buffer as 64 lowercase hex digits and a NUL. */
void tm_sha256_hex(const void *data, size_t len, char hex[65]);
/* The same for a finished digest. */
void tm_sha256_to_hex(const uint8_t digest[32], char hex[65]);
/* Digest of a file's content; 0 or an errno value. */
int tm_sha256_file(const char *path, char hex[65]);
/* The same for an open file, read from offset 0 with pread (the descriptor's
 * offset is left alone). 0 or an errno value. */
int tm_sha256_fd(int fd, char hex[65]);

/* Which compression function runs: the portable one (`portable` true), or
 * the fastest this CPU has (false, the default: SHA-NI where the CPU has
 * it). Returns whether SHA-NI is in use. For the tests, which compare the
 * two; not to be called while another thread hashes. */
bool tm_sha256_use_portable(bool portable);

/* HMAC-SHA256 (RFC 2104) of `data` under `key`: what authenticates the
 * gate's records (records.c). */
void tm_hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                    uint8_t mac[32]);
/* The same of the message a || b. */
void tm_hmac_sha256_2(const uint8_t *key, size_t key_len, const void *a, size_t a_len,
                      const void *b, size_t b_len, uint8_t mac[32]);

#endif
