/*
 * certificate.c — reading, writing and checking conformance certificates,
 * the hardware fingerprint they are bound to, and the private cache folder
 * they live in. The format and its rules are in certificate.h and
 * docs/conformance.md; gate.c decides what a certificate means for a
 * backend, topoml-conformance writes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gate/certificate.h"
#include "api/api.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

#ifndef TOPOML_SUITE_VERSION
#error "TOPOML_SUITE_VERSION must be defined (from conformance/cases.yaml)"
#endif

/* ---- hardware fingerprint ---- */

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

/* The value of "key<spaces>: value" if `line` has that key. */
static const char *cpuinfo_value(const char *line, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0)
        return NULL;
    line += k;
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line != ':')
        return NULL;
    line++;
    while (*line == ' ')
        line++;
    return line;
}

void tm_cert_cpu(char model[160], char sha256[65])
{
    /* x86 says "model name" and "flags"; arm64 says "CPU implementer",
     * "CPU part" and "Features". Only the first processor is read: the
     * fingerprint tells machines apart, it does not describe them. */
    char id[160] = "", flags[4096] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            const char *v;
            trim(line);
            if (line[0] == '\0' && (id[0] || flags[0]))
                break; /* end of the first processor's block */
            if ((v = cpuinfo_value(line, "model name")) && !id[0])
                snprintf(id, sizeof id, "%s", v);
            else if ((v = cpuinfo_value(line, "CPU implementer")) && !id[0])
                snprintf(id, sizeof id, "implementer %s", v);
            else if ((v = cpuinfo_value(line, "CPU part")) &&
                     strlen(id) + strlen(v) + 7 < sizeof id)
                strcat(strcat(id, " part "), v);
            else if ((v = cpuinfo_value(line, "flags")) || (v = cpuinfo_value(line, "Features")))
                snprintf(flags, sizeof flags, "%s", v);
        }
        fclose(f);
    }
    if (!id[0])
        snprintf(id, sizeof id, "unknown");
    snprintf(model, 160, "%s", id);
    tm_sha256 s;
    uint8_t d[32];
    tm_sha256_init(&s);
    tm_sha256_update(&s, id, strlen(id));
    tm_sha256_update(&s, "\n", 1);
    tm_sha256_update(&s, flags, strlen(flags));
    tm_sha256_final(&s, d);
    tm_sha256_to_hex(d, sha256);
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void tm_cert_devices(const topoml_capability_v1 *caps, uint32_t n_caps, char text[512],
                     char sha256[65])
{
    const char *names[64];
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_caps && n < 64; i++)
        names[n++] = caps[i].device ? caps[i].device : "";
    qsort(names, n, sizeof names[0], str_cmp);
    tm_sha256 s;
    uint8_t d[32];
    tm_sha256_init(&s);
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
            continue;
        /* The hash sees every distinct string in full; the text is for
         * people and may be cut. */
        tm_sha256_update(&s, names[i], strlen(names[i]) + 1);
        int w = snprintf(text + used, 512 - used, "%s%s", used ? "; " : "", names[i]);
        if (w > 0)
            used = used + (size_t)w < 511 ? used + (size_t)w : 511;
    }
    tm_sha256_final(&s, d);
    tm_sha256_to_hex(d, sha256);
    /* Newlines would break the one-line-per-key format. */
    for (char *p = text; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int tm_cert_describe(tm_cert *c, const char *canonical_path, const char *plugin_name,
                     uint32_t abi_version, const topoml_capability_v1 *caps, uint32_t n_caps)
{
    char sha[65];
    int err = tm_sha256_file(canonical_path, sha);
    if (err)
        return err;
    return tm_cert_describe_sha(c, canonical_path, sha, plugin_name, abi_version, caps, n_caps);
}

int tm_cert_describe_sha(tm_cert *c, const char *canonical_path, const char *file_sha256,
                         const char *plugin_name, uint32_t abi_version,
                         const topoml_capability_v1 *caps, uint32_t n_caps)
{
    if (!file_sha256 || strlen(file_sha256) != 64)
        return EINVAL;
    memset(c, 0, sizeof *c);
    snprintf(c->plugin, sizeof c->plugin, "%s", plugin_name ? plugin_name : "");
    snprintf(c->path, sizeof c->path, "%s", canonical_path);
    snprintf(c->core_version, sizeof c->core_version, "%s", TOPOML_VERSION_STRING);
    c->abi_version = abi_version;
    snprintf(c->suite_version, sizeof c->suite_version, "%s", TOPOML_SUITE_VERSION);
    tm_cert_cpu(c->cpu_model, c->cpu_sha256);
    tm_cert_devices(caps, n_caps, c->devices, c->devices_sha256);
    memcpy(c->file_sha256, file_sha256, 65);
    return 0;
}

/* ---- text form ---- */

/* The keys in the order they are written; every one is required. */
enum {
    K_FORMAT,
    K_PLUGIN,
    K_PATH,
    K_FILE,
    K_CORE,
    K_ABI,
    K_SUITE,
    K_TIER,
    K_CPU_MODEL,
    K_CPU,
    K_DEVICES,
    K_DEVICES_SHA,
    K_VERDICT,
    K_SUMMARY,
    K_DATE,
    K_REPORT,
    K_SEED,
    K_COUNT
};

static const char *key_names[K_COUNT] = {
    "format",        "plugin",  "path",      "file_sha256", "core_version", "abi_version",
    "suite_version", "tier",    "cpu_model", "cpu_sha256",  "devices",      "devices_sha256",
    "verdict",       "summary", "date",      "report",       "seed"};

/* Where field k of `c` lives and how large it is (NULL for abi_version). */
static char *field(tm_cert *c, int k, size_t *size)
{
#define F(m)                                                                                       \
    do {                                                                                           \
        *size = sizeof c->m;                                                                       \
        return c->m;                                                                               \
    } while (0)
    switch (k) {
    case K_PLUGIN: F(plugin);
    case K_PATH: F(path);
    case K_FILE: F(file_sha256);
    case K_CORE: F(core_version);
    case K_SUITE: F(suite_version);
    case K_TIER: F(tier);
    case K_CPU_MODEL: F(cpu_model);
    case K_CPU: F(cpu_sha256);
    case K_DEVICES: F(devices);
    case K_DEVICES_SHA: F(devices_sha256);
    case K_VERDICT: F(verdict);
    case K_SUMMARY: F(summary);
    case K_DATE: F(date);
    case K_REPORT: F(report);
    case K_SEED: F(seed);
    }
#undef F
    *size = 0;
    return NULL;
}

int tm_cert_format(const tm_cert *c, char *buf, size_t size)
{
    size_t used = 0;
    for (int k = 0; k < K_COUNT; k++) {
        char num[16];
        size_t fs;
        const char *v = k == K_FORMAT ? TM_CERT_FORMAT
                        : k == K_ABI  ? (snprintf(num, sizeof num, "%u", c->abi_version), num)
                                      : field((tm_cert *)c, k, &fs);
        if (strchr(v, '\n') || strchr(v, '\r'))
            return -1;
        int w = snprintf(buf + used, size - used, "%s=%s\n", key_names[k], v);
        if (w < 0 || (size_t)w >= size - used)
            return -1;
        used += (size_t)w;
    }
    char hex[65];
    tm_sha256_hex(buf, used, hex);
    int w = snprintf(buf + used, size - used, "checksum=%s\n", hex);
    if (w < 0 || (size_t)w >= size - used)
        return -1;
    return (int)(used + (size_t)w);
}

static int parse_fail(char *why, size_t why_size, const char *fmt, const char *arg, unsigned line)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    snprintf(why, why_size, "line %u: %s", line, msg);
    return TOPOML_E_PARSE;
}

int tm_cert_parse(const char *text, size_t len, tm_cert *c, char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    bool seen[K_COUNT] = {false};
    size_t pos = 0;
    unsigned line = 0;
    while (pos < len) {
        line++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        if (!nl)
            return parse_fail(why, why_size, "%s", "no newline at the end: the file is truncated",
                              line);
        size_t n = (size_t)(nl - start);
        const char *eq = memchr(start, '=', n);
        if (!eq)
            return parse_fail(why, why_size, "%s", "not a key=value line", line);
        size_t klen = (size_t)(eq - start), vlen = n - klen - 1;
        const char *val = eq + 1;
        if (memchr(start, '\0', n))
            return parse_fail(why, why_size, "%s", "contains a NUL byte", line);
        /* tm_cert_format never writes one, so a certificate holding one was
         * not written by it (and could not be written back). */
        if (memchr(start, '\r', n))
            return parse_fail(why, why_size, "%s", "contains a carriage return", line);
        if (klen == 8 && memcmp(start, "checksum", 8) == 0) {
            /* The checksum covers every byte before its own line and must be
             * the last line. */
            char hex[65];
            tm_sha256_hex(text, pos, hex);
            if (vlen != 64 || memcmp(val, hex, 64) != 0)
                return parse_fail(why, why_size, "%s",
                                  "checksum does not match: the file was changed", line);
            if ((size_t)(nl - text) + 1 != len)
                return parse_fail(why, why_size, "%s", "text after the checksum line", line);
            for (int k = 0; k < K_COUNT; k++)
                if (!seen[k])
                    return parse_fail(why, why_size, "missing key '%s'", key_names[k], line);
            if (strcmp(c->verdict, "pass") != 0 && strcmp(c->verdict, "fail") != 0)
                return parse_fail(why, why_size, "verdict '%s' is neither pass nor fail",
                                  c->verdict, line);
            return TOPOML_OK;
        }
        int k;
        for (k = 0; k < K_COUNT; k++)
            if (strlen(key_names[k]) == klen && memcmp(key_names[k], start, klen) == 0)
                break;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(klen < 60 ? klen : 60), start);
        if (k == K_COUNT)
            return parse_fail(why, why_size, "unknown key '%s'", key, line);
        if (seen[k])
            return parse_fail(why, why_size, "key '%s' given twice", key, line);
        seen[k] = true;
        if (k == K_FORMAT) {
            if (vlen != strlen(TM_CERT_FORMAT) || memcmp(val, TM_CERT_FORMAT, vlen) != 0)
                return parse_fail(why, why_size, "%s", "not a " TM_CERT_FORMAT " file", line);
        } else if (k == K_ABI) {
            char num[16];
            if (vlen == 0 || vlen >= sizeof num)
                return parse_fail(why, why_size, "%s", "bad abi_version", line);
            memcpy(num, val, vlen);
            num[vlen] = '\0';
            char *end;
            unsigned long v = strtoul(num, &end, 10);
            if (*end || v > UINT32_MAX)
                return parse_fail(why, why_size, "%s", "bad abi_version", line);
            c->abi_version = (uint32_t)v;
        } else {
            size_t fs;
            char *dst = field(c, k, &fs);
            if (vlen >= fs)
                return parse_fail(why, why_size, "value of '%s' is too long", key, line);
            memcpy(dst, val, vlen);
            dst[vlen] = '\0';
        }
        pos += n + 1;
    }
    return parse_fail(why, why_size, "%s", "no checksum line: the file is truncated", line + 1);
}

bool tm_cert_matches(const tm_cert *c, const tm_cert *now, char *why, size_t why_size)
{
    if (strcmp(c->file_sha256, now->file_sha256) != 0)
        snprintf(why, why_size, "plugin file changed");
    else if (strcmp(c->core_version, now->core_version) != 0)
        snprintf(why, why_size, "made by core %s, this is core %s", c->core_version,
                 now->core_version);
    else if (c->abi_version != now->abi_version)
        snprintf(why, why_size, "made for ABI v%u, the plugin now speaks v%u", c->abi_version,
                 now->abi_version);
    else if (strcmp(c->suite_version, now->suite_version) != 0)
        snprintf(why, why_size, "made with conformance suite %s, this core needs suite %s",
                 c->suite_version, now->suite_version);
    else if (strcmp(c->cpu_sha256, now->cpu_sha256) != 0)
        snprintf(why, why_size, "made on another machine (CPU '%.100s')", c->cpu_model);
    else if (strcmp(c->devices_sha256, now->devices_sha256) != 0)
        snprintf(why, why_size, "made for other devices ('%.100s', now '%.100s')", c->devices,
                 now->devices);
    else
        return true;
    return false;
}

/* ---- files ---- */

bool tm_cert_file(const char *cache_dir, const char *canonical_path, const char *suffix, char *out,
                  size_t size)
{
    char hex[65];
    tm_sha256_hex(canonical_path, strlen(canonical_path), hex);
    const char *base = strrchr(canonical_path, '/');
    base = base ? base + 1 : canonical_path;
    int w = snprintf(out, size, "%s/%s-%.16s%s", cache_dir, base, hex, suffix);
    return w > 0 && (size_t)w < size;
}

bool tm_cert_file_for(const char *cache_dir, const char *canonical_path, const char *file_sha256,
                      const char *suffix, char *out, size_t size)
{
    char hex[65];
    if (!file_sha256 || strlen(file_sha256) != 64)
        return false;
    tm_sha256_hex(canonical_path, strlen(canonical_path), hex);
    const char *base = strrchr(canonical_path, '/');
    base = base ? base + 1 : canonical_path;
    int w = snprintf(out, size, "%s/%s-%.16s-%.16s%s", cache_dir, base, hex, file_sha256, suffix);
    return w > 0 && (size_t)w < size;
}

int tm_cert_load(const char *file, tm_cert *c, char *why, size_t why_size)
{
    memset(c, 0, sizeof *c);
    /* One descriptor, checked (owner and mode of it and of every folder
     * above it), then the authentication code of its last line (records.c):
     * a certificate that anyone or anything else wrote or changed is not
     * one. A certificate is a few hundred bytes; past 16 KiB it is not one. */
    char buf[16384];
    size_t len;
    int rc = tm_record_read(file, "certificate", buf, sizeof buf, &len, why, why_size);
    if (rc != TOPOML_OK)
        return rc;
    return tm_cert_parse(buf, len, c, why, why_size);
}

int tm_cert_store(const char *file, const tm_cert *c, char *why, size_t why_size)
{
    char text[8192];
    int len = tm_cert_format(c, text, sizeof text);
    if (len < 0) {
        snprintf(why, why_size, "certificate does not fit its format");
        return TOPOML_E_INTERNAL;
    }
    return tm_record_write(file, "certificate", text, (size_t)len, why, why_size);
}

/* mkdir -p with mode 0700 for every folder made. */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return errno;
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return errno;
    return 0;
}

int tm_cache_dir(struct topoml_context *ctx, bool create, char *out, size_t size)
{
    const char *xdg = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    int w;
    if (ctx->config.cache_dir && *ctx->config.cache_dir)
        w = snprintf(out, size, "%s", ctx->config.cache_dir);
    else if (xdg && xdg[0] == '/') /* the XDG spec ignores relative values */
        w = snprintf(out, size, "%s/topoml", xdg);
    else if (home && home[0] == '/')
        w = snprintf(out, size, "%s/.cache/topoml", home);
    else
        return tm_error(ctx, TOPOML_E_CONFIG,
                        "no certificate cache folder: set cache_dir, XDG_CACHE_HOME or HOME");
    if (w < 0 || (size_t)w >= size)
        return tm_error(ctx, TOPOML_E_CONFIG, "certificate cache folder path too long");
    if (out[0] != '/')
        return tm_error(ctx, TOPOML_E_CONFIG, "cache_dir must be an absolute path, not '%s'", out);
    while (w > 1 && out[w - 1] == '/')
        out[--w] = '\0';
    struct stat st;
    if (stat(out, &st) != 0) {
        if (errno != ENOENT)
            return tm_error(ctx, TOPOML_E_CONFIG, "certificate cache %s: %s", out, strerror(errno));
        if (!create)
            return tm_error(ctx, TOPOML_E_NOT_FOUND, "certificate cache %s does not exist", out);
        int err = make_dirs(out);
        if (err)
            return tm_error(ctx, TOPOML_E_CONFIG, "cannot create certificate cache %s: %s", out,
                            strerror(err));
    }
    char why[512];
    if (!tm_path_is_safe(out, true, why, sizeof why))
        return tm_error(ctx, TOPOML_E_CONFIG, "refusing certificate cache: %s", why);
    return TOPOML_OK;
}

/* For the report and the certificate: now, in UTC. */
void tm_cert_stamp(tm_cert *c)
{
    time_t t = time(NULL);
    struct tm u;
    gmtime_r(&t, &u);
    strftime(c->date, sizeof c->date, "%Y-%m-%dT%H:%M:%SZ", &u);
}
