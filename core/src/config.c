/*
 * config.c — topoml.yaml: the one place configuration is read (libyaml).
 *
 * Every key is documented in topoml.yaml.example. Unknown keys and values of
 * the wrong type are errors that name "file:line:column"; a context works
 * with no file at all (tm_config_defaults).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "internal.h"

void tm_config_defaults(tm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->gate = TM_GATE_AUTO;
    cfg->log_level = -1;
    cfg->device = -1;
    cfg->verify = TM_VERIFY_AUTO;
    cfg->verify_share = TM_VERIFY_SHARE_DEFAULT;
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
 * "123", "64MiB", "2G", "1.5GB". A single letter (K, M, G, T) and the IEC
 * names (KiB ...) are powers of 1024; KB, MB, GB, TB are powers of 1000. */
int topoml_parse_size(const char *s, uint64_t *out)
{
    if (!s || !out)
        return TOPOML_E_INVALID;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0))
        return TOPOML_E_INVALID;
    while (*end == ' ')
        end++;
    double mult = 1;
    if (*end) {
        static const struct {
            const char *suffix;
            double mult;
        } units[] = {{"B", 1},
                     {"K", 1024.0},          {"KiB", 1024.0},          {"KB", 1e3},
                     {"M", 1048576.0},       {"MiB", 1048576.0},       {"MB", 1e6},
                     {"G", 1073741824.0},    {"GiB", 1073741824.0},    {"GB", 1e9},
                     {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12}};
        size_t i;
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcasecmp(end, units[i].suffix) == 0)
                break;
        if (i == sizeof units / sizeof units[0])
            return TOPOML_E_INVALID;
        mult = units[i].mult;
    }
    v *= mult;
    if (v >= 18446744073709551616.0)
        return TOPOML_E_OVERFLOW;
    *out = (uint64_t)v;
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
            return node_error(ps, v, "max_memory must be a size such as 4GiB or 512MB, not '%s'",
                              s);
        return TOPOML_OK;
    }
    if (strcmp(key, "cache_dir") == 0) {
        tm_free(ps->ctx, cfg->cache_dir);
        cfg->cache_dir = tm_strdup(ps->ctx, s);
        return cfg->cache_dir ? TOPOML_OK : tm_nomem(ps->ctx, strlen(s) + 1);
    }
    if (strcmp(key, "log_level") == 0) {
        cfg->log_level = parse_log_level(s);
        if (cfg->log_level < 0)
            return node_error(ps, v, "log_level must be error, warn, info or debug, not '%s'", s);
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
    return TOPOML_E_NOT_FOUND;
}

int tm_config_load(topoml_context *ctx, const char *path, tm_config *cfg)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return tm_error(ctx, TOPOML_E_CONFIG, "%s: cannot open configuration: %s", path,
                        strerror(errno));
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return tm_nomem(ctx, sizeof parser);
    }
    yaml_parser_set_input_file(&parser, f);
    int rc = TOPOML_OK;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = tm_error(ctx, TOPOML_E_CONFIG, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1,
                      parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        fclose(f);
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
                rc = apply_key(&ps, key, v, cfg);
                if (rc == TOPOML_E_NOT_FOUND)
                    rc = node_error(&ps, k,
                                    "unknown key '%s' (known: plugin_paths, prefer, enable, "
                                    "disable, gate, max_memory, cache_dir, log_level, device, "
                                    "verify, verify_share)",
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
    fclose(f);
    return rc;
}
