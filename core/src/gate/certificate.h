/*
 * certificate.h — conformance certificates (certificate.c): what
 * topoml-conformance --certify writes and what the gate (gate.c) reads.
 *
 * A certificate is the suite's verdict on one plugin file, bound to
 * everything that could make the verdict stale: the file's SHA-256, the core
 * and ABI versions, the suite version, and the machine (a hash of the CPU
 * model and feature flags, and a hash of the device strings the plugin's
 * capability records report). It is a small text file of key=value lines
 * closed by a checksum line (SHA-256 of everything before it), so a
 * truncated or edited file is detected and never trusted. The file adds a
 * last line, the HMAC-SHA256 of the rest under the cache folder's key
 * (records.c): without the key, which a plugin's sandboxed process cannot
 * read, a certificate cannot be forged or altered.
 */
#ifndef TOPOML_CERTIFICATE_H
#define TOPOML_CERTIFICATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topoml/plugin.h"

struct topoml_context;

#define TM_CERT_FORMAT "topoml-certificate-1"

/* Fixed-size fields: a certificate is small, and a value that does not fit
 * is a parse error, never silently cut. */
typedef struct tm_cert {
    char plugin[64];         /* backend name */
    char path[1024];         /* canonical path of the file certified */
    char file_sha256[65];    /* binding: the file's content */
    char core_version[32];   /* binding */
    uint32_t abi_version;    /* binding: the version negotiated */
    char suite_version[32];  /* binding: cases.yaml's suite_version */
    char tier[16];           /* "quick" or "full": what was run */
    char cpu_model[160];     /* for people; the hash below is what binds */
    char cpu_sha256[65];     /* binding: CPU model + feature flags */
    char devices[512];       /* for people: the capability records' devices */
    char devices_sha256[65]; /* binding */
    char verdict[8];         /* "pass" or "fail" */
    char summary[768];       /* counts per result; the first failing case */
    char date[32];           /* UTC, ISO 8601 */
    char report[1024];       /* the JSON report written with it, or "" */
    char seed[24];           /* the seed of the generated cases (decimal) */
} tm_cert;

/* The CPU part of the hardware fingerprint: the model name and the feature
 * flags from /proc/cpuinfo (first processor), hashed. Without a readable
 * /proc/cpuinfo the model is "unknown" and the hash is that of "unknown". */
void tm_cert_cpu(char model[160], char sha256[65]);

/* The device part: the distinct device strings of the capability records,
 * sorted, joined by "; " into `text` and hashed. */
void tm_cert_devices(const topoml_capability_v1 *caps, uint32_t n_caps, char text[512],
                     char sha256[65]);

/* Fill the bindings of `c` that describe this core and this machine for a
 * plugin file with these capability records: file hash, core, ABI, suite
 * version, CPU, devices, path. 0, or an errno value from reading the file. */
int tm_cert_describe(tm_cert *c, const char *canonical_path, const char *plugin_name,
                     uint32_t abi_version, const topoml_capability_v1 *caps, uint32_t n_caps);

/* The same with the file's SHA-256 (64 hex digits) already computed, from
 * the descriptor the plugin is loaded from (loader.c). 0, or EINVAL. */
int tm_cert_describe_sha(tm_cert *c, const char *canonical_path, const char *file_sha256,
                         const char *plugin_name, uint32_t abi_version,
                         const topoml_capability_v1 *caps, uint32_t n_caps);

/* Text form; returns the length, or -1 when `size` is too small. */
int tm_cert_format(const tm_cert *c, char *buf, size_t size);

/* Parse the text form. TOPOML_OK, or TOPOML_E_PARSE with the reason in `why`
 * (bad line, a NUL or carriage return in a line, unknown or repeated key,
 * missing key, missing or wrong checksum). What parses formats back with
 * tm_cert_format to text that parses to the same fields. */
int tm_cert_parse(const char *text, size_t len, tm_cert *c, char *why, size_t why_size);

/* Does certificate `c` still hold for `now` (from tm_cert_describe)? true,
 * or false with a short reason ("plugin file changed", "made on another
 * machine (...)", ...) in `why`. The tier and verdict are not checked here. */
bool tm_cert_matches(const tm_cert *c, const tm_cert *now, char *why, size_t why_size);

/* Where the certificate of a plugin file lives:
 * <cache_dir>/<file name>-<first 16 hex digits of SHA-256(canonical path)>.cert
 * (and .json for its report). Returns false if it does not fit. */
bool tm_cert_file(const char *cache_dir, const char *canonical_path, const char *suffix, char *out,
                  size_t size);

/* Where the certificate of one content of a plugin file lives:
 * <cache_dir>/<file name>-<16 hex digits of SHA-256(path)>-<first 16 hex
 * digits of the file's SHA-256><suffix> (.cert, .json, .verified). One per
 * content: certifying a rebuilt file leaves the certificate of the old one
 * alone, and putting the old file back finds it again. */
bool tm_cert_file_for(const char *cache_dir, const char *canonical_path, const char *file_sha256,
                      const char *suffix, char *out, size_t size);

/* Read and parse a certificate file: TOPOML_OK, TOPOML_E_NOT_FOUND (no
 * file), TOPOML_E_IO or TOPOML_E_PARSE, with the reason in `why`. The file
 * is opened once (O_NOFOLLOW) and must pass tm_fd_is_safe on that
 * descriptor (ours or root's, not writable by others, nor any folder above
 * it), else TOPOML_E_PARSE: a certificate anyone else could have written is
 * not one; and its last line must be the authentication code of the rest
 * under the cache folder's key (records.c), else TOPOML_E_PARSE. */
int tm_cert_load(const char *file, tm_cert *c, char *why, size_t why_size);

/* Write atomically (a private temporary file renamed over `file`), mode 0600,
 * followed by its authentication code (records.c; the key is made if need be).
 * TOPOML_OK or TOPOML_E_IO with the reason. */
int tm_cert_store(const char *file, const tm_cert *c, char *why, size_t why_size);

/* The certificate cache folder: configuration key cache_dir, else
 * $XDG_CACHE_HOME/topoml, else $HOME/.cache/topoml. With `create`, missing
 * folders are made with mode 0700. The folder must be ours (or root's) and
 * not writable by group or others, or it is refused (TOPOML_E_CONFIG with the
 * reason in the context); a missing folder without `create` is
 * TOPOML_E_NOT_FOUND. */
int tm_cache_dir(struct topoml_context *ctx, bool create, char *out, size_t size);

/* Set c->date to the current time (UTC). */
void tm_cert_stamp(tm_cert *c);

#endif
