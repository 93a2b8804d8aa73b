/*
 * test_sha256.c — core/src/gate/sha256.c against the FIPS 180-4 / NIST example
 * vectors, fed in one piece and in every split, and the file digest: each
 * test twice, on the portable compression function (_i 0) and on the
 * fastest this CPU has (_i 1: SHA-NI where it has the SHA extensions); and
 * the two against each other on pseudo-random data of many lengths.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/sha256.h"

#include "check_run.h"

static const struct {
    const char *msg;
    const char *hex;
} vectors[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmn"
     "opqrsmnopqrstnopqrstu",
     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
};

START_TEST(test_sha256_matches_nist_vectors)
{
    tm_sha256_use_portable(_i == 0);
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        char hex[65];
        tm_sha256_hex(vectors[i].msg, strlen(vectors[i].msg), hex);
        ck_assert_str_eq(hex, vectors[i].hex);
    }
}
END_TEST

START_TEST(test_sha256_of_a_million_a)
{
    tm_sha256_use_portable(_i == 0);
    tm_sha256 s;
    uint8_t d[32];
    char hex[65];
    char chunk[1000];
    memset(chunk, 'a', sizeof chunk);
    tm_sha256_init(&s);
    for (int i = 0; i < 1000; i++)
        tm_sha256_update(&s, chunk, sizeof chunk);
    tm_sha256_final(&s, d);
    tm_sha256_to_hex(d, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_sha256_same_digest_for_every_split)
{
    tm_sha256_use_portable(_i == 0);
    /* Lengths around the 55/56/64-byte padding boundaries matter most. */
    char msg[200];
    for (size_t k = 0; k < sizeof msg; k++)
        msg[k] = (char)('A' + k % 23);
    for (size_t len = 0; len <= sizeof msg; len += (len < 130 ? 1 : 7)) {
        char whole[65];
        tm_sha256_hex(msg, len, whole);
        for (size_t cut = 0; cut <= len; cut += 5) {
            tm_sha256 s;
            uint8_t d[32];
            char hex[65];
            tm_sha256_init(&s);
            tm_sha256_update(&s, msg, cut);
            tm_sha256_update(&s, msg + cut, len - cut);
            tm_sha256_final(&s, d);
            tm_sha256_to_hex(d, hex);
            ck_assert_msg(strcmp(hex, whole) == 0, "len %zu cut %zu", len, cut);
        }
    }
}
END_TEST

START_TEST(test_sha256_of_a_file_is_that_of_its_bytes)
{
    tm_sha256_use_portable(_i == 0);
    char path[] = "/tmp/topoml-sha-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "abc", 3), 3);
    close(fd);
    char hex[65];
    ck_assert_int_eq(tm_sha256_file(path, hex), 0);
    ck_assert_str_eq(hex, vectors[1].hex);
    unlink(path);
    ck_assert_int_ne(tm_sha256_file(path, hex), 0);
}
END_TEST

/* Digests of the same bytes, fed in pieces of `piece` bytes (0: whole). */
static void digest_of(const uint8_t *p, size_t len, size_t piece, char hex[65])
{
    tm_sha256 s;
    uint8_t d[32];
    tm_sha256_init(&s);
    if (!piece)
        piece = len ? len : 1;
    for (size_t at = 0; at < len; at += piece)
        tm_sha256_update(&s, p + at, len - at < piece ? len - at : piece);
    tm_sha256_final(&s, d);
    tm_sha256_to_hex(d, hex);
}

START_TEST(test_sha256_portable_and_fastest_agree)
{
    const size_t max = 3 * 65536 + 333;
    uint8_t *buf = malloc(max + 64); /* the lengths start at offsets up to 16 */
    ck_assert_ptr_nonnull(buf);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < max + 64; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[k] = (uint8_t)(x >> 24);
    }
    static const size_t lengths[] = {0,
                                     1,
                                     55,
                                     56,
                                     63,
                                     64,
                                     65,
                                     127,
                                     128,
                                     129,
                                     1000,
                                     4095,
                                     4096,
                                     65535,
                                     65536,
                                     65537,
                                     3 * 65536 + 333};
    static const size_t pieces[] = {0, 1, 63, 64, 65, 4096, 65536};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        for (size_t j = 0; j < sizeof pieces / sizeof pieces[0]; j++) {
            if (pieces[j] == 1 && lengths[i] > 4096)
                continue;
            char portable[65], fastest[65];
            tm_sha256_use_portable(true);
            digest_of(buf + i, lengths[i], pieces[j], portable);
            tm_sha256_use_portable(false);
            digest_of(buf + i, lengths[i], pieces[j], fastest);
            ck_assert_msg(strcmp(portable, fastest) == 0, "length %zu, pieces of %zu: %s vs %s",
                          lengths[i], pieces[j], portable, fastest);
        }
    }
    free(buf);
}
END_TEST

/* RFC 4231, test cases 2 (a short key) and 6 (a key longer than a block,
 * hashed first); and the two-part form is the message joined. */
START_TEST(test_hmac_sha256_matches_rfc4231)
{
    uint8_t mac[32];
    char hex[65];
    tm_hmac_sha256((const uint8_t *)"Jefe", 4, "what do ya want for nothing?", 28, mac);
    tm_sha256_to_hex(mac, hex);
    ck_assert_str_eq(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    tm_hmac_sha256_2((const uint8_t *)"Jefe", 4, "what do ya want ", 16, "for nothing?", 12, mac);
    tm_sha256_to_hex(mac, hex);
    ck_assert_str_eq(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    uint8_t key[131];
    memset(key, 0xaa, sizeof key);
    const char *m = "Test Using Larger Than Block-Size Key - Hash Key First";
    tm_hmac_sha256(key, sizeof key, m, strlen(m), mac);
    tm_sha256_to_hex(mac, hex);
    ck_assert_str_eq(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("sha256");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_sha256_matches_nist_vectors, 0, 2);
    tcase_add_loop_test(tc, test_sha256_of_a_million_a, 0, 2);
    tcase_add_loop_test(tc, test_sha256_same_digest_for_every_split, 0, 2);
    tcase_add_loop_test(tc, test_sha256_of_a_file_is_that_of_its_bytes, 0, 2);
    tcase_add_test(tc, test_sha256_portable_and_fastest_agree);
    tcase_add_test(tc, test_hmac_sha256_matches_rfc4231);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
