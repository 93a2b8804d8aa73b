/*
 * test_sha256.c — core/src/sha256.c against the FIPS 180-4 / NIST example
 * vectors, fed in one piece and in every split, and the file digest.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

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
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        char hex[65];
        tm_sha256_hex(vectors[i].msg, strlen(vectors[i].msg), hex);
        ck_assert_str_eq(hex, vectors[i].hex);
    }
}
END_TEST

START_TEST(test_sha256_of_a_million_a)
{
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

int main(void)
{
    Suite *s = suite_create("sha256");
    TCase *tc = tcase_create("sha256");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sha256_matches_nist_vectors);
    tcase_add_test(tc, test_sha256_of_a_million_a);
    tcase_add_test(tc, test_sha256_same_digest_for_every_split);
    tcase_add_test(tc, test_sha256_of_a_file_is_that_of_its_bytes);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
