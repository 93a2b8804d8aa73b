/*
 * config.c — topoml.yaml: the one place configuration is read (libyaml).
 *
 * Every key is documented in topoml.yaml.example. Unknown keys and values of
 * the wrong type are errors that name "file:line:column"; a context works
 * with no file at all (tm_config_defaults).
 *
 * The configuration decides whether the gate runs, so nothing in it may be
 * ambiguous: a key given twice and a second YAML document are errors (YAML
 * would let the last one win silently, e.g. `gate: strict` ... `gate: "off"`).
 * A file is read whole, at most TM_CONFIG_MAX_BYTES, and its nesting is
 * checked on the event stream (TM_CONFIG_MAX_DEPTH) before a document tree is
 * built, so a hostile file costs milliseconds, not a tree of a million nodes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "api/api.h"

void tm_config_defaults(tm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->gate = TM_GATE_AUTO;
    cfg->log_level = -1;
    cfg->device = -1;
    cfg->isolation = TM_ISOLATION_AUTO;
    cfg->isolation_timeout = TM_ISOLATION_TIMEOUT_S;
    cfg->verify = TM_VERIFY_AUTO;
    cfg->verify_share = TM_VERIFY_SHARE_DEFAULT;
    cfg->probe_cache = true;
}

static void strlist_clear(topoml_context *ctx, tm_strlist *l)
{
    for (size_t i = 0; i < l->count; i++)
        tm_free(ctx, l->items[i]);
    tm_free(ctx, l->items);
    l->items = NULL;
    l->count = 0;
}

void tm_config_clear(topoml_context *ctx, tm_config *cfg)
{
    tm_free(ctx, cfg->source);
    strlist_clear(ctx, &cfg->plugin_paths);
    strlist_clear(ctx, &cfg->prefer);
    strlist_clear(ctx, &cfg->enable);
    strlist_clear(ctx, &cfg->disable);
    tm_free(ctx, cfg->cache_dir);
    tm_free(ctx, cfg->plugin_host);
    tm_config_defaults(cfg);
}

bool tm_strlist_has(const tm_strlist *list, const char *s)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->items[i], s) == 0)
            return true;
    return false;
}

/* The one reader of sizes, for the configuration and the command lines:
 * "123", "64MiB", "2G", "1.5GB", "unlimited". A single letter (K, M, G, T)
 * and the IEC names (KiB ...) are powers of 1024; KB, MB, GB, TB are powers
 * of 1000. Decimal digits only: no sign, exponent, hexadecimal, "inf" or
 * "nan" (strtod's grammar took "0x10", "1e-300" and "-0"); a fraction must
 * come with a unit and give whole bytes ("0.5" or "0.3K" is an error, not 0).
 * "unlimited" and "0" are 0: no limit. */
int topoml_parse_size(const char *s, uint64_t *out)
{
    if (!s || !out)
        return TOPOML_E_INVALID;
    if (strcasecmp(s, "unlimited") == 0) {
        *out = 0;
        return TOPOML_OK;
    }
    const char *p = s;
    uint64_t whole = 0, frac = 0, frac_scale = 1;
    bool overflow = false;
    if (*p < '0' || *p > '9')
        return TOPOML_E_INVALID;
    for (; *p >= '0' && *p <= '9'; p++)
        overflow |=
            !tm_mul_u64(whole, 10, &whole) || !tm_add_u64(whole, (uint64_t)(*p - '0'), &whole);
    bool has_frac = *p == '.';
    if (has_frac) {
        p++;
        if (*p < '0' || *p > '9')
            return TOPOML_E_INVALID;
        for (int digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits == 18)
                return TOPOML_E_INVALID; /* more digits than any unit can use */
            frac = frac * 10 + (uint64_t)(*p - '0');
            frac_scale *= 10;
        }
    }
    while (*p == ' ')
        p++;
    uint64_t mult = 1;
    if (*p) {
        static const struct {
            const char *suffix;
            uint64_t mult;
        } units[] = {{"B", 1},
                     {"K", UINT64_C(1) << 10},
                     {"KiB", UINT64_C(1) << 10},
                     {"KB", UINT64_C(1000)},
                     {"M", UINT64_C(1) << 20},
                     {"MiB", UINT64_C(1) << 20},
                     {"MB", UINT64_C(1000000)},
                     {"G", UINT64_C(1) << 30},
                     {"GiB", UINT64_C(1) << 30},
                     {"GB", UINT64_C(1000000000)},
                     {"T", UINT64_C(1) << 40},
                     {"TiB", UINT64_C(1) << 40},
                     {"TB", UINT64_C(1000000000000)}};
        size_t i;
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcasecmp(p, units[i].suffix) == 0)
                break;
        if (i == sizeof units / sizeof units[0])
            return TOPOML_E_INVALID;
        mult = units[i].mult;
    }
    if (has_frac && mult == 1)
        return TOPOML_E_INVALID; /* a fraction of a byte */
    /* frac / frac_scale of a unit must be whole bytes: frac * mult is a
     * multiple of frac_scale (128-bit: frac < 10^18, mult <= 2^40). */
    unsigned __int128 part = (unsigned __int128)frac * mult;
    if (part % frac_scale != 0)
        return TOPOML_E_INVALID;
    uint64_t bytes;
    if (overflow || !tm_mul_u64(whole, mult, &bytes) ||
        !tm_add_u64(bytes, (uint64_t)(part / frac_scale), &bytes))
        return TOPOML_E_OVERFLOW;
    *out = bytes;
    return TOPOML_OK;
}

typedef struct parse_state {
    topoml_context *ctx;
    const char *path;
    yaml_document_t *doc;
} parse_state;

static int node_error(parse_state *ps, const yaml_node_t *n, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return tm_error(ps->ctx, TOPOML_E_CONFIG, "%s:%zu:%zu: %s", ps->path,
                    n->start_mark.line + 1, n->start_mark.column + 1, msg);
}

static int get_scalar(parse_state *ps, const yaml_node_t *n, const char *key, const char **out)
{
    if (n->type != YAML_SCALAR_NODE)
        return node_error(ps, n, "'%s' must be a single value", key);
    *out = (const char *)n->data.scalar.value;
    return TOPOML_OK;
}

static int get_strlist(parse_state *ps, const yaml_node_t *n, const char *key, tm_strlist *l)
{
    strlist_clear(ps->ctx, l);
    if (n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0)
        return TOPOML_OK; /* `key:` with nothing is an empty list */
    if (n->type != YAML_SEQUENCE_NODE)
        return node_error(ps, n, "'%s' must be a list", key);
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    l->items = tm_calloc(ps->ctx, count ? count : 1, sizeof *l->items);
    if (!l->items)
        return tm_nomem(ps->ctx, count * sizeof *l->items);
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(ps->doc, n->data.sequence.items.start[i]);
        if (!item || item->type != YAML_SCALAR_NODE)
            return node_error(ps, item ? item : n, "every item of '%s' must be a string", key);
        l->items[i] = tm_strdup(ps->ctx, (const char *)item->data.scalar.value);
        if (!l->items[i])
            return tm_nomem(ps->ctx, item->data.scalar.length + 1);
        l->count = i + 1;
    }
    return TOPOML_OK;
}

static int parse_log_level(const char *s)
{
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* A key given twice is an error at its second place, naming the first: YAML
 * parsers disagree on which one wins, and here the loser could be the gate. */
static int check_not_repeated(parse_state *ps, const yaml_node_t *root, const yaml_node_pair_t *p,
                              const yaml_node_t *k)
{
    for (const yaml_node_pair_t *q = root->data.mapping.pairs.start; q < p; q++) {
        const yaml_node_t *e = yaml_document_get_node(ps->doc, q->key);
        if (e && e->type == YAML_SCALAR_NODE && e->data.scalar.length == k->data.scalar.length &&
            memcmp(e->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "key '%.64s' given twice (first at line %zu, column %zu)",
                     (const char *)k->data.scalar.value, e->start_mark.line + 1,
                     e->start_mark.column + 1);
            return node_error(ps, k, "%s", msg);
        }
    }
    return TOPOML_OK;
}

static int apply_key(parse_state *ps, const char *key, const yaml_node_t *v, tm_config *cfg)
{
    const char *s = NULL;
    int rc;
    if (strcmp(key, "plugin_paths") == 0)
        return get_strlist(ps, v, key, &cfg->plugin_paths);
    if (strcmp(key, "prefer") == 0)
        return get_strlist(ps, v, key, &cfg->prefer);
    if (strcmp(key, "enable") == 0)
        return get_strlist(ps, v, key, &cfg->enable);
    if (strcmp(key, "disable") == 0)
        return get_strlist(ps, v, key, &cfg->disable);
    if ((rc = get_scalar(ps, v, key, &s)) != TOPOML_OK)
        return rc;
    if (strcmp(key, "gate") == 0) {
        if (strcmp(s, "auto") == 0)
            cfg->gate = TM_GATE_AUTO;
        else if (strcmp(s, "strict") == 0)
            cfg->gate = TM_GATE_STRICT;
        else if (strcmp(s, "off") == 0)
            cfg->gate = TM_GATE_OFF;
        else
            return node_error(ps, v, "gate must be strict, auto or off, not '%s'", s);
        return TOPOML_OK;
    }
    if (strcmp(key, "max_memory") == 0) {
        if (topoml_parse_size(s, &cfg->max_memory) != TOPOML_OK)
            return node_error(ps, v,
                              "max_memory must be a size such as 4GiB or 512MB, or unlimited, "
                              "not '%s'",
                              s);
        cfg->max_memory_set = true;
        return TOPOML_OK;
    }
    if (strcmp(key, "cache_dir") == 0) {
        tm_free(ps->ctx, cfg->cache_dir);
        cfg->cache_dir = tm_strdup(ps->ctx, s);
        return cfg->cache_dir ? TOPOML_OK : tm_nomem(ps->ctx, strlen(s) + 1);
    }
    if (strcmp(key, "plugin_host") == 0) {
        if (s[0] != '/')
            return node_error(ps, v, "plugin_host must be an absolute path, not '%s'", s);
        tm_free(ps->ctx, cfg->plugin_host);
        cfg->plugin_host = tm_strdup(ps->ctx, s);
        return cfg->plugin_host ? TOPOML_OK : tm_nomem(ps->ctx, strlen(s) + 1);
    }
    if (strcmp(key, "log_level") == 0) {
        cfg->log_level = parse_log_level(s);
        if (cfg->log_level < 0)
            return node_error(ps, v, "log_level must be error, warn, info or debug, not '%s'", s);
        return TOPOML_OK;
    }
    if (strcmp(key, "isolation") == 0) {
        if (strcmp(s, "auto") == 0)
            cfg->isolation = TM_ISOLATION_AUTO;
        else if (strcmp(s, "process") == 0)
            cfg->isolation = TM_ISOLATION_PROCESS;
        else if (strcmp(s, "none") == 0)
            cfg->isolation = TM_ISOLATION_NONE;
        else
            return node_error(ps, v, "isolation must be auto, process or none, not '%s'", s);
        return TOPOML_OK;
    }
    if (strcmp(key, "isolation_timeout") == 0) {
        char *end;
        errno = 0;
        double t = strtod(s, &end);
        if (end == s || *end || errno || !(t > 0) || t > 1e6)
            return node_error(ps, v,
                              "isolation_timeout must be a number of seconds > 0, not '%s'", s);
        cfg->isolation_timeout = t;
        return TOPOML_OK;
    }
    if (strcmp(key, "device") == 0) {
        char *end;
        errno = 0;
        long d = strtol(s, &end, 10);
        if (*s == '\0' || *end || errno || d < -1 || d > INT_MAX)
            return node_error(ps, v, "device must be an integer >= -1, not '%s'", s);
        cfg->device = (int)d;
        return TOPOML_OK;
    }
    if (strcmp(key, "threads") == 0) {
        char *end;
        errno = 0;
        unsigned long t = strtoul(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno || t > 4096)
            return node_error(ps, v, "threads must be an integer from 0 to 4096, not '%s'", s);
        cfg->threads = (uint32_t)t;
        return TOPOML_OK;
    }
    if (strcmp(key, "select") == 0) {
        if (strcmp(s, "order") != 0 && strcmp(s, "cost") != 0)
            return node_error(ps, v, "select must be order or cost, not '%s'", s);
        cfg->select_cost = strcmp(s, "cost") == 0;
        return TOPOML_OK;
    }
    if (strcmp(key, "verify") == 0) {
        static const char *modes[] = {"auto", "always", "checks", "off"};
        for (int m = 0; m < 4; m++)
            if (strcmp(s, modes[m]) == 0) {
                cfg->verify = m;
                return TOPOML_OK;
            }
        return node_error(ps, v, "verify must be auto, always, checks or off, not '%s'", s);
    }
    if (strcmp(key, "verify_share") == 0) {
        char *end;
        errno = 0;
        double share = strtod(s, &end);
        if (*s == '\0' || *end || errno || !(share >= 0 && share <= 1))
            return node_error(ps, v, "verify_share must be a number from 0 to 1, not '%s'", s);
        cfg->verify_share = share;
        return TOPOML_OK;
    }
    if (strcmp(key, "probe_cache") == 0) {
        if (strcmp(s, "true") != 0 && strcmp(s, "false") != 0)
            return node_error(ps, v, "probe_cache must be true or false, not '%s'", s);
        cfg->probe_cache = strcmp(s, "true") == 0;
        return TOPOML_OK;
    }
    return TOPOML_E_NOT_FOUND;
}

/* Read the whole file into a buffer of ours (TOPOML_OK), refusing one larger
 * than TM_CONFIG_MAX_BYTES. */
static int read_whole(topoml_context *ctx, const char *path, unsigned char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tm_error(ctx, TOPOML_E_CONFIG, "%s: cannot open configuration: %s", path,
                        strerror(errno));
    struct stat st;
    /* Reads stop at TM_CONFIG_MAX_BYTES, so a device or a pipe (/dev/null,
     * a shell's <(...)) is read like a file; only a folder is refused. */
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        close(fd);
        return tm_error(ctx, TOPOML_E_CONFIG, "%s: configuration is a folder, not a file", path);
    }
    unsigned char *buf = tm_alloc(ctx, TM_CONFIG_MAX_BYTES + 1);
    if (!buf) {
        close(fd);
        return tm_nomem(ctx, TM_CONFIG_MAX_BYTES + 1);
    }
    size_t n = 0;
    while (n <= TM_CONFIG_MAX_BYTES) {
        ssize_t got = read(fd, buf + n, TM_CONFIG_MAX_BYTES + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            tm_free(ctx, buf);
            return tm_error(ctx, TOPOML_E_CONFIG, "%s: cannot read configuration: %s", path,
                            strerror(e));
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (n > TM_CONFIG_MAX_BYTES) {
        tm_free(ctx, buf);
        return tm_error(ctx, TOPOML_E_CONFIG,
                        "%s: configuration larger than %u bytes; a topoml.yaml is a few lines",
                        path, (unsigned)TM_CONFIG_MAX_BYTES);
    }
    *out = buf;
    *len = n;
    return TOPOML_OK;
}

/* One pass over the event stream: syntax errors, nesting deeper than
 * TM_CONFIG_MAX_DEPTH, and a second document are refused with their
 * position. Cheap (no tree is built), so it runs before yaml_parser_load. */
static int check_shape(topoml_context *ctx, const char *path, const unsigned char *text,
                       size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return tm_nomem(ctx, sizeof parser);
    yaml_parser_set_input_string(&parser, text, len);
    int rc = TOPOML_OK, depth = 0, documents = 0;
    for (bool done = false; !done && rc == TOPOML_OK;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = tm_error(ctx, TOPOML_E_CONFIG, "%s:%zu:%zu: %s", path,
                          parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                          parser.problem ? parser.problem : "YAML syntax error");
            break;
        }
        const size_t line = ev.start_mark.line + 1, column = ev.start_mark.column + 1;
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++documents > 1)
                rc = tm_error(ctx, TOPOML_E_CONFIG,
                              "%s:%zu:%zu: a second YAML document; the configuration is one "
                              "mapping in one document",
                              path, line, column);
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > TM_CONFIG_MAX_DEPTH)
                rc = tm_error(ctx, TOPOML_E_CONFIG,
                              "%s:%zu:%zu: nested deeper than %d levels; no key of the "
                              "configuration needs more than 2",
                              path, line, column, TM_CONFIG_MAX_DEPTH);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: depth--; break;
        case YAML_ALIAS_EVENT:
            rc = tm_error(ctx, TOPOML_E_CONFIG,
                          "%s:%zu:%zu: aliases (*name) are not allowed in the configuration",
                          path, line, column);
            break;
        case YAML_STREAM_END_EVENT: done = true; break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int tm_config_load(topoml_context *ctx, const char *path, tm_config *cfg)
{
    unsigned char *text = NULL;
    size_t len = 0;
    int rc = read_whole(ctx, path, &text, &len);
    if (rc != TOPOML_OK)
        return rc;
    if ((rc = check_shape(ctx, path, text, len)) != TOPOML_OK) {
        tm_free(ctx, text);
        return rc;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        tm_free(ctx, text);
        return tm_nomem(ctx, sizeof parser);
    }
    yaml_parser_set_input_string(&parser, text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = tm_error(ctx, TOPOML_E_CONFIG, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1,
                      parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        tm_free(ctx, text);
        return rc;
    }
    parse_state ps = {ctx, path, &doc};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
        if (root->type != YAML_MAPPING_NODE) {
            rc = node_error(&ps, root, "%s", "the configuration must be a mapping of keys");
        } else {
            for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
                 rc == TOPOML_OK && p < root->data.mapping.pairs.top; p++) {
                yaml_node_t *k = yaml_document_get_node(&doc, p->key);
                yaml_node_t *v = yaml_document_get_node(&doc, p->value);
                if (!k || !v || k->type != YAML_SCALAR_NODE) {
                    rc = node_error(&ps, k ? k : root, "%s", "keys must be plain strings");
                    break;
                }
                const char *key = (const char *)k->data.scalar.value;
                rc = check_not_repeated(&ps, root, p, k);
                if (rc == TOPOML_OK)
                    rc = apply_key(&ps, key, v, cfg);
                if (rc == TOPOML_E_NOT_FOUND)
                    rc = node_error(&ps, k,
                                    "unknown key '%s' (known: plugin_paths, prefer, enable, "
                                    "disable, gate, max_memory, cache_dir, log_level, device, "
                                    "threads, isolation, isolation_timeout, verify, verify_share, "
                                    "probe_cache, plugin_host, select)",
                                    key);
            }
        }
    }
    if (rc == TOPOML_OK) {
        tm_free(ctx, cfg->source);
        cfg->source = tm_strdup(ctx, path);
        if (!cfg->source)
            rc = tm_nomem(ctx, strlen(path) + 1);
    }
    if (rc == TOPOML_OK && cfg->log_level >= 0)
        ctx->log_level = cfg->log_level;
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    tm_free(ctx, text);
    return rc;
}
