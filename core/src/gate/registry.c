/*
 * registry.c — the backends a context knows, what each can do, and the one
 * place that decides which backend runs an op (tm_select).
 *
 * The built-in scalar reference is always entry 0 and always enabled. Plugin
 * files follow in discovery order (loader.c): found and checked at context
 * creation, but probed only when something first needs to know a plugin
 * (tm_registry_probe): then every one at once, each in a child process
 * (isolate_probe.c) or from the report of an earlier one kept in the cache
 * folder (probe_cache.c), and given a gate state (gate.c). A call that names the
 * built-in reference, or whose `prefer` list reaches it first, never needs
 * a plugin, so it starts no probe process at all. Only a plugin the gate
 * enables is loaded into this process (tm_backend_load), right after the
 * probes or, for certification on first use, when tm_select first wants it.
 * A call that names a plugin (topoml_use_backend, an entry of `prefer`)
 * probes the file named for it first, topoml-backend-NAME.so, and the
 * others only when that file does not give the backend NAME
 * (tm_registry_probe_name): naming `threads` does not start CUDA in a probe
 * of the cuda plugin.
 * Invariant: an ENABLED backend has its vtable (b->vt). Rejected files stay
 * in the list so that `topoml backends` can say why. Outside
 * probe_files, every probed backend is brought up (has its gate state).
 */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/certificate.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sandbox.h"
#include "scalar.h"

static int set_caps(topoml_context *ctx, tm_backend *b)
{
    const topoml_capability_v1 *caps = NULL;
    uint32_t n = 0;
    int rc = b->vt->capabilities(b->state, &caps, &n);
    if (rc != TOPOML_OK)
        return rc;
    if (n && !caps)
        return TOPOML_E_PLUGIN;
    for (uint32_t i = 0; i < n; i++) {
        /* Records are read with sizeof(v1) strides: a shorter record would
         * put every later one at the wrong address. */
        if (caps[i].struct_size != sizeof(topoml_capability_v1)) {
            tm_log(ctx, TOPOML_LOG_WARN, "backend %s: capability record %u has size %u, want %zu",
                   b->vt->name, i, caps[i].struct_size, sizeof(topoml_capability_v1));
            return TOPOML_E_PLUGIN;
        }
        if (caps[i].op >= TOPOML_OP_COUNT)
            return TOPOML_E_PLUGIN;
    }
    b->caps = caps;
    b->n_caps = n;
    return TOPOML_OK;
}

uint32_t tm_op_mask(const topoml_backend_v1 *vt)
{
    return (vt->distances ? 1u << TOPOML_OP_DISTANCES : 0) |
           (vt->edges ? 1u << TOPOML_OP_EDGES : 0) | (vt->h0 ? 1u << TOPOML_OP_H0 : 0) |
           (vt->rips ? 1u << TOPOML_OP_RIPS : 0) | (vt->image ? 1u << TOPOML_OP_IMAGE : 0);
}

/* The op pointers and selection mode of a loaded vtable, as the registry
 * keeps them for backends that are not loaded (yet). */
static void note_vtable(tm_backend *b)
{
    b->op_mask = tm_op_mask(b->vt);
    b->selection = b->vt->selection;
}

int tm_set_identity(topoml_context *ctx, tm_backend *b, const char *name, const char *version,
                    const char *vendor, const char *description)
{
    b->name = tm_strdup(ctx, name);
    b->version = tm_strdup(ctx, version ? version : "");
    b->vendor = tm_strdup(ctx, vendor ? vendor : "");
    b->description = tm_strdup(ctx, description ? description : "");
    if (!b->name || !b->version || !b->vendor || !b->description)
        return tm_nomem(ctx, 64);
    return TOPOML_OK;
}

int tm_backend_start(topoml_context *ctx, tm_backend *b)
{
    /* What starting costs, per step, for `--verbose --verbose`: a plugin
     * that starts a device in its probe shows it here. */
    double t0 = tm_now();
    if (b->vt->create) {
        int rc = b->vt->create(&ctx->host, &b->state);
        if (rc != TOPOML_OK) {
            b->gate_state = TOPOML_GATE_REJECTED;
            snprintf(b->gate_reason, sizeof b->gate_reason, "create failed: %s",
                     topoml_strerror(rc));
            return rc;
        }
    }
    b->created = true;
    double t1 = tm_now();
    b->probe_message[0] = '\0';
    b->probe_status = b->vt->probe(b->state, b->probe_message, sizeof b->probe_message);
    b->probe_message[sizeof b->probe_message - 1] = '\0';
    if (b->probe_status == TOPOML_OK && !b->probe_message[0])
        snprintf(b->probe_message, sizeof b->probe_message, "ok");
    double t2 = tm_now();
    if (b->probe_status != TOPOML_OK)
        return b->probe_status; /* the gate calls it unsupported */
    int rc = set_caps(ctx, b);
    tm_log(ctx, TOPOML_LOG_DEBUG,
           "backend '%s' started: create %.4f s, probe %.4f s, capabilities %.4f s", b->vt->name,
           t1 - t0, t2 - t1, tm_now() - t2);
    if (rc != TOPOML_OK) {
        b->gate_state = TOPOML_GATE_REJECTED;
        snprintf(b->gate_reason, sizeof b->gate_reason, "bad capability records: %s",
                 topoml_strerror(rc));
    }
    return rc;
}

bool tm_backend_load(topoml_context *ctx, tm_backend *b)
{
    if (b->vt)
        return true;
    if (tm_isolation_wanted(ctx, b)) {
        /* Not loaded here at all: a proxy sends its ops to a helper. */
        if (tm_isolation_attach(ctx, b) != TOPOML_OK) {
            b->gate_state = TOPOML_GATE_REJECTED;
            snprintf(b->gate_reason, sizeof b->gate_reason, "out of memory");
            return false;
        }
        tm_log(ctx, TOPOML_LOG_INFO, "plugin %s: backend '%s' runs in its own process", b->path,
               b->name);
        return true;
    }
    /* What the probe process saw (now, or in an earlier process when the
     * report came from the cache), to hold the plugin to it: its name, ABI
     * and devices (what certificates bind, gate.c). */
    char probed_name[64], probed_devices[512], probed_sha[65];
    snprintf(probed_name, sizeof probed_name, "%s", b->name ? b->name : "");
    const uint32_t probed_abi = b->abi_version;
    tm_cert_devices(b->caps, b->n_caps, probed_devices, probed_sha);
    /* A report from the cache is dropped while the plugin starts here: if
     * its create or probe takes this process down, the next process probes
     * it in a child again instead of repeating the crash. It is put back
     * once the plugin has started and agreed with it. */
    if (b->cached_report)
        tm_probe_cache_forget(ctx, b);
    double t0 = tm_now();
    tm_loader_negotiate(ctx, b);
    if (b->gate_state != TOPOML_GATE_REJECTED)
        tm_log(ctx, TOPOML_LOG_DEBUG, "plugin %s: loaded and negotiated in %.4f s", b->path,
               tm_now() - t0);
    if (b->gate_state != TOPOML_GATE_REJECTED && tm_backend_start(ctx, b) != TOPOML_OK &&
        b->gate_state != TOPOML_GATE_REJECTED) {
        b->gate_state = TOPOML_GATE_REJECTED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "its probe failed in this process (%.200s) after it passed in the probe "
                 "process",
                 b->probe_message);
    }
    if (b->gate_state != TOPOML_GATE_REJECTED &&
        (strcmp(b->vt->name, probed_name) != 0 || b->abi_version != probed_abi)) {
        b->gate_state = TOPOML_GATE_REJECTED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "it calls itself '%.48s' (ABI %u) in this process but '%.48s' (ABI %u) in the "
                 "probe process",
                 b->vt->name, b->abi_version, probed_name, probed_abi);
    }
    if (b->gate_state != TOPOML_GATE_REJECTED) {
        char devices[512], sha[65];
        tm_cert_devices(b->caps, b->n_caps, devices, sha);
        if (strcmp(sha, probed_sha) != 0) {
            b->gate_state = TOPOML_GATE_REJECTED;
            snprintf(b->gate_reason, sizeof b->gate_reason,
                     "it reports the devices '%.200s' in this process but '%.200s' in the probe "
                     "process",
                     devices, probed_devices);
        }
    }
    if (b->gate_state == TOPOML_GATE_REJECTED) {
        /* The next process probes it afresh. */
        tm_probe_cache_forget(ctx, b);
        tm_log(ctx, TOPOML_LOG_WARN, "plugin %s rejected while loading it: %s", b->path,
               b->gate_reason);
        return false;
    }
    if (b->cached_report) {
        tm_probe_cache_store(ctx, b, b->cached_report, b->cached_report_len);
        tm_free(ctx, b->cached_report);
        b->cached_report = NULL;
    }
    note_vtable(b);
    tm_log(ctx, TOPOML_LOG_INFO, "plugin %s: backend '%s' loaded (%s)", b->path, b->name,
           b->gate_reason);
    return true;
}

/* Give a backend its gate state: the built-in reference is created and
 * probed here; a plugin was probed in a child process (isolate_probe.c) and
 * is loaded into this process only if the gate enables it. Returns
 * TOPOML_E_NOMEM only when the built-in backend's identity could not be
 * copied; every other problem is recorded in the backend's gate state. */
static int bring_up(topoml_context *ctx, tm_backend *b)
{
    if (!b->path) {
        const topoml_backend_v1 *vt = b->vt;
        if (tm_set_identity(ctx, b, vt->name, vt->version, vt->vendor, vt->description) !=
            TOPOML_OK) {
            b->gate_state = TOPOML_GATE_REJECTED;
            snprintf(b->gate_reason, sizeof b->gate_reason, "out of memory");
            return TOPOML_E_NOMEM;
        }
        note_vtable(b);
        tm_backend_start(ctx, b);
        if (b->gate_state != TOPOML_GATE_REJECTED)
            tm_gate_apply(ctx, b);
        return TOPOML_OK;
    }
    /* A plugin from another folder that calls itself like a shipped one
     * (from a file of another name) is refused as decided_by_file_name
     * refuses one by its file name. */
    if (!b->in_default_folder && tm_is_shipped_name(b->name) && tm_loader_own_folder()) {
        b->gate_state = TOPOML_GATE_REJECTED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "refused: the name '%.48s' belongs to the plugin shipped with topoml, which "
                 "only topoml's own plugin folder may hold; rename this backend",
                 b->name);
        tm_log(ctx, TOPOML_LOG_WARN, "plugin %s %s", b->path, b->gate_reason);
        return TOPOML_OK;
    }
    /* A backend of the same name brought up before runs instead: the
     * built-in reference, then the files named for the name they give, then
     * the others, each in discovery order (probe_files). */
    for (tm_backend *o = ctx->backends; o < ctx->backends + ctx->n_backends; o++) {
        if (o != b && o->brought_up && !o->duplicate && o->name && strcmp(o->name, b->name) == 0 &&
            o->gate_state != TOPOML_GATE_REJECTED) {
            b->duplicate = true;
            snprintf(b->gate_reason, sizeof b->gate_reason,
                     "duplicate of backend '%s' from %s, which comes first and runs instead",
                     b->name, o->path ? o->path : "libtopoml (built in)");
            tm_log(ctx, TOPOML_LOG_INFO, "%s: %s", b->path, b->gate_reason);
            break;
        }
    }
    if (b->duplicate) {
        b->gate_state = TOPOML_GATE_DISABLED;
        return TOPOML_OK;
    }
    tm_gate_apply(ctx, b);
    if (b->gate_state == TOPOML_GATE_ENABLED)
        tm_backend_load(ctx, b);
    return TOPOML_OK;
}

int tm_registry_init(topoml_context *ctx)
{
    ctx->backends = tm_calloc(ctx, 1, sizeof *ctx->backends);
    if (!ctx->backends)
        return tm_nomem(ctx, sizeof *ctx->backends);
    tm_backend *s = &ctx->backends[0];
    ctx->n_backends = 1;
    s->fd = -1;
    s->abi_version = TOPOML_ABI_VERSION;
    s->vt = topoml_scalar_backend();
    s->brought_up = s->probed_here = true;
    if (bring_up(ctx, s) != TOPOML_OK)
        return tm_nomem(ctx, 64);
    if (s->gate_state != TOPOML_GATE_ENABLED)
        return tm_error(ctx, TOPOML_E_INTERNAL, "the built-in scalar backend failed: %s",
                        s->gate_reason);

    /* Check the files (no plugin code runs); probing waits for a need. */
    tm_loader_discover(ctx);
    return TOPOML_OK;
}

/* Probe the plugin files not probed yet — those named for backend `named`
 * (topoml-backend-<named>.so), or all when `named` is NULL — in child
 * processes, all at once; then let the gate decide, and load here only what
 * it enables. Of several files that give one backend name, the one brought
 * up first runs and the others are its duplicates (bring_up): the files
 * named for the name they give come up first, then (only when every file is
 * probed, named NULL) the others, each group in discovery order. A call that
 * names a backend and a listing of every backend therefore agree on which
 * file runs. Returns whether a probed file was left without its gate state
 * (it gives a name other than its file's: only a probe of every file can
 * tell whether it runs). */
/* Decisions made from the file's name alone, before any of its code runs
 * (not even its constructors in a probe process): `disable: [NAME]` keeps
 * topoml-backend-NAME.so closed, and a file from another folder than
 * topoml's own (where that folder exists) cannot take the name of a plugin
 * shipped with topoml. true
 * when `b` is decided (and brought up) here. */
static bool decided_by_file_name(topoml_context *ctx, tm_backend *b)
{
    char name[64];
    if (!b->path || !tm_loader_file_name(b->path, name, sizeof name))
        return false;
    const bool off = tm_strlist_has(&ctx->config.disable, name);
    const bool impostor =
        !b->in_default_folder && tm_is_shipped_name(name) && tm_loader_own_folder();
    if (!off && !impostor)
        return false;
    if (!b->name && (b->name = tm_strdup(ctx, name)) == NULL)
        ctx->errmsg[0] = '\0';
    b->probed_here = b->brought_up = true;
    b->probe_status = TOPOML_E_NOT_FOUND;
    snprintf(b->probe_message, sizeof b->probe_message, "not probed");
    if (impostor) {
        b->gate_state = TOPOML_GATE_REJECTED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "refused: the name '%s' belongs to the plugin shipped with topoml, which only "
                 "topoml's own plugin folder may hold; rename this file (and the backend)",
                 name);
        tm_log(ctx, TOPOML_LOG_WARN, "plugin %s %s", b->path, b->gate_reason);
    } else {
        b->gate_state = TOPOML_GATE_DISABLED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "disabled by configuration (by its file name: none of its code runs)");
    }
    return true;
}

static bool probe_files(topoml_context *ctx, const char *named)
{
    bool any = false;
    for (uint32_t i = 1; i < ctx->n_backends; i++) {
        tm_backend *b = &ctx->backends[i];
        if (!b->probed_here && (!named || tm_loader_file_is_for(b->path, named)) &&
            b->gate_state != TOPOML_GATE_REJECTED && decided_by_file_name(ctx, b))
            continue;
        if (!b->probed_here && (!named || tm_loader_file_is_for(b->path, named))) {
            tm_loader_hash(ctx, b); /* read only now: a call on the reference reads no plugin */
            b->probe_queued = b->probed_here = true;
            any = true;
        }
    }
    if (any)
        tm_probe_all(ctx);
    bool left = false;
    for (int group = 0; group < 2; group++)
        for (uint32_t i = 1; i < ctx->n_backends; i++) {
            tm_backend *b = &ctx->backends[i];
            if (!b->probed_here || b->brought_up)
                continue;
            if (group == 0 && !(b->name && tm_loader_file_is_for(b->path, b->name)))
                continue;
            if (group == 1 && named) {
                left = true;
                continue;
            }
            b->brought_up = true;
            if (b->gate_state != TOPOML_GATE_REJECTED)
                bring_up(ctx, b);
        }
    return left;
}

void tm_registry_probe(topoml_context *ctx)
{
    if (ctx->plugins_probed)
        return;
    ctx->plugins_probed = true;
    probe_files(ctx, NULL);
}

/* Is `name` the built-in reference's? No plugin can stand for that name (a
 * plugin that takes it is a duplicate, DISABLED), so nothing needs probing
 * to find it. */
static bool is_reference(const topoml_context *ctx, const char *name)
{
    return strcmp(ctx->backends[0].name, name) == 0;
}

/* Is a plugin that is brought up, and not rejected, `name`? */
static bool plugin_named(const topoml_context *ctx, const char *name)
{
    for (uint32_t i = 1; i < ctx->n_backends; i++) {
        const tm_backend *b = &ctx->backends[i];
        if (b->brought_up && b->name && strcmp(b->name, name) == 0 &&
            b->gate_state != TOPOML_GATE_REJECTED)
            return true;
    }
    return false;
}

void tm_registry_probe_name(topoml_context *ctx, const char *name)
{
    if (ctx->plugins_probed || is_reference(ctx, name) || plugin_named(ctx, name))
        return;
    /* The file named for it first: usually it is the backend. A plugin may
     * give another name than its file's, so without a match every file is
     * probed. */
    if (probe_files(ctx, name) || !plugin_named(ctx, name))
        tm_registry_probe(ctx);
}

void tm_registry_free(topoml_context *ctx)
{
    for (uint32_t i = 0; i < ctx->n_backends; i++) {
        tm_backend *b = &ctx->backends[i];
        if (b->isolated)
            tm_isolation_detach(ctx, b);
        else if (b->created && b->vt && b->vt->destroy)
            b->vt->destroy(b->state);
        if (b->dl)
            dlclose(b->dl);
        if (b->path && b->fd >= 0)
            close(b->fd);
        tm_free(ctx, b->probed);
        tm_free(ctx, b->cached_report);
        tm_free(ctx, b->envelope);
        tm_free(ctx, b->cost);
        tm_free(ctx, b->name);
        tm_free(ctx, b->version);
        tm_free(ctx, b->vendor);
        tm_free(ctx, b->description);
        tm_free(ctx, b->path);
    }
    tm_free(ctx, ctx->backends);
    ctx->backends = NULL;
    ctx->n_backends = 0;
}

uint32_t topoml_backend_count(const topoml_context *ctx)
{
    return ctx ? ctx->n_backends : 0;
}

/* topoml_backend_info as 0.1 knew it: callers built then pass this size. */
#define TM_INFO_V1_SIZE (offsetof(topoml_backend_info, caps) + sizeof(const topoml_capability_v1 *))

/* Fill the caller's topoml_backend_info (as much as its struct_size has
 * room for) from backend b. */
static void fill_info(const topoml_context *ctx, const tm_backend *b, topoml_backend_info *out)
{
    const uint32_t size = out->struct_size < sizeof(topoml_backend_info)
                              ? out->struct_size
                              : (uint32_t)sizeof(topoml_backend_info);
    topoml_backend_info full;
    topoml_backend_info *info = &full;
    memset(info, 0, sizeof *info);
    info->struct_size = size;
    info->abi_version = b->abi_version;
    info->name = b->name ? b->name : "";
    info->version = b->version ? b->version : "";
    info->vendor = b->vendor ? b->vendor : "";
    info->description = b->description ? b->description : "";
    info->path = b->path;
    info->probe_status = b->probe_status;
    info->probe_message = b->probe_message;
    info->gate_state = b->gate_state;
    info->gate_reason = b->gate_reason;
    info->n_caps = b->n_caps;
    info->caps = b->caps;
    info->selection = b->selection;
    info->isolation = tm_isolation_wanted(ctx, b) ? "process" : "host";
    info->sandbox = tm_isolation_wanted(ctx, b) ? tm_sandbox_text() : NULL;
    memcpy(out, info, size); /* only what the caller's struct has room for */
}

int topoml_backend_get(const topoml_context *ctx, uint32_t index, topoml_backend_info *out)
{
    if (!ctx || !out || out->struct_size < TM_INFO_V1_SIZE)
        return TOPOML_E_INVALID;
    if (index >= ctx->n_backends)
        return TOPOML_E_NOT_FOUND;
    /* Listing shows every plugin probed. The context was made non-const by
     * topoml_context_new; a context is used by one thread at a time. */
    tm_registry_probe((topoml_context *)ctx);
    fill_info(ctx, &ctx->backends[index], out);
    return TOPOML_OK;
}

/* The backend a call naming `name` gets: the one of that name that is
 * neither rejected nor a duplicate; else the first rejected one of that
 * name (which says why it cannot run); NULL if no backend has the name (the
 * plugins that naming it needs are probed first). */
static tm_backend *named_backend(topoml_context *ctx, const char *name)
{
    tm_registry_probe_name(ctx, name);
    tm_backend *rejected = NULL;
    for (uint32_t k = 0; k < ctx->n_backends; k++) {
        tm_backend *b = &ctx->backends[k];
        if (!b->name || strcmp(b->name, name) != 0 || b->duplicate)
            continue;
        if (b->gate_state != TOPOML_GATE_REJECTED)
            return b;
        rejected = rejected ? rejected : b;
    }
    return rejected;
}

/* "no backend is named ..." with the names of every backend found (all
 * probed first). */
static int no_such_backend(topoml_context *ctx, const char *name)
{
    tm_registry_probe(ctx);
    char names[512] = "";
    size_t len = 0;
    for (uint32_t k = 0; k < ctx->n_backends; k++) {
        const char *b = ctx->backends[k].name;
        if (!b || !*b)
            continue;
        if (len < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "", b);
    }
    return tm_error(ctx, TOPOML_E_NOT_FOUND, "no backend is named '%s' (the backends found: %s)",
                    name, names);
}

int topoml_backend_find(topoml_context *ctx, const char *name, topoml_backend_info *out)
{
    if (!ctx || !name || !out || out->struct_size < TM_INFO_V1_SIZE)
        return TOPOML_E_INVALID;
    const tm_backend *b = named_backend(ctx, name);
    if (!b)
        return no_such_backend(ctx, name);
    fill_info(ctx, b, out);
    return TOPOML_OK;
}

int topoml_use_backend(topoml_context *ctx, const char *name)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    /* A name no backend has is refused now, not at the first op. */
    if (name && *name && !named_backend(ctx, name))
        return no_such_backend(ctx, name);
    tm_free(ctx, ctx->preferred);
    ctx->preferred = NULL;
    if (!name || !*name)
        return TOPOML_OK;
    ctx->preferred = tm_strdup(ctx, name);
    return ctx->preferred ? TOPOML_OK : tm_nomem(ctx, strlen(name) + 1);
}

const char *topoml_last_backend(const topoml_context *ctx)
{
    return ctx ? ctx->last_backend : "";
}

const char *topoml_last_selection_reason(const topoml_context *ctx)
{
    return ctx ? ctx->last_reason : "";
}

static const char *op_names[TOPOML_OP_COUNT] = {"distances", "edges", "h0", "rips", "image"};

const char *tm_op_name(uint32_t op)
{
    return op < TOPOML_OP_COUNT ? op_names[op] : "?";
}

/* The op's function pointer, NULL if absent. */
static bool has_op_pointer(const tm_backend *b, uint32_t op)
{
    return op < TOPOML_OP_COUNT && (b->op_mask & (1u << op));
}

/* A plugin left for certification on first use (gate: auto) is certified
 * now, and loaded into this process if that enabled it. */
static bool enable_on_first_use(topoml_context *ctx, tm_backend *b)
{
    return tm_gate_first_use(ctx, b) && tm_backend_load(ctx, b);
}

bool tm_caps_cover(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                   const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus)
{
    return tm_caps_cover_features(caps, n_caps, op, in, max_dim, modulus, 0);
}

bool tm_caps_cover_features(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                            const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus,
                            uint32_t features)
{
    for (uint32_t i = 0; i < n_caps; i++) {
        const topoml_capability_v1 *c = &caps[i];
        if (c->op != op || (c->features & features) != features)
            continue;
        if (in) {
            if (!(c->inputs & (1u << in->kind)))
                continue;
            if (in->memory != TOPOML_MEMORY_HOST && !(c->features & TOPOML_CAP_DEVICE_INPUT))
                continue;
            if (in->kind != TOPOML_INPUT_SPARSE && !(c->dtypes & (1u << in->dtype)))
                continue;
            if (in->kind == TOPOML_INPUT_POINTS && !(c->metrics & (1u << in->metric)))
                continue;
            if (c->max_points && in->n > c->max_points)
                continue;
        }
        if (op == TOPOML_OP_RIPS && (max_dim > c->max_dim || modulus > c->max_modulus))
            continue;
        return true;
    }
    return false;
}

bool tm_caps_generators(const topoml_capability_v1 *caps, uint32_t n_caps)
{
    for (uint32_t i = 0; i < n_caps; i++)
        if (caps[i].op == TOPOML_OP_RIPS && (caps[i].features & TOPOML_CAP_GENERATORS))
            return true;
    return false;
}

/* Does `b` claim `op` for this input and these parameters? On no, `why`
 * says what is missing. */
static bool capable(const tm_backend *b, uint32_t op, const topoml_input_v1 *in, uint32_t max_dim,
                    uint32_t modulus, char *why, size_t why_size)
{
    if (!has_op_pointer(b, op)) {
        snprintf(why, why_size, "has no %s op", tm_op_name(op));
        return false;
    }
    if (in && in->memory != TOPOML_MEMORY_HOST && b->isolated) {
        /* A helper process cannot read this process's device pointers. */
        snprintf(why, why_size, "runs in a helper process: no device memory");
        return false;
    }
    if (tm_caps_cover(b->caps, b->n_caps, op, in, max_dim, modulus))
        return true;
    snprintf(why, why_size, "does not claim %s for these parameters", tm_op_name(op));
    return false;
}

bool tm_select_capable(const tm_backend *b, uint32_t op, const topoml_input_v1 *in,
                       uint32_t max_dim, uint32_t modulus)
{
    char why[8];
    return capable(b, op, in, max_dim, modulus, why, sizeof why);
}

/* capable() for tm_select's op, which may carry TM_SELECT_OR_H0: the h0 op
 * answers a barcode of dimension 0 too. `why` says why not for the op
 * asked. */
static bool capable_or_h0(const tm_backend *b, uint32_t op, const topoml_input_v1 *in,
                          uint32_t max_dim, uint32_t modulus, char *why, size_t why_size)
{
    const bool or_h0 = (op & TM_SELECT_OR_H0) != 0;
    op &= ~TM_SELECT_OR_H0;
    if (capable(b, op, in, max_dim, modulus, why, why_size))
        return true;
    char no[8];
    return or_h0 && max_dim == 0 && capable(b, TOPOML_OP_H0, in, 0, 0, no, sizeof no);
}

/* Does b run `op` on an accelerator: a capability record of the op whose
 * device is not the CPU ("cpu", or "cpu: <model>")? */
static bool on_accelerator(const tm_backend *b, uint32_t op)
{
    for (uint32_t i = 0; i < b->n_caps; i++) {
        const char *d = b->caps[i].device;
        if (b->caps[i].op == op && d && d[0] &&
            !(strncmp(d, "cpu", 3) == 0 && (d[3] == '\0' || d[3] == ':')))
            return true;
    }
    return false;
}

static uint32_t largest_modulus_now(const topoml_context *ctx);

uint32_t tm_largest_modulus(topoml_context *ctx, uint32_t modulus)
{
    uint32_t best = 0;
    for (int pass = 0; pass < 2 && best < modulus; pass++) {
        /* those brought up so far; past them, every plugin (probed) */
        if (pass == 1)
            tm_registry_probe(ctx);
        best = largest_modulus_now(ctx);
    }
    return best;
}

static uint32_t largest_modulus_now(const topoml_context *ctx)
{
    uint32_t best = 0;
    for (uint32_t i = 0; i < ctx->n_backends; i++) {
        const tm_backend *b = &ctx->backends[i];
        if (!b->name || b->duplicate || !b->brought_up ||
            (b->gate_state != TOPOML_GATE_ENABLED && !b->gate_pending))
            continue;
        for (uint32_t k = 0; k < b->n_caps; k++)
            if (b->caps[k].op == TOPOML_OP_RIPS && b->caps[k].max_modulus > best)
                best = b->caps[k].max_modulus;
    }
    return best;
}

/* Among the backends tm_select's order would try after `prefer` — the
 * enabled accelerators, the other enabled plugins, the reference — the
 * capable ones (a plugin waiting for certification on first use is
 * certified now), each predicted by its cost model (calibrate.c) for this
 * call's sizes; *out the fastest, or the first in that order whose
 * prediction is within 10% of the fastest (the measurements' noise). false
 * when none is capable; with one, or no model, the order decides. */
#define TM_COST_CANDIDATES 32
static bool select_by_cost(topoml_context *ctx, uint32_t op, const topoml_input_v1 *in,
                           uint32_t max_dim, uint32_t modulus, tm_backend **out)
{
    if (!ctx->plugins_probed)
        tm_registry_probe(ctx);
    tm_backend *cand[TM_COST_CANDIDATES];
    double pred[TM_COST_CANDIDATES];
    const char *src[TM_COST_CANDIDATES];
    uint32_t k = 0;
    char why[256];
    for (int group = 0; group < 2; group++) {
        for (uint32_t i = 0; i < ctx->n_backends && k < TM_COST_CANDIDATES; i++) {
            tm_backend *b = &ctx->backends[(i + 1) % ctx->n_backends];
            const bool reference = i + 1 == ctx->n_backends;
            if (!reference && !b->brought_up)
                continue;
            if (!b->name || (b->gate_state != TOPOML_GATE_ENABLED && !b->gate_pending))
                continue;
            if (tm_strlist_has(&ctx->config.prefer, b->name) ||
                (!reference && b->selection == TOPOML_SELECT_BY_NAME) ||
                (reference && group == 0) || (!reference && on_accelerator(b, op) != (group == 0)))
                continue;
            if (!capable(b, op, in, max_dim, modulus, why, sizeof why))
                continue;
            if (b->gate_pending && !enable_on_first_use(ctx, b))
                continue;
            cand[k++] = b;
        }
    }
    if (k == 0)
        return false;
    const uint64_t n = in ? in->n : 0;
    uint64_t m = in && in->kind == TOPOML_INPUT_SPARSE ? in->n_edges : ctx->select_edges;
    if (m == 0)
        m = n * (n > 0 ? n - 1 : 0) / 2;
    const double work = tm_rips_work(n, m, max_dim);
    uint32_t best = 0;
    bool modelled = k > 1;
    for (uint32_t c = 0; c < k && modelled; c++) {
        const tm_cost_model *cm = tm_cost_model_of(ctx, cand[c]);
        if (!cm) {
            modelled = false;
            break;
        }
        pred[c] = tm_cost_predict(cm, work, ctx->select_threads);
        src[c] = cm->source;
        if (pred[c] < pred[best])
            best = c;
    }
    uint32_t pick = 0;
    if (modelled)
        while (pred[pick] > 1.1 * pred[best])
            pick++;
    *out = cand[pick];
    snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", cand[pick]->name);
    size_t len = 0;
    if (!modelled) {
        snprintf(ctx->last_reason, sizeof ctx->last_reason, "%s",
                 k == 1 ? "the only capable enabled backend"
                        : "first capable in order (no cost model: a calibration call failed)");
        return true;
    }
    len += (size_t)snprintf(ctx->last_reason, sizeof ctx->last_reason,
                            "predicted fastest for %llu points, %llu edges, H%u, Z/%u, "
                            "%u threads:",
                            (unsigned long long)n, (unsigned long long)m, max_dim, modulus,
                            ctx->select_threads ? ctx->select_threads
                                                : tm_threads_allowed(ctx->config.threads));
    for (uint32_t c = 0; c < k && len < sizeof ctx->last_reason; c++)
        len += (size_t)snprintf(ctx->last_reason + len, sizeof ctx->last_reason - len,
                                " %s %.3g s (%s)%s", cand[c]->name, pred[c], src[c],
                                c + 1 < k ? ";" : "");
    if (pick != best && len < sizeof ctx->last_reason)
        snprintf(ctx->last_reason + len, sizeof ctx->last_reason - len,
                 "; %s is within 10%% of the fastest and comes first", cand[pick]->name);
    return true;
}

int tm_select(topoml_context *ctx, uint32_t op, const topoml_input_v1 *in, uint32_t max_dim,
              uint32_t modulus, tm_backend **out)
{
    const uint32_t asked = op; /* with TM_SELECT_OR_H0, if given */
    op &= ~TM_SELECT_OR_H0;
    *out = NULL;
    char why[256];
    ctx->last_backend[0] = '\0';
    ctx->last_reason[0] = '\0';
    if (ctx->preferred) {
        tm_registry_probe_name(ctx, ctx->preferred);
        for (uint32_t i = 0; i < ctx->n_backends; i++) {
            tm_backend *b = &ctx->backends[i];
            if (!b->name || strcmp(b->name, ctx->preferred) != 0 || b->duplicate ||
                b->gate_state == TOPOML_GATE_REJECTED)
                continue;
            if (b->gate_state != TOPOML_GATE_ENABLED && !b->gate_pending) {
                return tm_error(ctx, TOPOML_E_GATE, "backend '%s' is not enabled: %s", b->name,
                                b->gate_state == TOPOML_GATE_UNSUPPORTED ? b->probe_message
                                                                         : b->gate_reason);
            }
            if (!capable_or_h0(b, asked, in, max_dim, modulus, why, sizeof why)) {
                return tm_error(ctx, TOPOML_E_UNSUPPORTED, "backend '%s' %s", b->name, why);
            }
            if (b->gate_pending && !enable_on_first_use(ctx, b))
                return tm_error(ctx, TOPOML_E_GATE, "backend '%s' is not enabled: %s", b->name,
                                b->gate_reason);
            snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", b->name);
            snprintf(ctx->last_reason, sizeof ctx->last_reason, "asked for by name");
            *out = b;
            return TOPOML_OK;
        }
        return tm_error(ctx, TOPOML_E_NOT_FOUND,
                        "no usable backend named '%s' (see `topoml backends`)", ctx->preferred);
    }

    /* The configuration's preference list first; then the enabled plugins
     * that run the op on an accelerator (a capability record whose device is
     * not "cpu" or "cpu: ..."), then the other enabled plugins, each group in discovery
     * order, leaving out those that ask to be chosen by name only; then the
     * built-in reference, which can do every op. A plugin whose
     * certification waits for its first use (gate: auto) is certified here,
     * when it would be the one chosen, and skipped if it fails. */
    size_t reason_len = 0;
    const size_t n_prefer = ctx->config.prefer.count;
    for (size_t p = 0; p <= n_prefer + 1; p++) {
        /* past `prefer`, under `select: cost`: the fastest predicted */
        if (p == n_prefer && ctx->config.select_cost && op == TOPOML_OP_RIPS) {
            if (select_by_cost(ctx, op, in, max_dim, modulus, out))
                return TOPOML_OK;
        }
        for (uint32_t i = 0; i < ctx->n_backends; i++) {
            tm_backend *b = &ctx->backends[(i + 1) % ctx->n_backends];
            const bool reference = i + 1 == ctx->n_backends;
            if (!reference && !ctx->plugins_probed) {
                /* A `prefer` entry needs the files that may give its name
                 * (none for the reference's); looking past `prefer` needs
                 * every plugin. */
                if (p < n_prefer)
                    tm_registry_probe_name(ctx, ctx->config.prefer.items[p]);
                else
                    tm_registry_probe(ctx);
                if (!b->brought_up)
                    continue;
            }
            if (!b->name || (b->gate_state != TOPOML_GATE_ENABLED && !b->gate_pending))
                continue;
            if (p < n_prefer) {
                if (strcmp(b->name, ctx->config.prefer.items[p]) != 0)
                    continue;
            } else if (tm_strlist_has(&ctx->config.prefer, b->name) ||
                       (!reference && b->selection == TOPOML_SELECT_BY_NAME) ||
                       (reference && p == n_prefer) ||
                       (!reference &&
                        (on_accelerator(b, op) ||
                         ((asked & TM_SELECT_OR_H0) && on_accelerator(b, TOPOML_OP_H0))) !=
                            (p == n_prefer))) {
                continue;
            }
            if (!capable_or_h0(b, asked, in, max_dim, modulus, why, sizeof why)) {
                if (reason_len < sizeof ctx->last_reason)
                    reason_len += (size_t)snprintf(ctx->last_reason + reason_len,
                                                   sizeof ctx->last_reason - reason_len, "%s %s; ",
                                                   b->name, why);
                continue;
            }
            if (b->gate_pending && !enable_on_first_use(ctx, b)) {
                if (reason_len < sizeof ctx->last_reason)
                    reason_len += (size_t)snprintf(ctx->last_reason + reason_len,
                                                   sizeof ctx->last_reason - reason_len, "%s %s; ",
                                                   b->name, b->gate_reason);
                continue;
            }
            snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", b->name);
            if (reason_len < sizeof ctx->last_reason)
                snprintf(ctx->last_reason + reason_len, sizeof ctx->last_reason - reason_len, "%s",
                         p < n_prefer    ? "first capable in `prefer`"
                         : reference     ? "the reference, capable of every op"
                         : p == n_prefer ? "first capable enabled accelerator"
                                         : "first capable enabled plugin");
            *out = b;
            return TOPOML_OK;
        }
    }
    return tm_error(ctx, TOPOML_E_UNSUPPORTED,
                    "no enabled backend can run %s with these parameters: %s", tm_op_name(op),
                    ctx->last_reason);
}
