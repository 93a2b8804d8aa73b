/*
 * test_certificate.c — conformance certificates and the gate that reads
 * them: the text form survives a round trip and every truncation or edit
 * is detected; a certificate counts only for the same file, core, ABI,
 * suite and machine; strict, auto and off policies and the `enable`
 * override decide as docs/conformance.md says. Certificates here are made
 * by hand; tests/cli/test_conformance.py makes them with the real tool.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gate/certificate.h"
#include "gate/gate_internal.h" /* tm_gate_revoke, tm_revoked_add: what run-time verification does */
#include "gate/sha256.h"
#include "topoml/topoml.h"

#include "check_context.h"
#include "check_run.h"

#define COPY_DIR TOPOML_TEST_BUILD_DIR "/conformance-plugins/scalar-copy"
#define COPY_SO COPY_DIR "/topoml-backend-scalar-copy.so"

static tm_cert sample(void)
{
    tm_cert c;
    memset(&c, 0, sizeof c);
    snprintf(c.plugin, sizeof c.plugin, "example");
    snprintf(c.path, sizeof c.path, "/opt/topoml/plugins/topoml-backend-example.so");
    memset(c.file_sha256, 'a', 64);
    snprintf(c.core_version, sizeof c.core_version, "0.1.0");
    c.abi_version = 1;
    snprintf(c.suite_version, sizeof c.suite_version, "1");
    snprintf(c.tier, sizeof c.tier, "quick");
    snprintf(c.cpu_model, sizeof c.cpu_model, "Example CPU @ 3GHz");
    memset(c.cpu_sha256, 'b', 64);
    snprintf(c.devices, sizeof c.devices, "cpu; GPU 0 (driver 1.2)");
    memset(c.devices_sha256, 'c', 64);
    snprintf(c.verdict, sizeof c.verdict, "pass");
    snprintf(c.summary, sizeof c.summary, "80 PASS");
    snprintf(c.date, sizeof c.date, "2026-12-02T10:00:00Z");
    return c;
}

START_TEST(test_certificate_round_trips)
{
    tm_cert c = sample(), back;
    char text[8192], why[256];
    int len = tm_cert_format(&c, text, sizeof text);
    ck_assert_int_gt(len, 0);
    ck_assert_int_eq(tm_cert_parse(text, (size_t)len, &back, why, sizeof why), TOPOML_OK);
    ck_assert_int_eq(memcmp(&c, &back, sizeof c), 0);
    ck_assert_ptr_nonnull(strstr(text, "format=" TM_CERT_FORMAT "\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nchecksum="));
}
END_TEST

START_TEST(test_certificate_truncated_anywhere_is_rejected)
{
    tm_cert c = sample(), back;
    char text[8192], why[256];
    int len = tm_cert_format(&c, text, sizeof text);
    for (int cut = 0; cut < len; cut++)
        ck_assert_msg(tm_cert_parse(text, (size_t)cut, &back, why, sizeof why) == TOPOML_E_PARSE,
                      "a certificate cut at %d of %d bytes was accepted", cut, len);
}
END_TEST

START_TEST(test_certificate_with_any_byte_changed_is_rejected)
{
    tm_cert c = sample(), back;
    char text[8192], why[256];
    int len = tm_cert_format(&c, text, sizeof text);
    for (int k = 0; k < len; k++) {
        char saved = text[k];
        text[k] = saved == 'x' ? 'y' : 'x';
        ck_assert_msg(tm_cert_parse(text, (size_t)len, &back, why, sizeof why) == TOPOML_E_PARSE,
                      "byte %d changed and still accepted", k);
        text[k] = saved;
    }
    /* The typical forgery: a verdict edited by hand. */
    char *v = strstr(text, "verdict=pass");
    memcpy(v, "verdict=fail", 12);
    ck_assert_int_eq(tm_cert_parse(text, (size_t)len, &back, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(why, "checksum does not match"));
}
END_TEST

START_TEST(test_certificate_parser_names_what_is_wrong)
{
    tm_cert back;
    char why[256];
    const char *unknown = "format=" TM_CERT_FORMAT "\nflavour=vanilla\n";
    ck_assert_int_eq(tm_cert_parse(unknown, strlen(unknown), &back, why, sizeof why),
                     TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(why, "line 2: unknown key 'flavour'"));
    const char *twice = "format=" TM_CERT_FORMAT "\nformat=" TM_CERT_FORMAT "\n";
    ck_assert_int_eq(tm_cert_parse(twice, strlen(twice), &back, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(why, "given twice"));
    const char *other = "format=something-else\n";
    ck_assert_int_eq(tm_cert_parse(other, strlen(other), &back, why, sizeof why), TOPOML_E_PARSE);
    /* A correct checksum over an incomplete set of keys. */
    char text[512], hex[65];
    int n = snprintf(text, sizeof text, "format=" TM_CERT_FORMAT "\nplugin=x\n");
    tm_sha256_hex(text, (size_t)n, hex);
    n += snprintf(text + n, sizeof text - (size_t)n, "checksum=%s\n", hex);
    ck_assert_int_eq(tm_cert_parse(text, (size_t)n, &back, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(why, "missing key 'path'"));
}
END_TEST

START_TEST(test_certificate_with_a_carriage_return_is_rejected)
{
    /* A complete certificate with a correct checksum, but written with a
     * CRLF on one line: tm_cert_format could not write that value back, so
     * it is refused, naming the line. Found by fuzz_certificates. */
    tm_cert c = sample(), back;
    char text[8192], crlf[8300], why[256], hex[65];
    tm_cert_format(&c, text, sizeof text);
    const char *sum = strstr(text, "summary=80 PASS\n");
    const char *check = strstr(text, "checksum=");
    ck_assert(sum != NULL && check != NULL);
    size_t cr = (size_t)(sum - text) + strlen("summary=80 PASS"), body = (size_t)(check - text);
    memcpy(crlf, text, cr);
    crlf[cr] = '\r';
    memcpy(crlf + cr + 1, text + cr, body - cr);
    tm_sha256_hex(crlf, body + 1, hex);
    int len = (int)(body + 1) + snprintf(crlf + body + 1, sizeof crlf - body - 1,
                                         "checksum=%s\n", hex);
    ck_assert_int_eq(tm_cert_parse(crlf, (size_t)len, &back, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_msg(strstr(why, "line 14: contains a carriage return") != NULL, "why: %s", why);
}
END_TEST

START_TEST(test_certificate_binds_file_core_abi_suite_and_machine)
{
    tm_cert c = sample(), now = sample();
    char why[256];
    ck_assert(tm_cert_matches(&c, &now, why, sizeof why));
    now.file_sha256[0] = 'f';
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_str_eq(why, "plugin file changed");
    now = sample();
    snprintf(now.core_version, sizeof now.core_version, "0.2.0");
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "core 0.1.0, this is core 0.2.0"));
    now = sample();
    now.abi_version = 2;
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "ABI"));
    now = sample();
    snprintf(now.suite_version, sizeof now.suite_version, "2");
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "suite"));
    now = sample();
    now.cpu_sha256[3] = 'e';
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "another machine"));
    now = sample();
    now.devices_sha256[3] = 'e';
    ck_assert(!tm_cert_matches(&c, &now, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "other devices"));
    /* The tier and the verdict are the gate's business, not a binding. */
    now = sample();
    snprintf(now.tier, sizeof now.tier, "full");
    ck_assert(tm_cert_matches(&c, &now, why, sizeof why));
}
END_TEST

START_TEST(test_fingerprint_is_stable_and_device_order_free)
{
    char m1[160], h1[65], m2[160], h2[65];
    tm_cert_cpu(m1, h1);
    tm_cert_cpu(m2, h2);
    ck_assert_str_eq(h1, h2);
    ck_assert_str_eq(m1, m2);
    topoml_capability_v1 a[3] = {{.device = "gpu1"}, {.device = "cpu"}, {.device = "gpu1"}};
    topoml_capability_v1 b[2] = {{.device = "cpu"}, {.device = "gpu1"}};
    topoml_capability_v1 c[2] = {{.device = "cpu"}, {.device = "gpu1 (driver 2)"}};
    char ta[512], tb[512], tc[512], ha[65], hb[65], hc[65];
    tm_cert_devices(a, 3, ta, ha);
    tm_cert_devices(b, 2, tb, hb);
    tm_cert_devices(c, 2, tc, hc);
    ck_assert_str_eq(ha, hb);
    ck_assert_str_eq(ta, "cpu; gpu1");
    ck_assert_str_ne(ha, hc);
}
END_TEST

/* ---- the gate with certificates ---- */

static char cache[64];

static void setup(void)
{
    snprintf(cache, sizeof cache, "/tmp/topoml-cache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cache));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    ck_assert_int_eq(system(cmd), 0);
}

/* A context over the scalar-copy folder with this gate policy. */
static topoml_context *open_gate(const char *policy, const char *extra)
{
    char text[512];
    snprintf(text, sizeof text, "gate: %s\ncache_dir: %s\n%s", policy, cache, extra);
    return check_context_from_config(text, COPY_DIR);
}

static topoml_backend_info copy_info(topoml_context *ctx)
{
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (!strcmp(b.name, "scalar-copy"))
            return b;
    }
    ck_abort_msg("scalar-copy not found in %s", COPY_DIR);
    return (topoml_backend_info){0};
}

/* The certificate the suite would write for scalar-copy on this machine. */
static tm_cert true_certificate(const char *verdict)
{
    topoml_context *ctx = open_gate("off", "");
    topoml_backend_info b = copy_info(ctx);
    char real[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(COPY_SO, real));
    tm_cert c;
    ck_assert_int_eq(tm_cert_describe(&c, real, b.name, b.abi_version, b.caps, b.n_caps), 0);
    topoml_context_free(ctx);
    snprintf(c.tier, sizeof c.tier, "quick");
    snprintf(c.verdict, sizeof c.verdict, "%s", verdict);
    snprintf(c.summary, sizeof c.summary, "%s", strcmp(verdict, "pass") ? "1 FAIL" : "80 PASS");
    tm_cert_stamp(&c);
    return c;
}

/* Store `c` where the gate looks for the certificate of the plugin file
 * whose content has SHA-256 `sha` (c's own file hash when NULL). */
static void store_as(const tm_cert *c, const char *sha)
{
    char file[4400], why[256], real[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(COPY_SO, real));
    ck_assert(tm_cert_file_for(cache, real, sha ? sha : c->file_sha256, ".cert", file,
                               sizeof file));
    ck_assert_msg(tm_cert_store(file, c, why, sizeof why) == TOPOML_OK, "%s", why);
    struct stat st;
    ck_assert_int_eq(stat(file, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
}

static void store(const tm_cert *c)
{
    store_as(c, NULL);
}

/* State and reason of scalar-copy under a policy, copied out. */
static uint32_t gate_of(const char *policy, const char *extra, char *reason, size_t size)
{
    topoml_context *ctx = open_gate(policy, extra);
    topoml_backend_info b = copy_info(ctx);
    snprintf(reason, size, "%s", b.gate_reason);
    uint32_t state = b.gate_state;
    topoml_context_free(ctx);
    return state;
}

START_TEST(test_gate_strict_enables_only_a_valid_certificate)
{
    char reason[640];
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "not certified"));
    tm_cert c = true_certificate("pass");
    store(&c);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_ENABLED);
    ck_assert_ptr_nonnull(strstr(reason, "certified on "));
    ck_assert_ptr_nonnull(strstr(reason, "for tier quick"));
    ck_assert_uint_eq(gate_of("auto", "", reason, sizeof reason), TOPOML_GATE_ENABLED);
}
END_TEST

START_TEST(test_gate_rejects_a_failed_verdict)
{
    tm_cert c = true_certificate("fail");
    store(&c);
    char reason[640];
    ck_assert_uint_eq(gate_of("auto", "", reason, sizeof reason), TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(reason, "failed conformance (tier quick)"));
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_REJECTED);
}
END_TEST

START_TEST(test_gate_refuses_tampered_and_truncated_certificates)
{
    tm_cert c = true_certificate("fail");
    store(&c);
    char file[4400], real[PATH_MAX], reason[640];
    ck_assert_ptr_nonnull(realpath(COPY_SO, real));
    tm_cert_file_for(cache, real, c.file_sha256, ".cert", file, sizeof file);
    /* fail -> pass by hand: the authentication code no longer matches. */
    FILE *f = fopen(file, "r+");
    char text[8192];
    size_t len = fread(text, 1, sizeof text, f);
    char *v = strstr(text, "verdict=fail");
    ck_assert_ptr_nonnull(v);
    memcpy(v, "verdict=pass", 12);
    rewind(f);
    fwrite(text, 1, len, f);
    fclose(f);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "certificate invalid"));
    ck_assert_msg(strstr(reason, "authentication code does not match"), "%s", reason);
    /* Cut in half. */
    ck_assert_int_eq(truncate(file, (off_t)(len / 2)), 0);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "certificate invalid"));
    ck_assert_msg(strstr(reason, "no authentication code"), "%s", reason);
}
END_TEST

START_TEST(test_gate_refuses_a_certificate_from_another_machine)
{
    tm_cert c = true_certificate("pass");
    memset(c.cpu_sha256, '0', 64);
    snprintf(c.cpu_model, sizeof c.cpu_model, "Some Other CPU");
    store(&c);
    char reason[640];
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "another machine"));
    ck_assert_ptr_nonnull(strstr(reason, "Some Other CPU"));
}
END_TEST

START_TEST(test_gate_refuses_a_certificate_for_another_file)
{
    tm_cert c = true_certificate("pass");
    char sha[65];
    memcpy(sha, c.file_sha256, sizeof sha);
    c.file_sha256[0] = c.file_sha256[0] == '0' ? '1' : '0';
    store_as(&c, sha); /* copied into the place of this file's certificate */
    char reason[640];
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "certificate invalid: plugin file changed"));
    /* Under auto the stale certificate means: certify again on first use. */
    ck_assert_uint_eq(gate_of("auto", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "plugin file changed"));
    ck_assert_ptr_nonnull(strstr(reason, "on first use"));
    /* A valid certificate copied to another plugin's name counts for nothing. */
    c = true_certificate("pass");
    snprintf(c.path, sizeof c.path, "/somewhere/else/topoml-backend-scalar-copy.so");
    store(&c);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "made for /somewhere/else"));
}
END_TEST

START_TEST(test_gate_enable_list_is_an_explicit_override)
{
    char reason[640];
    ck_assert_uint_eq(gate_of("strict", "enable: [scalar-copy]\n", reason, sizeof reason),
                      TOPOML_GATE_ENABLED);
    ck_assert_str_eq(reason, "enabled by configuration, not certified");
    tm_cert c = true_certificate("fail");
    store(&c);
    ck_assert_uint_eq(gate_of("strict", "enable: [scalar-copy]\n", reason, sizeof reason),
                      TOPOML_GATE_ENABLED);
    ck_assert_ptr_nonnull(strstr(reason, "enabled by configuration, not certified"));
    ck_assert_ptr_nonnull(strstr(reason, "failed conformance"));
    ck_assert_uint_eq(
        gate_of("strict", "enable: [scalar-copy]\ndisable: [scalar-copy]\n", reason, sizeof reason),
        TOPOML_GATE_DISABLED);
}
END_TEST

START_TEST(test_gate_auto_leaves_certification_to_first_use)
{
    char reason[640];
    ck_assert_uint_eq(gate_of("auto", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "not certified"));
    ck_assert_ptr_nonnull(strstr(reason, "on first use"));
    ck_assert_uint_eq(gate_of("off", "", reason, sizeof reason), TOPOML_GATE_ENABLED);
    ck_assert_ptr_nonnull(strstr(reason, "GATE OFF"));
}
END_TEST

START_TEST(test_gate_refuses_a_cache_writable_by_others)
{
    tm_cert c = true_certificate("pass");
    store(&c);
    ck_assert_int_eq(chmod(cache, 0777), 0);
    char reason[640];
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(reason, "refusing certificate cache"));
    ck_assert_ptr_nonnull(strstr(reason, "writable by group or others"));
    ck_assert_int_eq(chmod(cache, 0700), 0);
}
END_TEST

START_TEST(test_cache_folder_is_made_private)
{
    char sub[128], out[4096];
    snprintf(sub, sizeof sub, "%s/a/b", cache);
    char text[256];
    snprintf(text, sizeof text, "cache_dir: %s\n", sub);
    char cfg_path[96];
    snprintf(cfg_path, sizeof cfg_path, "%s/c.yaml", cache);
    FILE *f = fopen(cfg_path, "w");
    fputs(text, f);
    fclose(f);
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                .config_path = cfg_path};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    ck_assert_int_eq(tm_cache_dir(ctx, false, out, sizeof out), TOPOML_E_NOT_FOUND);
    ck_assert_int_eq(tm_cache_dir(ctx, true, out, sizeof out), TOPOML_OK);
    ck_assert_str_eq(out, sub);
    struct stat st;
    ck_assert_int_eq(stat(sub, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    topoml_context_free(ctx);
}
END_TEST

/* Warnings the gate logs, joined. */
static char logged[8192];
static void keep_log(void *user, int level, const char *message)
{
    (void)user;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%d:%s\n", level, message);
}

/* A certificate written without the key (its checksum right, its
 * authentication code from another key, or none) is ignored, and said. */
START_TEST(test_gate_ignores_and_logs_a_certificate_forged_without_the_key)
{
    tm_cert c = true_certificate("pass");
    store(&c); /* makes the cache's key */
    char file[4400], real[PATH_MAX], text[8192];
    ck_assert_ptr_nonnull(realpath(COPY_SO, real));
    ck_assert(tm_cert_file_for(cache, real, c.file_sha256, ".cert", file, sizeof file));
    for (int variant = 0; variant < 2; variant++) {
        /* What a plugin's process could write: the text form, checksum and
         * all, and a code made with a key of its own (or none). */
        int len = tm_cert_format(&c, text, sizeof text);
        ck_assert_int_gt(len, 0);
        if (variant == 1) {
            uint8_t other[32], mac[32];
            memset(other, 7, sizeof other);
            tm_hmac_sha256_2(other, sizeof other, "certificate", 12, text, (size_t)len, mac);
            char hex[65];
            tm_sha256_to_hex(mac, hex);
            len += snprintf(text + len, sizeof text - (size_t)len, "mac=%s\n", hex);
        }
        FILE *f = fopen(file, "w");
        ck_assert_ptr_nonnull(f);
        fwrite(text, 1, (size_t)len, f);
        fclose(f);
        logged[0] = '\0';
        topoml_context *ctx = open_gate("strict", "");
        topoml_set_log(ctx, keep_log, NULL, TOPOML_LOG_WARN);
        topoml_backend_info b = copy_info(ctx);
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
        ck_assert_msg(strstr(b.gate_reason, variant ? "authentication code does not match"
                                                    : "no authentication code"),
                      "%s", b.gate_reason);
        ck_assert_msg(strstr(logged, "certificate of backend 'scalar-copy' ignored"), "%s",
                      logged);
        topoml_context_free(ctx);
    }
}
END_TEST

/* Revoked at run time, then the pass certificate put back as it was (a
 * backup, a daemon): still revoked, by the store read before any
 * certificate; a line added to that store without the key revokes nothing. */
START_TEST(test_gate_keeps_a_revocation_when_the_old_certificate_is_restored)
{
    tm_cert c = true_certificate("pass");
    store(&c);
    char file[4400], real[PATH_MAX], reason[640];
    ck_assert_ptr_nonnull(realpath(COPY_SO, real));
    ck_assert(tm_cert_file_for(cache, real, c.file_sha256, ".cert", file, sizeof file));
    size_t len;
    char saved[8192];
    FILE *f = fopen(file, "rb");
    len = fread(saved, 1, sizeof saved, f);
    fclose(f);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_ENABLED);

    /* A forged revocation line first: ignored (and said). */
    char revoked[4200];
    snprintf(revoked, sizeof revoked, "%s/revoked", cache);
    f = fopen(revoked, "w");
    fprintf(f, "%s 2026-01-01T00:00:00Z forged mac=%064d\n", c.file_sha256, 0);
    fclose(f);
    chmod(revoked, 0600);
    logged[0] = '\0';
    topoml_context *ctx = open_gate("strict", "");
    topoml_set_log(ctx, keep_log, NULL, TOPOML_LOG_WARN);
    topoml_backend_info b = copy_info(ctx);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    ck_assert_msg(strstr(logged, "authentication code does not match were ignored"), "%s", logged);

    /* Revoked as run-time verification does it. */
    tm_backend *be = NULL;
    for (uint32_t i = 0; i < ctx->n_backends; i++)
        if (ctx->backends[i].name && !strcmp(ctx->backends[i].name, "scalar-copy"))
            be = &ctx->backends[i];
    ck_assert_ptr_nonnull(be);
    tm_gate_revoke(ctx, be, "a wrong barcode");
    topoml_context_free(ctx);
    ck_assert_uint_eq(gate_of("strict", "", reason, sizeof reason), TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(reason, "revoked at run time"), "%s", reason);

    /* The pass certificate put back byte for byte. */
    f = fopen(file, "wb");
    fwrite(saved, 1, len, f);
    fclose(f);
    chmod(file, 0600);
    for (int k = 0; k < 3; k++) {
        const char *policy = k == 0 ? "strict" : k == 1 ? "auto" : "strict";
        const char *extra = k == 2 ? "enable: [scalar-copy]\n" : "";
        ck_assert_uint_eq(gate_of(policy, extra, reason, sizeof reason), TOPOML_GATE_REJECTED);
        ck_assert_msg(strstr(reason, "revoked at run time") && strstr(reason, "a wrong barcode"),
                      "%s", reason);
    }
}
END_TEST

/* Certificates are kept per content of a file: certifying a broken build
 * of a plugin leaves the certificate of the good one alone, and putting
 * the good file back finds its full-tier certificate again. */
START_TEST(test_gate_keeps_certificates_per_file_content)
{
    char dir[128], so[256], real[PATH_MAX], text[512], cmd[1200];
    snprintf(dir, sizeof dir, "%s/plugins", cache);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(so, sizeof so, "%s/topoml-backend-scalar-copy.so", dir);

    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0700 '%s'", COPY_SO, so, so);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_ptr_nonnull(realpath(so, real));
    snprintf(text, sizeof text, "gate: strict\ncache_dir: %s\n", cache);

    /* The good build, certified at the full tier. */
    topoml_context *ctx = check_context_from_config(text, dir);
    topoml_backend_info b = copy_info(ctx);
    tm_cert good;
    ck_assert_int_eq(tm_cert_describe(&good, real, b.name, b.abi_version, b.caps, b.n_caps), 0);
    topoml_context_free(ctx);
    snprintf(good.tier, sizeof good.tier, "full");
    snprintf(good.verdict, sizeof good.verdict, "pass");
    snprintf(good.summary, sizeof good.summary, "300 PASS");
    tm_cert_stamp(&good);
    char file[4400], why[256];
    ck_assert(tm_cert_file_for(cache, real, good.file_sha256, ".cert", file, sizeof file));
    ck_assert_int_eq(tm_cert_store(file, &good, why, sizeof why), TOPOML_OK);

    /* A broken build of the same path (another content), which fails. */
    char saved[300];
    snprintf(saved, sizeof saved, "%s.good", so);
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s' && printf 'x' >> '%s'", so, saved, so);
    ck_assert_int_eq(system(cmd), 0);
    ctx = check_context_from_config(text, dir);
    b = copy_info(ctx);
    tm_cert broken;
    ck_assert_int_eq(tm_cert_describe(&broken, real, b.name, b.abi_version, b.caps, b.n_caps), 0);
    ck_assert_str_ne(broken.file_sha256, good.file_sha256);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED); /* not certified: another content */
    topoml_context_free(ctx);
    snprintf(broken.tier, sizeof broken.tier, "quick");
    snprintf(broken.verdict, sizeof broken.verdict, "fail");
    snprintf(broken.summary, sizeof broken.summary, "1 FAIL");
    tm_cert_stamp(&broken);
    ck_assert(tm_cert_file_for(cache, real, broken.file_sha256, ".cert", file, sizeof file));
    ck_assert_int_eq(tm_cert_store(file, &broken, why, sizeof why), TOPOML_OK);
    ctx = check_context_from_config(text, dir);
    b = copy_info(ctx);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    topoml_context_free(ctx);

    /* The good file back: its own certificate, full tier. */
    ck_assert_int_eq(rename(saved, so), 0);
    ctx = check_context_from_config(text, dir);
    b = copy_info(ctx);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    ck_assert_msg(strstr(b.gate_reason, "for tier full"), "%s", b.gate_reason);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("certificate");
    TCase *tc = tcase_create("format");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_certificate_round_trips);
    tcase_add_test(tc, test_certificate_truncated_anywhere_is_rejected);
    tcase_add_test(tc, test_certificate_with_any_byte_changed_is_rejected);
    tcase_add_test(tc, test_certificate_parser_names_what_is_wrong);
    tcase_add_test(tc, test_certificate_with_a_carriage_return_is_rejected);
    tcase_add_test(tc, test_certificate_binds_file_core_abi_suite_and_machine);
    tcase_add_test(tc, test_fingerprint_is_stable_and_device_order_free);
    suite_add_tcase(s, tc);
    TCase *gate = tcase_create("gate");
    tcase_set_timeout(gate, 60);
    tcase_add_checked_fixture(gate, setup, teardown);
    tcase_add_test(gate, test_gate_strict_enables_only_a_valid_certificate);
    tcase_add_test(gate, test_gate_rejects_a_failed_verdict);
    tcase_add_test(gate, test_gate_refuses_tampered_and_truncated_certificates);
    tcase_add_test(gate, test_gate_refuses_a_certificate_from_another_machine);
    tcase_add_test(gate, test_gate_refuses_a_certificate_for_another_file);
    tcase_add_test(gate, test_gate_enable_list_is_an_explicit_override);
    tcase_add_test(gate, test_gate_auto_leaves_certification_to_first_use);
    tcase_add_test(gate, test_gate_refuses_a_cache_writable_by_others);
    tcase_add_test(gate, test_cache_folder_is_made_private);
    tcase_add_test(gate, test_gate_ignores_and_logs_a_certificate_forged_without_the_key);
    tcase_add_test(gate, test_gate_keeps_a_revocation_when_the_old_certificate_is_restored);
    tcase_add_test(gate, test_gate_keeps_certificates_per_file_content);
    suite_add_tcase(s, gate);
    return topoml_check_run(s);
}
