/*
 * threads.c — topoml-backend-threads: Vietoris–Rips barcodes on every core
 * this process may use. The engine is the scalar reference's
 * (plugins/scalar/rips.c, compiled in, exactly the same arithmetic); this
 * plugin lends it a pool of POSIX threads (pool.c), on which it enumerates
 * the columns of each dimension >= 2, tests them for apparent pairs and
 * sorts them — most of the time of a dense complex — and reduces the
 * columns of each dimension >= 1 lock-free, with no serial phase: the
 * workers take the columns in chunks and claim pivots in a shared table by
 * compare-and-swap, the smaller column winning (with cocycles asked for, in
 * batches with a serial phase instead). The barcode is the reference's, bit
 * for bit, whatever the thread count.
 *
 * A plugin file: it includes topoml/plugin.h and the scalar engine's
 * headers only, and links nothing of the core.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pool.h"
#include "rips.h"
#include "topoml/plugin.h"

#define ALL_METRICS ((1u << TOPOML_METRIC_COUNT) - 1u)
#define BOTH_DTYPES ((1u << TOPOML_F32) | (1u << TOPOML_F64))
#define ALL_INPUTS ((1u << TOPOML_INPUT_KIND_COUNT) - 1u)

/* What runs where, for `topoml backends` and the certificates. */
#define THREADS_SCHEDULE                                                                           \
    "columns=threads apparent-pairs=threads sort=threads reduction=threads "                       \
    "reduction-scheme=lock-free-cas cocycles-reduction-scheme=batched-two-phase "                  \
    "threads=sched_getaffinity"

/* An input whose complete flag complex has fewer simplices than this in
 * dimensions 2 .. max_dim (the part the pool shares) runs on the calling
 * thread alone: its whole enumeration takes less time than starting the
 * threads and merging their sorted runs (docs/notes/bench-cpu.md, "Small
 * inputs"). A bound on the complete complex, so a threshold only makes the
 * real count smaller: nothing that would gain from threads is kept from them. */
#define THREADS_MIN_SIMPLICES 100000.0

/* sum of C(n, k + 1) for k = 2 .. max_dim, stopping once it reaches
 * THREADS_MIN_SIMPLICES (in double: C(n, k + 1) overflows 64 bits). */
static bool small_input(uint64_t n, uint32_t max_dim)
{
    double c = (double)n * (double)(n - 1) * (double)(n - 2) / 6.0, sum = 0.0;
    for (uint32_t k = 2; k <= max_dim && n >= k + 1; k++) {
        sum += c;
        if (sum >= THREADS_MIN_SIMPLICES)
            return false;
        c = c * (double)(n - k - 1) / (double)(k + 2);
    }
    return true;
}

static const topoml_capability_v1 threads_caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_RIPS, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS,
     SCALAR_RIPS_MAX_DIM, SCALAR_RIPS_MAX_MODULUS, TOPOML_CAP_COCYCLES, 0, "cpu",
     THREADS_SCHEDULE},
};

static int threads_probe(void *state, char *why, size_t why_size)
{
    (void)state;
    if (why && why_size)
        snprintf(why, why_size, "%u CPUs available to this process", threads_available());
    return TOPOML_OK;
}

static int threads_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n)
{
    (void)state;
    *caps = threads_caps;
    *n = (uint32_t)(sizeof threads_caps / sizeof threads_caps[0]);
    return TOPOML_OK;
}

static int threads_rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                        const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    (void)state;
    /* A core older than 0.2 hands a shorter call: the default then. */
    uint32_t wanted = call && call->struct_size >= offsetof(topoml_call_v1, n_threads) +
                                                       sizeof call->n_threads
                          ? call->n_threads
                          : 0;
    bool small = in && params && small_input(in->n, params->max_dim);
    /* A point cloud's distances are worth the threads on their own when
     * there are enough of them: then the pool is lent for those only. */
    const uint32_t n_threads = threads_for(wanted);
    bool rows = small && n_threads > 1 && in && in->kind == TOPOML_INPUT_POINTS &&
                (double)in->n * (double)(in->n - (in->n > 0)) / 2.0 *
                        (double)(in->dim ? in->dim : 1) >=
                    (double)SCALAR_RIPS_POOL_MIN_PAIR_WORK;
    threads_pool pool;
    if (threads_pool_init(&pool, small && !rows ? 1 : n_threads) != 0) {
        if (call && call->error && call->error_size)
            snprintf(call->error, call->error_size, "threads: cannot make a mutex");
        return TOPOML_E_INTERNAL;
    }
    if (call && call->struct_size >= TOPOML_CALL_V1_MIN_SIZE && call->log) {
        char line[160];
        snprintf(line, sizeof line, "threads: %u threads (%u asked, %u available)%s",
                 pool.n_threads, wanted, threads_available(),
                 rows    ? ": the distances on them, a complex this small on one"
                 : small ? ": an input this small runs on one"
                         : "");
        call->log(call->host_data, TOPOML_LOG_INFO, line);
    }
    scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                             threads_pool_unlock, 0, NULL, 0, NULL};
    int rc = rows ? scalar_rips_pooled_distances(call, in, params, NULL, &lend, out)
                  : scalar_rips_pooled(call, in, params, NULL, &lend, out);
    threads_pool_destroy(&pool);
    return rc;
}

static const topoml_backend_v1 threads_vtable = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = 1,
    .name = "threads",
    .version = "0.1.0",
    .vendor = "topoml",
    .description = "the scalar Rips engine with its column enumeration and reduction on every core",
    .create = NULL,
    .destroy = NULL,
    .probe = threads_probe,
    .capabilities = threads_capabilities,
    .rips = threads_rips,
};

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version,
                                                  const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    *abi_version = 1;
    *backend = &threads_vtable;
    return TOPOML_OK;
}
