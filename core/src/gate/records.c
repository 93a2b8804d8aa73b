/*
 * records.c — what makes the gate's records trustworthy: certificates
 * (certificate.c), revocations (below), the run-time verification record
 * (verify.c) and kept probe reports (probe_cache.c) all end with a line
 *   mac=<HMAC-SHA256 of everything before it, in hex>
 * under a key of 32 random bytes kept in the cache folder as
 * `records.key` (mode 0600, made on first use). A plugin's process —
 * the probe helper, the isolated helper, conformance's children — is denied
 * the cache folder by the sandbox, so it can neither read the key nor
 * forge, alter or restore a record: a record whose code does not match is
 * ignored and logged by its reader. The code covers the kind of record too
 * (a probe report cannot pass for a certificate).
 *
 * Revocations are kept apart from certificates, in `revoked`: one line per
 * plugin file revoked at run time, appended, each with its own code, and
 * read before any certificate. A certificate put back from before the
 * revocation (a copy, a backup, a daemon restoring the file) therefore
 * counts for nothing: the file's hash stays revoked until the line is
 * removed by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

#define KEY_FILE "records.key"
#define REVOKED_FILE "revoked"
#define MAC_PREFIX "mac="
/* "mac=" + 64 hex digits + newline */
#define MAC_LINE_LEN (4 + 64 + 1)
#define REVOKED_MAX (4u << 20)

static void dir_of(const char *file, char *out, size_t size)
{
    const char *slash = strrchr(file, '/');
    if (!slash)
        snprintf(out, size, ".");
    else if (slash == file)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - file), file);
}

/* Read the key from an open descriptor: ours, mode 0600 or stricter, in
 * folders nobody else can write, exactly 32 bytes. */
static bool read_key(int fd, uint8_t key[32], char *why, size_t why_size)
{
    char real[4096], unsafe[512];
    struct stat st;
    if (!tm_fd_is_safe(fd, real, sizeof real, unsafe, sizeof unsafe)) {
        snprintf(why, why_size, "key not trusted: %.400s", unsafe);
        return false;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077) != 0 || st.st_size != 32) {
        snprintf(why, why_size,
                 "key %.400s is not a 32-byte file of this user readable by nobody else", real);
        return false;
    }
    size_t got = 0;
    while (got < 32) {
        ssize_t r = pread(fd, key + got, 32 - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(why, why_size, "cannot read key %.400s", real);
            return false;
        }
        got += (size_t)r;
    }
    return true;
}

int tm_record_key(const char *dir, bool create, uint8_t key[32], char *why, size_t why_size)
{
    char file[4200];
    if ((size_t)snprintf(file, sizeof file, "%s/" KEY_FILE, dir) >= sizeof file) {
        snprintf(why, why_size, "cache folder path too long");
        return TOPOML_E_IO;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd >= 0) {
            bool ok = read_key(fd, key, why, why_size);
            close(fd);
            return ok ? TOPOML_OK : TOPOML_E_PARSE;
        }
        if (errno != ENOENT) {
            snprintf(why, why_size, "cannot open key %.400s: %s", file, strerror(errno));
            return TOPOML_E_IO;
        }
        if (!create) {
            snprintf(why, why_size, "no key %.400s", file);
            return TOPOML_E_NOT_FOUND;
        }
        /* A new key: written in full under a private name, then linked into
         * place, so that two processes making one at once agree on the one
         * that was linked first. */
        char tmp[4300];
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", file);
        uint8_t fresh[32];
        if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh) {
            snprintf(why, why_size, "no random bytes for a key: %s", strerror(errno));
            return TOPOML_E_IO;
        }
        int t = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
        if (t < 0) {
            snprintf(why, why_size, "cannot create a key in %.400s: %s", dir, strerror(errno));
            return TOPOML_E_IO;
        }
        bool ok = write(t, fresh, sizeof fresh) == (ssize_t)sizeof fresh && fsync(t) == 0;
        ok = close(t) == 0 && ok;
        int linked = ok ? link(tmp, file) : -1;
        int err = errno;
        unlink(tmp);
        if (!ok || (linked != 0 && err != EEXIST)) {
            snprintf(why, why_size, "cannot create key %.400s: %s", file, strerror(err));
            return TOPOML_E_IO;
        }
        /* Read back what is in place now (ours, or another process's). */
    }
    snprintf(why, why_size, "key %.400s vanished while it was made", file);
    return TOPOML_E_IO;
}

static void mac_hex(const uint8_t key[32], const char *kind, const void *data, size_t len,
                    char hex[65])
{
    /* The kind and its NUL, then the data. */
    uint8_t mac[32];
    tm_hmac_sha256_2(key, 32, kind, strlen(kind) + 1, data, len, mac);
    tm_sha256_to_hex(mac, hex);
}

/* Constant-time comparison of two 64-digit codes. */
static bool same_code(const char *a, const char *b)
{
    unsigned diff = 0;
    for (int i = 0; i < 64; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

int tm_record_seal(const char *file, const char *kind, const void *body, size_t len,
                   char line[TM_RECORD_MAC_LINE + 1], char *why, size_t why_size)
{
    char dir[4096];
    uint8_t key[32];
    dir_of(file, dir, sizeof dir);
    int rc = tm_record_key(dir, true, key, why, why_size);
    if (rc != TOPOML_OK)
        return rc;
    char hex[65];
    mac_hex(key, kind, body, len, hex);
    snprintf(line, MAC_LINE_LEN + 1, MAC_PREFIX "%s\n", hex);
    return TOPOML_OK;
}

int tm_record_open(const char *file, const char *kind, const char *text, size_t len,
                   size_t *body_len, char *why, size_t why_size)
{
    *body_len = 0;
    if (len < MAC_LINE_LEN || memcmp(text + len - MAC_LINE_LEN, MAC_PREFIX, 4) != 0 ||
        text[len - 1] != '\n') {
        snprintf(why, why_size, "no authentication code (mac=) as its last line");
        return TOPOML_E_PARSE;
    }
    char dir[4096];
    uint8_t key[32];
    dir_of(file, dir, sizeof dir);
    int rc = tm_record_key(dir, false, key, why, why_size);
    if (rc != TOPOML_OK)
        return TOPOML_E_PARSE;
    char hex[65];
    const size_t body = len - MAC_LINE_LEN;
    mac_hex(key, kind, text, body, hex);
    if (!same_code(hex, text + body + 4)) {
        snprintf(why, why_size,
                 "authentication code does not match: changed, or not written by topoml for "
                 "this user");
        return TOPOML_E_PARSE;
    }
    *body_len = body;
    return TOPOML_OK;
}

int tm_record_read(const char *file, const char *kind, char *buf, size_t size, size_t *body_len,
                   char *why, size_t why_size)
{
    *body_len = 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, why_size, "%.400s: %s", file, strerror(errno));
        return errno == ENOENT ? TOPOML_E_NOT_FOUND : TOPOML_E_IO;
    }
    /* What is read is what was checked: owner and mode of this descriptor
     * and of every folder above it (loader.c). */
    char real[4096], unsafe[512];
    if (!tm_fd_is_safe(fd, real, sizeof real, unsafe, sizeof unsafe)) {
        snprintf(why, why_size, "%.400s: not trusted: %.400s", file, unsafe);
        close(fd);
        return TOPOML_E_PARSE;
    }
    size_t len = 0;
    ssize_t got;
    while (len < size && (got = read(fd, buf + len, size - len)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            snprintf(why, why_size, "%.400s: %s", file, strerror(errno));
            close(fd);
            return TOPOML_E_IO;
        }
        len += (size_t)got;
    }
    close(fd);
    if (len == size) {
        snprintf(why, why_size, "%.400s: too large", file);
        return TOPOML_E_PARSE;
    }
    char reason[512];
    int rc = tm_record_open(file, kind, buf, len, body_len, reason, sizeof reason);
    if (rc != TOPOML_OK)
        snprintf(why, why_size, "%.400s: %s", file, reason);
    return rc;
}

int tm_record_write(const char *file, const char *kind, const void *body, size_t len, char *why,
                    size_t why_size)
{
    char line[MAC_LINE_LEN + 1];
    int rc = tm_record_seal(file, kind, body, len, line, why, why_size);
    if (rc != TOPOML_OK)
        return rc;
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", file) >= sizeof tmp) {
        snprintf(why, why_size, "path too long: %.400s", file);
        return TOPOML_E_IO;
    }
    int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
    if (fd < 0) {
        snprintf(why, why_size, "cannot create %.400s: %s", tmp, strerror(errno));
        return TOPOML_E_IO;
    }
    /* A reader sees the old record or the new one, never a part of it. */
    bool ok = (!len || write(fd, body, len) == (ssize_t)len) &&
              write(fd, line, MAC_LINE_LEN) == (ssize_t)MAC_LINE_LEN && fsync(fd) == 0;
    int err = ok ? 0 : (errno ? errno : EIO);
    if (close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(tmp, file) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        unlink(tmp);
        snprintf(why, why_size, "cannot write %.400s: %s", file, strerror(err));
        return TOPOML_E_IO;
    }
    return TOPOML_OK;
}

/* ---- revocations ---- */

/* One line: "<file sha256> <date> <reason>" then " mac=<code>\n", the code
 * over the kind "revocation" and the line up to the space before mac=. */
static bool revoked_file(const char *dir, char *out, size_t size)
{
    return (size_t)snprintf(out, size, "%s/" REVOKED_FILE, dir) < size;
}

int tm_revoked_lookup(const char *dir, const char *file_sha256, char *reason, size_t reason_size,
                      int *forged)
{
    char file[4200], why[512];
    uint8_t key[32];
    *forged = 0;
    if (reason_size)
        reason[0] = '\0';
    if (!revoked_file(dir, file, sizeof file))
        return 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return 0;
    char real[4096], unsafe[512];
    struct stat st;
    if (!tm_fd_is_safe(fd, real, sizeof real, unsafe, sizeof unsafe) || fstat(fd, &st) != 0 ||
        st.st_size < 0 || (uint64_t)st.st_size > REVOKED_MAX) {
        close(fd);
        *forged = 1;
        return 0;
    }
    if (tm_record_key(dir, false, key, why, sizeof why) != TOPOML_OK) {
        close(fd);
        /* Lines without a key to check them by are nobody's: ignored. */
        *forged = st.st_size > 0;
        return 0;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return 0;
    }
    int hit = 0;
    char line[1400];
    while (fgets(line, sizeof line, f)) {
        char *nl = strchr(line, '\n');
        if (!nl) {
            /* Longer than any line written here, or cut: not one. */
            *forged = 1;
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            continue;
        }
        *nl = '\0';
        char *m = strstr(line, " " MAC_PREFIX);
        char hex[65];
        if (m && strlen(m + 5) == 64) {
            mac_hex(key, "revocation", line, (size_t)(m - line), hex);
            if (!same_code(hex, m + 5)) {
                *forged = 1;
            } else if (strncmp(line, file_sha256, 64) == 0 && line[64] == ' ') {
                hit = 1;
                *m = '\0';
                snprintf(reason, reason_size, "%s", line + 65);
            }
        } else if (*line) {
            *forged = 1;
        }
    }
    fclose(f);
    return hit;
}

int tm_revoked_add(const char *dir, const char *file_sha256, const char *reason, char *why,
                   size_t why_size)
{
    char file[4200], line[1024], mac[80];
    if (strlen(file_sha256) != 64 || !revoked_file(dir, file, sizeof file)) {
        snprintf(why, why_size, "bad revocation");
        return TOPOML_E_INTERNAL;
    }
    char date[32];
    time_t t = time(NULL);
    struct tm u;
    gmtime_r(&t, &u);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &u);
    int n = snprintf(line, sizeof line, "%s %s %.800s", file_sha256, date, reason);
    if (n < 0)
        return TOPOML_E_INTERNAL;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    uint8_t key[32];
    int rc = tm_record_key(dir, true, key, why, why_size);
    if (rc != TOPOML_OK)
        return rc;
    char hex[65];
    mac_hex(key, "revocation", line, len, hex);
    snprintf(mac, sizeof mac, " " MAC_PREFIX "%s\n", hex);
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open %.400s: %s", file, strerror(errno));
        return TOPOML_E_IO;
    }
    char out[1200];
    int m = snprintf(out, sizeof out, "%.*s%s", (int)len, line, mac);
    /* One write: concurrent appenders do not interleave within a line. */
    bool ok = m > 0 && write(fd, out, (size_t)m) == m;
    ok = fsync(fd) == 0 && ok;
    close(fd);
    if (!ok) {
        snprintf(why, why_size, "cannot append to %.400s", file);
        return TOPOML_E_IO;
    }
    return TOPOML_OK;
}
