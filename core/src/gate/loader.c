/*
 * loader.c — finding plugin files and negotiating with them.
 *
 * Search order (first folder wins when two hold a file of the same name):
 *   1. folders given by the caller and the configuration's plugin_paths,
 *   2. TOPOML_PLUGIN_PATH (colon-separated; ignored for setuid/setgid
 *      programs and with TOPOML_CTX_NO_ENV),
 *   3. the build tree's plugin folder when libtopoml runs from its build
 *      tree, else the installed <libdir>/topoml/plugins.
 * In each folder the files topoml-backend-*.so are taken in sorted order.
 *
 * A plugin file is opened once (O_NOFOLLOW | O_CLOEXEC) and everything after
 * goes through that descriptor: owner and mode are checked on it and on
 * every folder up to the root (walked by descriptor), the SHA-256 the gate
 * compares with certificates is read from it, and the file dlopen'd is that
 * same file, through /proc/self/fd/N. Swapping a file or a folder between
 * the check and the load changes nothing: no path is resolved twice.
 *
 * The dynamic loader knows a loaded object by every name it was opened
 * under, and dlopen of a known name returns that object without opening
 * anything. "/proc/self/fd/N" names whatever file descriptor N is *now*:
 * once a context closed its descriptors, the next context could be given
 * the same numbers for other files and load, under a plugin's name, another
 * plugin still loaded (by a living context) — the identity check caught it
 * ("calls itself 'threads' in this process but 'asm-avx512' in the probe
 * process") and rejected a good plugin, and two files giving one name would
 * not have been told apart. So the name handed to dlopen is never a
 * context's own descriptor: it is a duplicate kept open for the life of the
 * process, one per file (device and inode), whose number is therefore never
 * reused (load_file).
 *
 * Discovery only checks files (tm_loader_check); their SHA-256 is read
 * from the same descriptor when they are first probed (tm_loader_hash), so
 * a call that needs no plugin reads none. Negotiation runs plugin
 * code, so the host does it only for plugins the gate enabled; before that
 * a child process does it (isolate_probe.c). A plugin file can be wrong in
 * many ways (not an ELF object, no entry symbol, another ABI, a short
 * vtable, a failing probe); each one is recorded as a rejected backend with
 * its reason and the context carries on.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

#define PLUGIN_PREFIX "topoml-backend-"
#define PLUGIN_SUFFIX ".so"

/* The vtable must reach at least to `capabilities`: everything before the
 * ops is mandatory in v1. */
#define VT_MIN_SIZE (offsetof(topoml_backend_v1, capabilities) + sizeof(void *))

static void reject(tm_backend *b, const char *fmt, const char *arg)
{
    b->gate_state = TOPOML_GATE_REJECTED;
    snprintf(b->gate_reason, sizeof b->gate_reason, fmt, arg);
}

bool tm_valid_backend_name(const char *s)
{
    if (!s || !*s || strlen(s) > 48)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* A file or folder we load code from must not be writable by anyone but its
 * owner, and the owner must be root or us: otherwise another user could
 * swap the code we run. */
bool tm_path_is_safe(const char *path, bool want_dir, char *why, size_t why_size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, why_size, "cannot stat %s: %s", path, strerror(errno));
        return false;
    }
    if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s is not a %s", path, want_dir ? "folder" : "regular file");
        return false;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        snprintf(why, why_size, "%s is owned by another user (uid %u)", path,
                 (unsigned)st.st_uid);
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, why_size, "%s is writable by group or others (mode %03o)", path,
                 (unsigned)(st.st_mode & 0777));
        return false;
    }
    return true;
}

/* May a folder on the way to a file we load hold it? Ours or root's, and
 * not writable by group or others unless sticky (then others cannot rename
 * or remove our entries, as in /tmp). */
static bool ancestor_ok(const struct stat *st, char *why, size_t why_size, const char *what)
{
    if (st->st_uid != 0 && st->st_uid != geteuid()) {
        snprintf(why, why_size, "folder %s is owned by another user (uid %u)", what,
                 (unsigned)st->st_uid);
        return false;
    }
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
        snprintf(why, why_size, "folder %s is writable by group or others (mode %03o)", what,
                 (unsigned)(st->st_mode & 0777));
        return false;
    }
    return true;
}

bool tm_fd_is_safe(int fd, char *real, size_t real_size, char *why, size_t why_size)
{
    struct stat st;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, real_size - 1);
    if (n <= 0 || (size_t)n >= real_size - 1 || real[0] != '/') {
        snprintf(why, why_size, "cannot resolve the opened file through %s", link);
        return false;
    }
    real[n] = '\0';
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot fstat %s: %s", real, strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s is not a regular file", real);
        return false;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        snprintf(why, why_size, "%s is owned by another user (uid %u)", real, (unsigned)st.st_uid);
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, why_size, "%s is writable by group or others (mode %03o)", real,
                 (unsigned)(st.st_mode & 0777));
        return false;
    }
    /* Walk the folders that really hold the file, by descriptor ("..", not
     * path strings), up to the root: first make sure the folder we opened
     * holds this very file, then check each one on the way up. */
    char dir[4096];
    const char *slash = strrchr(real, '/');
    size_t dlen = slash == real ? 1 : (size_t)(slash - real);
    if (dlen >= sizeof dir) {
        snprintf(why, why_size, "path too long: %s", real);
        return false;
    }
    memcpy(dir, real, dlen);
    dir[dlen] = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat in_dir, ds;
    if (dfd < 0 || fstatat(dfd, slash + 1, &in_dir, AT_SYMLINK_NOFOLLOW) != 0 ||
        in_dir.st_dev != st.st_dev || in_dir.st_ino != st.st_ino) {
        snprintf(why, why_size, "%s changed while it was being checked", real);
        if (dfd >= 0)
            close(dfd);
        return false;
    }
    bool ok = true;
    for (int level = 0; ok && level < 256; level++) {
        if (fstat(dfd, &ds) != 0) {
            snprintf(why, why_size, "cannot fstat a folder above %s: %s", real, strerror(errno));
            ok = false;
            break;
        }
        char what[4200];
        snprintf(what, sizeof what, "%d level%s above %s", level + 1, level ? "s" : "", real);
        if (!ancestor_ok(&ds, why, why_size, level == 0 ? dir : what)) {
            ok = false;
            break;
        }
        int up = openat(dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat us;
        if (up < 0 || fstat(up, &us) != 0) {
            snprintf(why, why_size, "cannot open a folder above %s", real);
            if (up >= 0)
                close(up);
            ok = false;
            break;
        }
        close(dfd);
        dfd = up;
        if (us.st_dev == ds.st_dev && us.st_ino == ds.st_ino)
            break; /* the root is its own parent */
    }
    close(dfd);
    return ok;
}

static const char *default_folder(char *buf, size_t size);

/* Is the file at canonical path `real` directly in topoml's own plugin
 * folder (the build tree's or the installed one)? */
static bool in_default_folder(const char *real)
{
    char buf[4096], dir[4096];
    const char *def = default_folder(buf, sizeof buf);
    const char *slash = strrchr(real, '/');
    if (!def || !slash || !realpath(def, dir))
        return false;
    size_t n = strlen(dir);
    return (size_t)(slash - real) == n && strncmp(real, dir, n) == 0;
}

void tm_loader_check(topoml_context *ctx, const char *path, tm_backend *b)
{
    char why[512], real[4096];
    (void)ctx;
    b->fd = -1;
    b->probe_status = TOPOML_E_NOT_FOUND;
    if (path[0] != '/') {
        reject(b, "refusing a relative plugin path '%s'", path);
        return;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(why, sizeof why, "cannot open %.400s: %s", path, strerror(errno));
        reject(b, "unsafe plugin file: %s", why);
        return;
    }
    if (!tm_fd_is_safe(fd, real, sizeof real, why, sizeof why)) {
        close(fd);
        reject(b, "unsafe plugin file: %s", why);
        return;
    }
    b->in_default_folder = in_default_folder(real);
    b->fd = fd;
}

void tm_loader_hash(topoml_context *ctx, tm_backend *b)
{
    (void)ctx;
    if (b->file_sha256[0] || b->fd < 0 || b->gate_state == TOPOML_GATE_REJECTED)
        return;
    int err = tm_sha256_fd(b->fd, b->file_sha256);
    if (err) {
        b->file_sha256[0] = '\0';
        reject(b, "cannot read plugin file: %s", strerror(err));
    }
}

/* The files this process has dlopen'd, each with a descriptor of its own
 * that is never closed (see the top of this file). A plugin file is
 * rebuilt, not added, in a long-lived process: a few hundred is plenty. */
#define LOADED_MAX 256
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct loaded_file {
    dev_t dev;
    ino_t ino;
    int fd;
} loaded[LOADED_MAX];
static unsigned n_loaded;

/* dlopen the file open as `fd` under a name bound to that file for the
 * life of the process; NULL with the reason in why. */
static void *load_file(int fd, char *why, size_t why_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot stat the plugin file: %s", strerror(errno));
        return NULL;
    }
    pthread_mutex_lock(&loaded_lock);
    int keep = -1;
    for (unsigned i = 0; i < n_loaded && keep < 0; i++)
        if (loaded[i].dev == st.st_dev && loaded[i].ino == st.st_ino)
            keep = loaded[i].fd;
    if (keep < 0 && n_loaded < LOADED_MAX) {
        keep = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (keep >= 0)
            loaded[n_loaded++] = (struct loaded_file){st.st_dev, st.st_ino, keep};
    }
    void *dl = NULL;
    if (keep < 0) {
        snprintf(why, why_size, "%s",
                 n_loaded >= LOADED_MAX ? "too many plugin files loaded in this process"
                                        : "cannot duplicate the plugin's descriptor");
    } else {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", keep);
        dlerror();
        dl = dlopen(self, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            const char *e = dlerror();
            snprintf(why, why_size, "%s", e ? e : "unknown dlopen error");
        }
    }
    pthread_mutex_unlock(&loaded_lock);
    return dl;
}

void tm_loader_negotiate(topoml_context *ctx, tm_backend *b)
{
    char why[512];
    b->dl = load_file(b->fd, why, sizeof why);
    if (!b->dl) {
        reject(b, "cannot load: %s", why);
        return;
    }
    topoml_backend_negotiate_fn entry;
    *(void **)&entry = dlsym(b->dl, TOPOML_PLUGIN_ENTRY);
    if (!entry) {
        reject(b, "missing entry symbol %s", TOPOML_PLUGIN_ENTRY);
        return;
    }
    uint32_t version = TOPOML_ABI_VERSION;
    const topoml_backend_v1 *vt = NULL;
    int rc = entry(&version, &ctx->host, &vt);
    if (rc != TOPOML_OK) {
        reject(b, "plugin refused negotiation (%s)", topoml_strerror(rc));
        return;
    }
    if (version == 0 || version > TOPOML_ABI_VERSION) {
        snprintf(why, sizeof why, "plugin answered ABI version %u; this core speaks 1..%u",
                 version, TOPOML_ABI_VERSION);
        reject(b, "%s", why);
        return;
    }
    if (!vt) {
        reject(b, "%s", "plugin accepted negotiation but returned no vtable");
        return;
    }
    if (vt->struct_size < VT_MIN_SIZE) {
        snprintf(why, sizeof why, "vtable too short (%u bytes, ABI v1 needs at least %zu)",
                 vt->struct_size, (size_t)VT_MIN_SIZE);
        reject(b, "%s", why);
        return;
    }
    if (vt->abi_version != version) {
        snprintf(why, sizeof why, "vtable says ABI %u but negotiation answered %u",
                 vt->abi_version, version);
        reject(b, "%s", why);
        return;
    }
    if (!tm_valid_backend_name(vt->name)) {
        reject(b, "%s", "plugin name missing or not of the form [a-z0-9-]+");
        return;
    }
    if (!vt->probe || !vt->capabilities) {
        reject(b, "%s", "vtable lacks probe or capabilities");
        return;
    }
    b->abi_version = version;
    memset(&b->vt_copy, 0, sizeof b->vt_copy);
    memcpy(&b->vt_copy, vt, vt->struct_size < sizeof b->vt_copy ? vt->struct_size : sizeof b->vt_copy);
    b->vt = &b->vt_copy;
}

void tm_loader_open(topoml_context *ctx, const char *path, tm_backend *b)
{
    tm_loader_check(ctx, path, b);
    if (b->gate_state != TOPOML_GATE_REJECTED)
        tm_loader_negotiate(ctx, b);
}

/* Add a registry slot for `path` and check the file; nothing of it runs
 * here (registry.c probes it in a child process). */
static void add_plugin_file(topoml_context *ctx, const char *path, void *user)
{
    (void)user;
    tm_backend *grown =
        tm_realloc(ctx, ctx->backends, (ctx->n_backends + 1) * sizeof *ctx->backends);
    if (!grown) {
        tm_log(ctx, TOPOML_LOG_ERROR, "out of memory registering %s", path);
        return;
    }
    ctx->backends = grown;
    tm_backend *b = &ctx->backends[ctx->n_backends];
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->path = tm_strdup(ctx, path);
    if (!b->path)
        return;
    ctx->n_backends++;
    tm_loader_check(ctx, path, b);
    if (b->gate_state == TOPOML_GATE_REJECTED)
        tm_log(ctx, TOPOML_LOG_WARN, "plugin %s rejected: %s", path, b->gate_reason);
}

/* The files handed out so far by one walk of the search path. */
typedef struct walk {
    tm_plugin_file_fn fn;
    void *user;
    char **seen;
    size_t n_seen;
    const char *own; /* topoml's own plugin folder (canonical), or NULL */
} walk;

static bool already_seen(const walk *w, const char *file_name, const char **first)
{
    for (size_t i = 0; i < w->n_seen; i++) {
        const char *p = w->seen[i];
        const char *base = strrchr(p, '/');
        base = base ? base + 1 : p;
        if (strcmp(base, file_name) == 0) {
            *first = p;
            return true;
        }
    }
    return false;
}

bool tm_loader_file_is_for(const char *path, const char *name)
{
    if (!path || !name)
        return false;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const size_t n = strlen(name), prefix = strlen(PLUGIN_PREFIX);
    return strncmp(base, PLUGIN_PREFIX, prefix) == 0 && strncmp(base + prefix, name, n) == 0 &&
           strcmp(base + prefix + n, PLUGIN_SUFFIX) == 0;
}

bool tm_loader_file_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const size_t prefix = strlen(PLUGIN_PREFIX), suffix = strlen(PLUGIN_SUFFIX), n = strlen(base);
    if (n <= prefix + suffix || strncmp(base, PLUGIN_PREFIX, prefix) != 0 ||
        strcmp(base + n - suffix, PLUGIN_SUFFIX) != 0 || n - prefix - suffix >= size)
        return false;
    memcpy(out, base + prefix, n - prefix - suffix);
    out[n - prefix - suffix] = '\0';
    return tm_valid_backend_name(out);
}

static int is_plugin_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > strlen(PLUGIN_PREFIX) + strlen(PLUGIN_SUFFIX) &&
           strncmp(e->d_name, PLUGIN_PREFIX, strlen(PLUGIN_PREFIX)) == 0 &&
           strcmp(e->d_name + n - strlen(PLUGIN_SUFFIX), PLUGIN_SUFFIX) == 0;
}

static void scan_folder(topoml_context *ctx, walk *w, const char *dir)
{
    char why[512];
    if (dir[0] != '/') {
        tm_log(ctx, TOPOML_LOG_WARN, "ignoring relative plugin folder '%s'", dir);
        return;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return; /* an absent folder is normal (e.g. nothing installed) */
    if (!tm_path_is_safe(dir, true, why, sizeof why)) {
        tm_log(ctx, TOPOML_LOG_WARN, "ignoring plugin folder: %s", why);
        return;
    }
    struct dirent **list = NULL;
    int n = scandir(dir, &list, is_plugin_file, alphasort);
    if (n < 0) {
        tm_log(ctx, TOPOML_LOG_WARN, "cannot read plugin folder %s: %s", dir, strerror(errno));
        return;
    }
    /* A file from another folder named for a plugin shipped with topoml
     * does not hide the shipped one: it is handed out (the registry refuses
     * it, with the reason) but not remembered as the file of that name. */
    char real_dir[4096];
    const bool own = w->own && realpath(dir, real_dir) && strcmp(real_dir, w->own) == 0;
    for (int i = 0; i < n; i++) {
        const char *first;
        char path[4096], name[64];
        const bool impostor = !own && tm_loader_file_name(list[i]->d_name, name, sizeof name) &&
                              tm_is_shipped_name(name);
        if (impostor &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) < sizeof path) {
            w->fn(ctx, path, w->user);
        } else if (already_seen(w, list[i]->d_name, &first)) {
            tm_log(ctx, TOPOML_LOG_INFO, "skipping %s/%s: %s comes first in the search path",
                   dir, list[i]->d_name, first);
        } else if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) <
                   sizeof path) {
            char **grown = tm_realloc(ctx, w->seen, (w->n_seen + 1) * sizeof *w->seen);
            char *copy = grown ? tm_strdup(ctx, path) : NULL;
            if (grown)
                w->seen = grown;
            if (copy)
                w->seen[w->n_seen++] = copy;
            else
                tm_log(ctx, TOPOML_LOG_ERROR, "out of memory listing %s", path);
            w->fn(ctx, path, w->user);
        }
        free(list[i]);
    }
    free(list);
}

static void scan_path_list(topoml_context *ctx, walk *w, const char *list)
{
    char dir[4096];
    while (list && *list) {
        const char *e = strchr(list, ':');
        size_t len = e ? (size_t)(e - list) : strlen(list);
        if (len > 0 && len < sizeof dir) {
            memcpy(dir, list, len);
            dir[len] = '\0';
            scan_folder(ctx, w, dir);
        }
        list += len + (e ? 1 : 0);
    }
}

/* The file holding this code, canonical: libtopoml.so, or the program it
 * is statically linked into. For the main program dladdr gives the name it
 * was started by (argv[0], maybe a bare name found through PATH), which
 * need not resolve from here: /proc/self/exe does. */
static bool code_object(char *out, size_t size)
{
    Dl_info info;
    char real[PATH_MAX];
    if (!dladdr((void *)code_object, &info) || !info.dli_fname)
        return false;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strstr(base, ".so") && realpath(info.dli_fname, real))
        return (size_t)snprintf(out, size, "%s", real) < size;
    ssize_t n = readlink("/proc/self/exe", real, sizeof real - 1);
    if (n <= 0)
        return false;
    real[n] = '\0';
    return (size_t)snprintf(out, size, "%s", real) < size;
}

bool tm_in_build_tree(void)
{
#ifdef TOPOML_BUILD_ROOT
    char real[4096];
    return code_object(real, sizeof real) &&
           strncmp(real, TOPOML_BUILD_ROOT "/", strlen(TOPOML_BUILD_ROOT) + 1) == 0;
#else
    return false;
#endif
}

/* The default folder: the build tree's when this code runs from there;
 * otherwise the installed one, found relative to the object holding this
 * code (libtopoml.so in <libdir>, or a program in <bindir> that links it
 * statically), so that an installed tree can be moved; finally the folder
 * of the configured install prefix. */
static const char *default_folder(char *buf, size_t size)
{
#ifdef TOPOML_BUILD_PLUGIN_DIR
    if (tm_in_build_tree())
        return TOPOML_BUILD_PLUGIN_DIR;
#endif
    char real[4096];
    if (code_object(real, sizeof real)) {
#ifdef TOPOML_INSTALL_LIBDIR_NAME
        char *slash = strrchr(real, '/');
        if (slash) {
            *slash = '\0';
            const char *base = slash + 1;
            int n = strstr(base, ".so") ? snprintf(buf, size, "%s/topoml/plugins", real)
                                        : snprintf(buf, size, "%s/../%s/topoml/plugins", real,
                                                   TOPOML_INSTALL_LIBDIR_NAME);
            struct stat st;
            char canonical[4096];
            if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) {
                /* <bin>/../lib/...: said as the folder it is */
                if (realpath(buf, canonical) && strlen(canonical) < size)
                    snprintf(buf, size, "%s", canonical);
                return buf;
            }
        }
#endif
    }
#ifdef TOPOML_INSTALL_PLUGIN_DIR
    return TOPOML_INSTALL_PLUGIN_DIR;
#else
    (void)buf;
    (void)size;
    return NULL;
#endif
}

bool tm_loader_own_folder(void)
{
    char buf[4096], real[4096];
    const char *def = default_folder(buf, sizeof buf);
    struct stat st;
    return def && realpath(def, real) && stat(real, &st) == 0 && S_ISDIR(st.st_mode);
}

void tm_loader_each_file(topoml_context *ctx, tm_plugin_file_fn fn, void *user)
{
    char buf[4096], own[4096];
    const char *def = default_folder(buf, sizeof buf);
    walk w = {fn, user, NULL, 0, def && realpath(def, own) ? own : NULL};
    for (size_t i = 0; i < ctx->config.plugin_paths.count; i++)
        scan_folder(ctx, &w, ctx->config.plugin_paths.items[i]);
    if (!(ctx->flags & TOPOML_CTX_NO_ENV))
        scan_path_list(ctx, &w, secure_getenv("TOPOML_PLUGIN_PATH"));
    if (def)
        scan_folder(ctx, &w, def);
    for (size_t i = 0; i < w.n_seen; i++)
        tm_free(ctx, w.seen[i]);
    tm_free(ctx, w.seen);
}

void tm_loader_discover(topoml_context *ctx)
{
    if (ctx->flags & TOPOML_CTX_NO_PLUGINS)
        return;
    tm_loader_each_file(ctx, add_plugin_file, NULL);
}
