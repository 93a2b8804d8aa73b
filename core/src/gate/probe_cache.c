/*
 * probe_cache.c — probe reports kept from one process to the next.
 *
 * Probing a plugin in a child process (isolate_probe.c) costs a spawn and a
 * load per plugin and process, and for a GPU plugin a start of its runtime
 * (about 0.2 s for CUDA) that the host pays again when it loads the plugin.
 * So the report of a probe that went well (complete, the plugin's probe
 * said ok) is kept in the cache folder (tm_cache_dir: private to its
 * owner, as for certificates), and a later process that would probe the
 * same file under the same conditions reads it instead of starting a child.
 *
 * One file per plugin file, named like its certificate (tm_cert_file,
 * "<file name>-<path hash>.probe"), so a rebuilt plugin replaces its report
 * instead of adding one. The first line binds the report to what could
 * change the probe's answer, and a report is used only when that line is
 * exactly the one this process would write:
 *   topoml-probe-1 file=<SHA-256 of the plugin file> core=<version>
 *   abi=<ABI> boot=<boot id> env=<SHA-256 of the environment>
 *   helper=<the probe program's device:inode:size:mtime>
 *   report=<length>:<SHA-256 of the report>
 * (one line). The report's bytes follow, then the authentication code of
 * everything before it (records.c, "mac=..."): a report that a plugin's
 * process wrote or changed is not used. A reboot changes the boot id (drivers and devices change with
 * reboots); the environment is every NAME=value entry but the shell's
 * volatile PWD, OLDPWD, _ and SHLVL, sorted (CUDA_VISIBLE_DEVICES and the
 * like change what a probe finds); a new build or install of topoml
 * changes the probe program. The report's bytes are as the probe
 * process wrote them; the caller reads them with the same parser and the
 * same checks as a child's report.
 *
 * Not here: whether a report may be used (isolate_probe.c uses only
 * complete ones whose probe said ok) and what makes one stale at load time
 * (registry.c: the host's own probe of an enabled plugin fails or disagrees,
 * and the report is forgotten).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/certificate.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

#define TM_PROBE_FORMAT "topoml-probe-1"
/* The first line's length, at most; its report= field takes under 100. */
#define HEAD_MAX 1024
#define BINDING_MAX (HEAD_MAX - 100)

extern char **environ;

static bool shell_volatile(const char *entry)
{
    static const char *names[] = {"PWD=", "OLDPWD=", "_=", "SHLVL=", NULL};
    for (int k = 0; names[k]; k++)
        if (strncmp(entry, names[k], strlen(names[k])) == 0)
            return true;
    return false;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* SHA-256 of the environment's entries, sorted (the same variables in
 * another order are the same environment). */
static bool environment_hash(topoml_context *ctx, char hex[65])
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    const char **v = tm_alloc(ctx, (n ? n : 1) * sizeof *v);
    if (!v)
        return false;
    size_t m = 0;
    for (char **e = environ; e && *e && m < n; e++)
        if (!shell_volatile(*e))
            v[m++] = *e;
    qsort(v, m, sizeof *v, entry_cmp);
    tm_sha256 s;
    uint8_t d[32];
    tm_sha256_init(&s);
    for (size_t k = 0; k < m; k++)
        tm_sha256_update(&s, v[k], strlen(v[k]) + 1);
    tm_sha256_final(&s, d);
    tm_sha256_to_hex(d, hex);
    tm_free(ctx, v);
    return true;
}

static bool boot_id(char out[64])
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, out, 63);
    close(fd);
    if (got <= 0)
        return false;
    out[got] = '\0';
    out[strcspn(out, "\n")] = '\0';
    for (char *p = out; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '-'))
            return false;
    return out[0] != '\0';
}

/* The first line without its report= field, for b's file now; false when
 * something it binds cannot be known (then nothing is cached). */
static bool binding(topoml_context *ctx, const tm_backend *b, char *out, size_t size)
{
    char boot[64], env[65], helper[4096];
    struct stat st;
    if (strlen(b->file_sha256) != 64 || !boot_id(boot) || !environment_hash(ctx, env) ||
        !tm_find_helper(ctx, TM_PLUGIN_HOST, helper, sizeof helper) || stat(helper, &st) != 0)
        return false;
    int w =
        snprintf(out, size,
                 TM_PROBE_FORMAT " file=%s core=%s abi=%u boot=%s env=%s helper=%llu:%llu:"
                                 "%llu:%lld.%09ld",
                 b->file_sha256, TOPOML_VERSION_STRING, (unsigned)TOPOML_ABI_VERSION, boot, env,
                 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                 (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    return w > 0 && (size_t)w < size;
}

/* The report's file for b, or false (no cache folder: nothing is kept). */
static bool report_file(topoml_context *ctx, const tm_backend *b, bool create, char *out,
                        size_t size)
{
    char dir[4096], real[4096];
    if (!ctx->config.probe_cache || !b->path)
        return false;
    if (tm_cache_dir(ctx, create, dir, sizeof dir) != TOPOML_OK) {
        ctx->errmsg[0] = '\0'; /* no cache: not an error of the caller's */
        return false;
    }
    return realpath(b->path, real) && tm_cert_file(dir, real, ".probe", out, size);
}

bool tm_probe_cache_load(topoml_context *ctx, const tm_backend *b, char **report, size_t *len)
{
    *report = NULL;
    *len = 0;
    char file[4400], want[BINDING_MAX];
    if (!report_file(ctx, b, false, file, sizeof file) || !binding(ctx, b, want, sizeof want))
        return false;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return false;
    /* What is read is what was checked, as for certificates. */
    char real[4096], unsafe[512];
    struct stat st;
    if (!tm_fd_is_safe(fd, real, sizeof real, unsafe, sizeof unsafe) || fstat(fd, &st) != 0 ||
        st.st_size <= 0 ||
        (uint64_t)st.st_size > HEAD_MAX + (uint64_t)TM_PROBE_REPORT_MAX + TM_RECORD_MAC_LINE) {
        close(fd);
        return false;
    }
    const size_t size = (size_t)st.st_size;
    char *text = tm_alloc(ctx, size + 1);
    size_t got = 0;
    while (text && got < size) {
        ssize_t r = read(fd, text + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!text || got != size) {
        tm_free(ctx, text);
        return false;
    }
    text[size] = '\0';
    /* Its last line is the authentication code of the rest (records.c): a
     * report that a plugin's process wrote, or changed, is not used. */
    size_t size_read = size;
    char why[512];
    if (tm_record_open(file, "probe", text, size_read, &size_read, why, sizeof why) != TOPOML_OK) {
        tm_log(ctx, TOPOML_LOG_WARN, "kept probe report %s ignored: %s", file, why);
        tm_free(ctx, text);
        return false;
    }
    const size_t size_body = size_read;
    text[size_body] = '\0';
    /* The binding, then " report=<length>:<SHA-256>\n", then the report. */
    const size_t k = strlen(want);
    char *nl = memchr(text, '\n', size_body < HEAD_MAX ? size_body : HEAD_MAX);
    unsigned long long body = 0;
    char sum[65] = "", end = 0, hex[65];
    bool ok = nl && (size_t)(nl - text) > k && memcmp(text, want, k) == 0 &&
              strncmp(text + k, " report=", 8) == 0 && text[k + 8] >= '0' && text[k + 8] <= '9' &&
              sscanf(text + k + 8, "%llu:%64[0-9a-f]%c", &body, sum, &end) == 3 && end == '\n' &&
              body == size_body - (size_t)(nl + 1 - text) && body <= TM_PROBE_REPORT_MAX;
    if (ok) {
        tm_sha256_hex(nl + 1, (size_t)body, hex);
        ok = strcmp(hex, sum) == 0;
    }
    if (!ok) {
        tm_free(ctx, text);
        return false;
    }
    /* The report to the front of the buffer: the caller frees one pointer. */
    memmove(text, nl + 1, (size_t)body);
    *report = text;
    *len = (size_t)body;
    return true;
}

void tm_probe_cache_store(topoml_context *ctx, const tm_backend *b, const char *report, size_t len)
{
    char file[4400], tmp[4500], head[HEAD_MAX], sum[65];
    if (!report_file(ctx, b, true, file, sizeof file) || len > TM_PROBE_REPORT_MAX ||
        !binding(ctx, b, head, BINDING_MAX) ||
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", file) >= (int)sizeof tmp)
        return;
    tm_sha256_hex(report, len, sum);
    size_t n = strlen(head);
    n += (size_t)snprintf(head + n, sizeof head - n, " report=%zu:%s\n", len, sum);
    /* The code covers the head and the report: both go through one HMAC. */
    char *whole = tm_alloc(ctx, n + len);
    char mac[TM_RECORD_MAC_LINE + 1], why[512];
    if (!whole) {
        ctx->errmsg[0] = '\0';
        return;
    }
    memcpy(whole, head, n);
    memcpy(whole + n, report, len);
    int sealed = tm_record_seal(file, "probe", whole, n + len, mac, why, sizeof why);
    tm_free(ctx, whole);
    if (sealed != TOPOML_OK)
        return;
    int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
    if (fd < 0)
        return;
    /* A reader sees the old file or the new one, never a part of it. */
    bool ok = write(fd, head, n) == (ssize_t)n && write(fd, report, len) == (ssize_t)len &&
              write(fd, mac, TM_RECORD_MAC_LINE) == (ssize_t)TM_RECORD_MAC_LINE;
    if (close(fd) != 0 || !ok || rename(tmp, file) != 0)
        unlink(tmp);
}

void tm_probe_cache_forget(topoml_context *ctx, const tm_backend *b)
{
    char file[4400];
    if (report_file(ctx, b, false, file, sizeof file))
        unlink(file);
}
