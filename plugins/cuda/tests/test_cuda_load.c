/*
 * test_cuda_load.c — topoml-backend-cuda.so loads, negotiates and answers
 * its probe on any machine, and never crashes when asked to work without a
 * device.
 *
 * On a machine without the CUDA driver the probe must say TOPOML_E_UNSUPPORTED
 * "no CUDA driver (libcuda.so.1 not found)", and every op must fail with
 * TOPOML_E_DEVICE and a message. With TOPOML_CUDA_EXPECT_DEVICE=1 in the
 * environment (the GPU machine's script sets it) the probe must succeed.
 *
 * Usage: test_cuda_load path/to/topoml-backend-cuda.so
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/plugin.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static long live_blocks;

static void *t_alloc(void *hd, size_t n)
{
    (void)hd;
    void *p = malloc(n);
    if (p)
        live_blocks++;
    return p;
}
static void *t_realloc(void *hd, void *p, size_t n)
{
    (void)hd;
    void *q = realloc(p, n);
    if (q && !p)
        live_blocks++;
    return q;
}
static void t_free(void *hd, void *p)
{
    (void)hd;
    if (p)
        live_blocks--;
    free(p);
}
static void t_log(void *hd, int level, const char *msg)
{
    (void)hd;
    fprintf(stderr, "plugin log %d: %s\n", level, msg);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s topoml-backend-cuda.so\n", argv[0]);
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "dlopen(%s) failed: %s\n", argv[1], dlerror());
        return 1;
    }
    topoml_backend_negotiate_fn negotiate;
    *(void **)&negotiate = dlsym(so, TOPOML_PLUGIN_ENTRY);
    CHECK(negotiate != NULL, "no entry symbol %s", TOPOML_PLUGIN_ENTRY);
    if (!negotiate)
        return 1;

    topoml_host_v1 host = {sizeof host, TOPOML_ABI_VERSION, NULL, t_alloc, t_realloc, t_free, t_log,
                           "0.1.0"};
    const topoml_backend_v1 *be = NULL;
    uint32_t abi = 0;
    CHECK(negotiate(&abi, &host, &be) == TOPOML_E_ABI, "ABI 0 must be refused");
    abi = 7; /* a newer core: the plugin answers with the version it speaks */
    CHECK(negotiate(&abi, &host, &be) == TOPOML_OK && abi == 1, "ABI 7 -> %u", abi);
    abi = TOPOML_ABI_VERSION;
    CHECK(negotiate(&abi, &host, &be) == TOPOML_OK, "negotiation failed");
    if (!be)
        return 1;
    CHECK(abi == 1 && be->abi_version == 1, "abi %u / %u", abi, be->abi_version);
    CHECK(be->struct_size >= sizeof(topoml_backend_v1), "vtable too short: %u", be->struct_size);
    CHECK(be->name && strcmp(be->name, "cuda") == 0, "name %s", be->name ? be->name : "(null)");
    CHECK(be->probe && be->capabilities && be->create && be->destroy, "missing entry points");
    CHECK(be->distances && be->edges && be->h0, "missing ops");

    void *state = NULL;
    CHECK(be->create(&host, &state) == TOPOML_OK && state, "create failed");
    char why[512] = "";
    int probe = be->probe(state, why, sizeof why);
    fprintf(stderr, "probe: %d: %s\n", probe, why);
    CHECK(why[0] != '\0', "probe gave no reason");

    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    const char *expect = getenv("TOPOML_CUDA_EXPECT_DEVICE");
    if (!driver) {
        CHECK(probe == TOPOML_E_UNSUPPORTED, "probe without a driver returned %d", probe);
        CHECK(strstr(why, "no CUDA driver (libcuda.so.1 not found)") != NULL, "reason: %s", why);
    } else {
        dlclose(driver);
        CHECK(probe == TOPOML_OK || probe == TOPOML_E_UNSUPPORTED || probe == TOPOML_E_DEVICE,
              "probe returned %d", probe);
    }
    if (expect && strcmp(expect, "1") == 0)
        CHECK(probe == TOPOML_OK, "a device was expected: %s", why);

    const topoml_capability_v1 *caps = NULL;
    uint32_t n_caps = 0;
    CHECK(be->capabilities(state, &caps, &n_caps) == TOPOML_OK && n_caps >= 3,
          "capabilities: %u records", n_caps);
    for (uint32_t k = 0; k < n_caps; k++) {
        CHECK(caps[k].struct_size == sizeof(topoml_capability_v1), "record %u size", k);
        CHECK(caps[k].device && caps[k].schedule && caps[k].schedule[0], "record %u text", k);
        CHECK(caps[k].op < TOPOML_OP_COUNT, "record %u op %u", k, caps[k].op);
        fprintf(stderr,
                "cap op=%u dtypes=%#x metrics=%#x inputs=%#x max_dim=%u device=\"%s\"\n"
                "    schedule=\"%s\"\n",
                caps[k].op, caps[k].dtypes, caps[k].metrics, caps[k].inputs, caps[k].max_dim,
                caps[k].device, caps[k].schedule);
    }

    /* Work: three points on a line. With a device the answers are checked;
     * without one every op must fail cleanly with a message. */
    double pts[6] = {0, 0, 3, 4, 6, 8};
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 3;
    in.dim = 2;
    in.dtype = TOPOML_F64;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = pts;
    char err[256];
    topoml_call_v1 call;
    memset(&call, 0, sizeof call);
    call.struct_size = sizeof call;
    call.alloc = t_alloc;
    call.realloc = t_realloc;
    call.free = t_free;
    call.log = t_log;
    call.error = err;
    call.error_size = sizeof err;
    call.device = -1;

    double dist[3] = {-1, -1, -1};
    err[0] = '\0';
    int rc = be->distances(state, &call, &in, dist);
    if (probe == TOPOML_OK) {
        CHECK(rc == TOPOML_OK, "distances: %d %s", rc, err);
        CHECK(dist[0] == 5 && dist[1] == 10 && dist[2] == 5, "distances %g %g %g", dist[0], dist[1],
              dist[2]);
    } else {
        CHECK(rc == TOPOML_E_DEVICE && err[0], "distances without a device: %d '%s'", rc, err);
    }
    topoml_edge *edges = NULL;
    uint64_t n_edges = 99;
    err[0] = '\0';
    rc = be->edges(state, &call, &in, 7.0, &edges, &n_edges);
    if (probe == TOPOML_OK) {
        CHECK(rc == TOPOML_OK && n_edges == 2, "edges: %d %s, %llu edges", rc, err,
              (unsigned long long)n_edges);
        if (rc == TOPOML_OK && n_edges == 2)
            CHECK(edges[0].d == 5 && edges[0].i == 0 && edges[0].j == 1 && edges[1].d == 5 &&
                      edges[1].i == 1 && edges[1].j == 2,
                  "edge order");
    } else {
        CHECK(rc == TOPOML_E_DEVICE && err[0] && edges == NULL && n_edges == 0,
              "edges without a device: %d '%s'", rc, err);
    }
    if (edges)
        t_free(NULL, edges);

    topoml_barcode_v1 bc;
    memset(&bc, 0, sizeof bc);
    bc.struct_size = sizeof bc;
    err[0] = '\0';
    rc = be->h0(state, &call, &in, INFINITY, &bc);
    if (probe == TOPOML_OK)
        CHECK(rc == TOPOML_OK && bc.n_intervals == 3, "h0: %d %s", rc, err);
    else
        CHECK(rc == TOPOML_E_DEVICE && err[0], "h0 without a device: %d '%s'", rc, err);
    if (bc.intervals)
        t_free(NULL, bc.intervals);

    /* Device-resident input: rips claims points in device memory in a
     * record of its own, and input_to_host copies such input; without a
     * device it fails cleanly. */
    uint32_t device_records = 0;
    for (uint32_t k = 0; k < n_caps; k++)
        if (caps[k].features & TOPOML_CAP_DEVICE_INPUT) {
            device_records++;
            CHECK(caps[k].op == TOPOML_OP_RIPS && caps[k].inputs == (1u << TOPOML_INPUT_POINTS),
                  "device-input record %u: op %u inputs 0x%x", k, caps[k].op, caps[k].inputs);
        }
    CHECK(device_records == 1, "%u device-input records", device_records);
    CHECK(be->struct_size >= sizeof(topoml_backend_v1) && be->input_to_host,
          "no input_to_host entry");
    if (be->input_to_host && probe != TOPOML_OK) {
        topoml_input_v1 dev = in;
        dev.memory = TOPOML_MEMORY_CUDA;
        dev.device = 0;
        err[0] = '\0';
        double back[6];
        rc = be->input_to_host(state, &call, &dev, back);
        CHECK(rc == TOPOML_E_DEVICE && err[0], "input_to_host without a device: %d '%s'", rc, err);
        err[0] = '\0';
        rc = be->input_to_host(state, &call, &in, back); /* host memory: not its job */
        CHECK(rc == TOPOML_E_INVALID && err[0], "input_to_host on host memory: %d '%s'", rc, err);
    }

    /* A bad call struct is refused before anything else. */
    topoml_call_v1 short_call = call;
    short_call.struct_size = 8;
    CHECK(be->distances(state, &short_call, &in, dist) == TOPOML_E_INVALID,
          "short call struct accepted");

    be->destroy(state);
    CHECK(live_blocks == 0, "%ld blocks from the host allocator not freed", live_blocks);
    dlclose(so);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
