/*
 * gate_fault.c — plugins for the gate's own tests: the scalar reference's
 * code under another name, each copy wrong in one of the ways that used to
 * get past the gate (-DGF_<KIND>): wrong only for Z/3, only for more than
 * 200 points, only with duplicate points, a NaN distance, a write past the
 * output, a crash for more than 150 points, wrong in Rips only for more
 * than 2000 points (larger than any case of the suite), wrong in the
 * finished dimensions it returns when the memory limit stops it, wrong from the 51st call on,
 * wrong when an environment variable is set, wrong unless run by
 * topoml-conformance, a write to stdout, a change to its input, a leak of
 * 64 MiB per call, and a capability claim (max_dim 10) it cannot keep
 * (wrong from dimension 4), one wrong in Rips only when the call allows it
 * exactly one thread (a single-thread path that the suite, run with the
 * default thread count, never takes), and one that is right but ignores
 * the memory limit (answers what the reference refuses). Each is built
 * into its own folder by tests/CMakeLists.txt and never installed.
 *
 * And the kinds no history-dependent check sees on a first call, each
 * right on every case the suite draws unless said otherwise: wrong only in
 * H2 and only when the number of points is a multiple of 7 (mod7); every
 * finite death of dimension >= 1 a few ulps late (ulps); an extra H1 bar a
 * few ulps long (tiny); one finite H0 bar dying at another length of the
 * input (h0); the earliest H1 bar left out when the number of points is a
 * multiple of 7, so that every value left is a length of the input and H0
 * is right (drop-h1: only a re-run sees it); and pairs at exactly the
 * threshold left out, in edges, H0 and Rips (drop-ties: the contract is
 * d <= t).
 *
 * "Wrong" is the subtle kind: the longest finite bar dies 10% of its length
 * late (or a distance is off by 10%), a well-formed answer that only a
 * comparison with the reference can tell from a right one.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scalar.h"
#include "topoml/plugin.h"

#ifndef GF_NAME
#error "GF_NAME must name the backend"
#endif

static topoml_backend_v1 vt;
static const topoml_backend_v1 *ref;

#if defined(GF_ULPS) || defined(GF_TINY)
/* A few ulps of x, upwards. */
static double ulps_up(double x, int k)
{
    while (k-- > 0)
        x = nextafter(x, INFINITY);
    return x;
}
#endif

#if defined(GF_MOD7) || defined(GF_ULPS) || defined(GF_TINY) || defined(GF_H0) || \
    defined(GF_DROP_H1)
#define GF_SUBTLE 1
/* The barcode made wrong in the way of this kind; `call` gives the host's
 * allocator (for a bar more). */
static void subtle(const topoml_call_v1 *call, const topoml_input_v1 *in,
                   const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    (void)call;
    (void)in;
    (void)params;
#if defined(GF_MOD7)
    if (in->n % 7 != 0 || params->max_dim < 2)
        return;
    topoml_interval *pick = NULL;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        topoml_interval *v = &out->intervals[k];
        if (v->dim == 2 && isfinite(v->death) &&
            (!pick || v->death - v->birth > pick->death - pick->birth))
            pick = v;
    }
    if (pick)
        pick->death += 0.1 * (pick->death - pick->birth);
#elif defined(GF_ULPS)
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        topoml_interval *v = &out->intervals[k];
        if (v->dim >= 1 && isfinite(v->death) && ulps_up(v->death, 3) <= params->threshold)
            v->death = ulps_up(v->death, 3);
    }
#elif defined(GF_TINY)
    uint64_t at = out->n_intervals;
    for (uint64_t k = 0; k < out->n_intervals; k++)
        if (out->intervals[k].dim == 1) {
            at = k;
            break;
        }
    if (at == out->n_intervals)
        return;
    topoml_interval *iv =
        call->realloc(call->host_data, out->intervals, (out->n_intervals + 1) * sizeof *iv);
    if (!iv)
        return;
    memmove(iv + at + 1, iv + at, (out->n_intervals - at) * sizeof *iv);
    iv[at].death = ulps_up(iv[at].birth, 3);
    out->intervals = iv;
    out->n_intervals++;
#elif defined(GF_H0)
    /* the shortest finite H0 bar dies at the longest one's length */
    topoml_interval *lo = NULL, *hi = NULL;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        topoml_interval *v = &out->intervals[k];
        if (v->dim != 0 || !isfinite(v->death) || !(v->death > 0))
            continue;
        lo = !lo || v->death < lo->death ? v : lo;
        hi = !hi || v->death > hi->death ? v : hi;
    }
    if (lo && hi && lo->death != hi->death)
        lo->death = hi->death;
#elif defined(GF_DROP_H1)
    if (in->n % 7 != 0)
        return;
    uint64_t at = out->n_intervals;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        const topoml_interval *v = &out->intervals[k];
        if (v->dim == 1 && (at == out->n_intervals || v->birth < out->intervals[at].birth))
            at = k;
    }
    if (at == out->n_intervals)
        return;
    memmove(out->intervals + at, out->intervals + at + 1,
            (out->n_intervals - at - 1) * sizeof *out->intervals);
    out->n_intervals--;
#endif
}
#endif

#ifdef GF_DROP_TIES
/* Pairs at exactly the threshold left out: the op runs just below it. */
static double below(double threshold)
{
    return isfinite(threshold) && threshold > 0 ? nextafter(threshold, 0) : threshold;
}

static int edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    return ref->edges(state, call, in, below(threshold), out, n_out);
}

static int h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
              double threshold, topoml_barcode_v1 *out)
{
    return ref->h0(state, call, in, below(threshold), out);
}
#endif

#if defined(GF_H0)
static int h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
              double threshold, topoml_barcode_v1 *out)
{
    int rc = ref->h0(state, call, in, threshold, out);
    topoml_rips_params_v1 p = {.struct_size = sizeof p, .threshold = threshold};
    if (rc == TOPOML_OK)
        subtle(call, in, &p, out);
    return rc;
}
#endif

/* Make a right barcode wrong: the longest finite bar of the highest
 * dimension that has one dies late. */
static void corrupt_barcode(topoml_barcode_v1 *out)
{
    topoml_interval *pick = NULL;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        topoml_interval *v = &out->intervals[k];
        if (isfinite(v->death) && (!pick || v->dim > pick->dim ||
                                   (v->dim == pick->dim &&
                                    v->death - v->birth > pick->death - pick->birth)))
            pick = v;
    }
    if (pick)
        pick->death += 0.1 * (pick->death - pick->birth) + 1e-3;
}

/* Make right distances wrong: the middle one is 10% too long. */
static void corrupt_distances(const topoml_input_v1 *in, void *out)
{
    uint64_t pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
    if (pairs == 0)
        return;
    if (in->dtype == TOPOML_F32)
        ((float *)out)[pairs / 2] = ((float *)out)[pairs / 2] * 1.1f + 1e-3f;
    else
        ((double *)out)[pairs / 2] = ((double *)out)[pairs / 2] * 1.1 + 1e-3;
}

/* Does the behaviour turn wrong for this call? One answer per kind. */
static unsigned long calls;

#ifdef GF_DUPLICATES
static bool has_duplicates(const topoml_input_v1 *in)
{
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++)
            if (in->edges[e].d == 0)
                return true;
        return false;
    }
    if (in->kind == TOPOML_INPUT_CONDENSED) {
        uint64_t pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
        for (uint64_t k = 0; k < pairs; k++)
            if ((in->dtype == TOPOML_F32 ? ((const float *)in->data)[k]
                                         : ((const double *)in->data)[k]) == 0)
                return true;
        return false;
    }
    size_t row = (size_t)in->dim * (in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double));
    const char *p = in->data;
    for (uint64_t i = 1; i < in->n; i++)
        for (uint64_t j = 0; j < i; j++)
            if (memcmp(p + i * row, p + j * row, row) == 0)
                return true;
    return false;
}
#endif

#ifdef GF_EXE
static bool under_conformance(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    const char *base = strrchr(self, '/');
    return strcmp(base ? base + 1 : self, "topoml-conformance") == 0;
}
#endif

static bool turns_wrong(const topoml_input_v1 *in, uint32_t modulus, uint32_t max_dim)
{
    (void)in;
    (void)modulus;
    (void)max_dim;
    calls++;
#if defined(GF_ZP3)
    return modulus == 3;
#elif defined(GF_BIG200)
    return in->n > 200;
#elif defined(GF_HUGE)
    /* past every size the suite tries (its largest Rips case: 1001 points) */
    return in->n > 2000 && max_dim >= 1;
#elif defined(GF_DUPLICATES)
    return has_duplicates(in);
#elif defined(GF_CALL51)
    return calls >= 51;
#elif defined(GF_ENV)
    return getenv("TOPOML_TEST_FAULT_TRIGGER") != NULL;
#elif defined(GF_EXE)
    return !under_conformance();
#elif defined(GF_MAXDIM)
    return max_dim >= 4;
#else
    return false;
#endif
}

#ifdef GF_LEAK
static void *volatile last_scratch;
#endif

#ifdef GF_NO_LIMIT
/* Right, but blind to call->max_memory: it answers calls that the
 * reference refuses, so a re-run on the reference cannot check them. */
static topoml_call_v1 unlimited(const topoml_call_v1 *call)
{
    topoml_call_v1 c = *call;
    c.max_memory = 0;
    return c;
}

static int edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    topoml_call_v1 c = unlimited(call);
    return ref->edges(state, &c, in, threshold, out, n_out);
}
#endif

static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
#ifdef GF_SEGV150
    if (in->n > 150) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
#endif
#ifdef GF_STDOUT
    /* A debugging print left in. */
    printf("rips: %llu points\n", (unsigned long long)in->n);
    fflush(stdout);
#endif
#ifdef GF_LEAK
    /* Scratch memory that is never freed, touched so that it is real. */
    char *scratch = malloc((size_t)64 << 20);
    if (scratch)
        memset(scratch, 1, (size_t)64 << 20);
    last_scratch = scratch; /* kept where the compiler cannot drop it */
#endif
    bool wrong = turns_wrong(in, params->modulus, params->max_dim);
#ifdef GF_THREADS1
    wrong = call->n_threads == 1;
#endif
#ifdef GF_NO_LIMIT
    topoml_call_v1 c = unlimited(call);
    call = &c;
#endif
#ifdef GF_DROP_TIES
    topoml_rips_params_v1 cut = *params;
    cut.threshold = below(params->threshold);
    params = &cut;
#endif
    int rc = ref->rips(state, call, in, params, out);
#ifdef GF_SUBTLE
    if (rc == TOPOML_OK)
        subtle(call, in, params, out);
#endif
#ifdef GF_MODIFIES_INPUT
    /* Scales the caller's points in place "to normalise" them. */
    if (in->kind == TOPOML_INPUT_POINTS && in->dtype == TOPOML_F64 && in->n)
        ((double *)in->data)[0] += 0.5;
#endif
    if (rc == TOPOML_OK && wrong)
        corrupt_barcode(out);
#ifdef GF_PARTIAL
    /* Right when it finishes; the dimensions it hands back when the memory
     * limit stops it are wrong. */
    if (rc == TOPOML_E_LIMIT && out->n_intervals)
        corrupt_barcode(out);
#endif
    return rc;
}

static int distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out)
{
    bool wrong = turns_wrong(in, 0, 0);
#if defined(GF_DUPLICATES) || defined(GF_ZP3)
    wrong = false; /* a Rips-only fault */
#endif
    int rc = ref->distances(state, call, in, out);
    if (rc != TOPOML_OK)
        return rc;
    uint64_t pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
    (void)pairs;
#ifdef GF_NAN64
    if (in->n > 64) {
        if (in->dtype == TOPOML_F32)
            ((float *)out)[pairs / 3] = NAN;
        else
            ((double *)out)[pairs / 3] = NAN;
    }
#endif
#ifdef GF_PAST100
    /* An off-by-one in the loop bound: one element past the output. */
    if (in->n > 100) {
        if (in->dtype == TOPOML_F32)
            ((float *)out)[pairs] = 1.0f;
        else
            ((double *)out)[pairs] = 1.0;
    }
#endif
    if (wrong)
        corrupt_distances(in, out);
    return rc;
}

#if defined(GF_ENV) || defined(GF_EXE)
/* Persistence images turn wrong as the other ops do (the middle pixel of
 * each image 10% too bright): a fault of these kinds depends on nothing of
 * the input. */
static int image(void *state, const topoml_call_v1 *call, const topoml_image_params_v1 *p,
                 uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                 double *out)
{
    int rc = ref->image(state, call, p, n_diagrams, offsets, pairs, out);
    const uint64_t cells = (uint64_t)p->width * p->height;
    if (rc == TOPOML_OK && cells && turns_wrong(NULL, 0, 0))
        for (uint64_t d = 0; d < n_diagrams; d++)
            out[d * cells + cells / 2] = out[d * cells + cells / 2] * 1.1 + 1e-3;
    return rc;
}
#endif

#ifdef GF_MAXDIM
/* The scalar records, with Rips claimed up to dimension 10 only. */
static topoml_capability_v1 claimed[8];
static int capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    const topoml_capability_v1 *c;
    uint32_t n;
    int rc = ref->capabilities(state, &c, &n);
    if (rc != TOPOML_OK || n > 8)
        return rc != TOPOML_OK ? rc : TOPOML_E_INTERNAL;
    memcpy(claimed, c, n * sizeof *c);
    for (uint32_t i = 0; i < n; i++)
        if (claimed[i].op == TOPOML_OP_RIPS)
            claimed[i].max_dim = 10;
    *caps = claimed;
    *n_caps = n;
    return TOPOML_OK;
}
#endif

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    ref = topoml_scalar_backend();
    vt = *ref;
    vt.name = GF_NAME;
    vt.version = "0.0.1";
    vt.vendor = "topoml tests";
    vt.description = "a copy of the scalar reference, wrong in one way, for the gate tests";
    vt.rips = rips;
    vt.distances = distances;
#if defined(GF_ENV) || defined(GF_EXE)
    vt.image = image;
#endif
#ifdef GF_MAXDIM
    vt.capabilities = capabilities;
#endif
#if defined(GF_NO_LIMIT) || defined(GF_DROP_TIES)
    vt.edges = edges;
#endif
#if defined(GF_DROP_TIES) || defined(GF_H0)
    vt.h0 = h0;
#endif
    *abi_version = 1;
    *backend = &vt;
    return TOPOML_OK;
}
