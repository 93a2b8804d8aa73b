/*
 * test_cuda_emulated.cpp — the device code of pairs.cuh (the tiled distance
 * and edge kernels) and image.cuh (persistence images) run on the host, so
 * that their index arithmetic, shared memory staging, barriers and order of
 * operations are checked on any machine, GPU or not, against the reference
 * (metric.h, and image.c where it is built), bit for bit: on the host the
 * kernels call glibc's erfc and pow, as the reference does.
 *
 * How: the kernels are compiled by the host C++ compiler with a small CUDA
 * emulation. Each block's 256 threads are cooperative fibers (ucontext):
 * __syncthreads() switches to the next fiber, so every thread reaches a
 * barrier before any passes it; between barriers the threads run in a random
 * order, so a missing barrier shows as a wrong result; and a block whose
 * threads disagree on the number of barriers is reported. __shared__ arrays are static (one block
 * runs at a time). The round-to-nearest intrinsics become the plain IEEE
 * operations they are (this file is built with -ffp-contract=off). Blocks
 * run one after the other, which is one of the schedules a GPU may choose;
 * the kernels' results do not depend on the schedule (edges: see the sort).
 */
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define __shared__ static
#define __launch_bounds__(...)

#include <cuda_runtime_api.h> /* uint3, dim3 */

static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

namespace emu
{
constexpr int THREADS = 256;
static ucontext_t scheduler, fiber[THREADS];
static std::vector<char> stack[THREADS];
static int current, barriers[THREADS];
static bool finished[THREADS];
static const std::function<void()> *body;
static int divergences;

static void entry()
{
    (*body)();
    finished[current] = true;
}

static void sync()
{
    barriers[current]++;
    swapcontext(&fiber[current], &scheduler);
}

/* One block: run each fiber up to its next barrier (or its end), round by
 * round, until all have finished. */
static void run_block(const std::function<void()> &f)
{
    body = &f;
    for (int t = 0; t < THREADS; t++) {
        stack[t].resize(1 << 17);
        getcontext(&fiber[t]);
        fiber[t].uc_stack.ss_sp = stack[t].data();
        fiber[t].uc_stack.ss_size = stack[t].size();
        fiber[t].uc_link = &scheduler;
        makecontext(&fiber[t], entry, 0);
        finished[t] = false;
        barriers[t] = 0;
    }
    /* Between two barriers the threads run in a new random order each
     * time, so a read that is not separated by a barrier from the write it
     * depends on sees the old value in some round. */
    static int order[THREADS];
    static uint64_t seed = 1;
    for (int t = 0; t < THREADS; t++)
        order[t] = t;
    for (bool running = true; running;) {
        running = false;
        for (int k = THREADS - 1; k > 0; k--) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int r = (int)((seed >> 33) % (uint64_t)(k + 1)), x = order[k];
            order[k] = order[r];
            order[r] = x;
        }
        for (int k = 0; k < THREADS; k++) {
            const int t = order[k];
            if (finished[t])
                continue;
            current = t;
            threadIdx.x = t;
            swapcontext(&scheduler, &fiber[t]);
            running = true;
        }
        /* After a round every live fiber waits at the same barrier. */
        int live_barrier = -1;
        for (int t = 0; t < THREADS; t++)
            if (!finished[t]) {
                if (live_barrier >= 0 && barriers[t] != live_barrier)
                    divergences++;
                live_barrier = barriers[t];
            }
        if (live_barrier >= 0)
            for (int t = 0; t < THREADS; t++)
                if (finished[t] && barriers[t] < live_barrier)
                    divergences++; /* it skipped a barrier the others wait at */
    }
}

/* kernel<<<grid, 256>>>: blocks in order. */
static void launch(unsigned grid, const std::function<void()> &kernel)
{
    gridDim.x = grid;
    blockDim.x = THREADS;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        run_block(kernel);
    }
}
} // namespace emu

#define __syncthreads() emu::sync()
static inline float __fadd_rn(float a, float b)
{
    return a + b;
}
static inline float __fsub_rn(float a, float b)
{
    return a - b;
}
static inline float __fmul_rn(float a, float b)
{
    return a * b;
}
static inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
static inline float __fsqrt_rn(float a)
{
    return std::sqrt(a);
}
static inline double __dadd_rn(double a, double b)
{
    return a + b;
}
static inline double __dsub_rn(double a, double b)
{
    return a - b;
}
static inline double __dmul_rn(double a, double b)
{
    return a * b;
}
static inline double __ddiv_rn(double a, double b)
{
    return a / b;
}
static inline double __dsqrt_rn(double a)
{
    return std::sqrt(a);
}
static inline long long __double_as_longlong(double d)
{
    long long x;
    memcpy(&x, &d, sizeof x);
    return x;
}
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    *p += v;
    return old;
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = *p;
    if (v < old)
        *p = v;
    return old;
}

#include "metric.h"
#include "pairs.cuh"
#ifdef TMC_HAVE_IMAGE
#include "image.cuh"
extern "C" {
#include "image.h"
}
#endif

using namespace tmc;

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static double uniform()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

template <typename T> static std::vector<T> cloud(uint64_t n, uint64_t dim, bool grid)
{
    std::vector<T> p(n * dim);
    for (auto &x : p)
        x = grid ? (T)std::floor(uniform() * 4 - 2) : (T)(uniform() * 2 - 1);
    if (n > 2 && dim) /* a repeated point and a zero vector */
        for (uint64_t k = 0; k < dim; k++) {
            p[2 * dim + k] = p[k];
            p[(n - 1) * dim + k] = 0;
        }
    return p;
}

static double reference(uint32_t metric, const float *x, const float *y, uint64_t dim)
{
    return scalar_dist_f32((topoml_metric)metric, x, y, dim);
}
static double reference(uint32_t metric, const double *x, const double *y, uint64_t dim)
{
    return scalar_dist_f64((topoml_metric)metric, x, y, dim);
}

template <typename T>
static std::vector<T> norms_of(const std::vector<T> &p, uint64_t n, uint64_t dim)
{
    std::vector<T> norms(n);
    emu::launch((unsigned)((n + 255) / 256),
                [&] { norms_kernel<T>(p.data(), n, dim, norms.data()); });
    return norms;
}

/* The distance kernel over tiles [t0, t1) into a band starting at condensed
 * entry `base`, against metric.h for every entry it must write, and no
 * entry outside the band touched. */
template <typename T, typename O, int M>
static void check_distances(uint64_t n, uint64_t dim, bool grid)
{
    constexpr uint64_t TILE = tile_size<T>();
    std::vector<T> p = cloud<T>(n, dim, grid);
    std::vector<T> norms = norms_of(p, n, dim);
    const uint64_t rows = (n + TILE - 1) / TILE, total = tmc_row_start(n);
    /* Two bands when there are two tile rows or more: rows [0, 1) and the
     * rest, as the host code would cut them with a tight byte limit. */
    std::vector<uint64_t> cuts = {0};
    if (rows > 1)
        cuts.push_back(1);
    cuts.push_back(rows);
    std::vector<O> out(total + 2, (O)-7);
    for (size_t b = 0; b + 1 < cuts.size(); b++) {
        const uint64_t first = tmc_row_start(cuts[b] * TILE);
        const uint64_t t0 = cuts[b] * (cuts[b] + 1) / 2, t1 = cuts[b + 1] * (cuts[b + 1] + 1) / 2;
        O *band = out.data() + 1 + first;
        emu::launch((unsigned)(t1 - t0), [&] {
            distances_kernel<T, O, M>(p.data(), norms.data(), n, dim, t0, first, band);
        });
    }
    CHECK(out[0] == (O)-7 && out[total + 1] == (O)-7, "written outside the output (n=%llu)",
          (unsigned long long)n);
    int bad = 0;
    for (uint64_t i = 1; i < n && bad < 3; i++)
        for (uint64_t j = 0; j < i && bad < 3; j++) {
            O want = (O)reference(M, &p[i * dim], &p[j * dim], dim);
            O got = out[1 + tmc_row_start(i) + j];
            if (memcmp(&want, &got, sizeof want) != 0) {
                bad++;
                CHECK(false, "%s->%s metric %d n=%llu dim=%llu: d(%llu,%llu) = %.17g, want %.17g",
                      sizeof(T) == 4 ? "f32" : "f64", sizeof(O) == 4 ? "f32" : "f64", M,
                      (unsigned long long)n, (unsigned long long)dim, (unsigned long long)i,
                      (unsigned long long)j, (double)got, (double)want);
            }
        }
}

/* Count, emit, then the two sorts of edges.cu (by packed pair, then stably
 * by distance key), against the reference's sorted edge list. */
template <typename T, int M> static void check_edges(uint64_t n, uint64_t dim, double threshold)
{
    constexpr uint64_t TILE = tile_size<T>();
    std::vector<T> p = cloud<T>(n, dim, true);
    std::vector<T> norms = norms_of(p, n, dim);
    const uint64_t rows = (n + TILE - 1) / TILE, tiles = rows * (rows + 1) / 2;
    unsigned long long counters[2] = {0, ~0ull};
    emu::launch((unsigned)tiles, [&] {
        edges_kernel<T, M, false>(p.data(), norms.data(), n, dim, 0, threshold, &counters[0],
                                  &counters[1], nullptr, nullptr, 0);
    });
    const uint64_t m = counters[0];
    std::vector<uint64_t> keys(m + 1, 0), vals(m + 1, 0);
    counters[0] = 0;
    emu::launch((unsigned)tiles, [&] {
        edges_kernel<T, M, true>(p.data(), norms.data(), n, dim, 0, threshold, &counters[0],
                                 &counters[1], keys.data(), vals.data(), m);
    });
    CHECK(counters[0] == m, "emitted %llu of %llu", counters[0], (unsigned long long)m);
    CHECK(counters[1] == ~0ull, "a NaN distance was reported");
    std::vector<uint64_t> order(m);
    for (uint64_t k = 0; k < m; k++)
        order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint64_t a, uint64_t b) { return vals[a] < vals[b]; });
    std::stable_sort(order.begin(), order.end(),
                     [&](uint64_t a, uint64_t b) { return keys[a] < keys[b]; });
    std::vector<topoml_edge> want;
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double d = reference(M, &p[i * dim], &p[j * dim], dim);
            if (d <= threshold)
                want.push_back({d, (uint32_t)j, (uint32_t)i});
        }
    std::stable_sort(want.begin(), want.end(), [](const topoml_edge &a, const topoml_edge &b) {
        return a.d != b.d ? a.d < b.d : a.i != b.i ? a.i < b.i : a.j < b.j;
    });
    CHECK(want.size() == m, "metric %d n=%llu t=%g: %llu edges, want %zu", M, (unsigned long long)n,
          threshold, (unsigned long long)m, want.size());
    for (uint64_t k = 0; k < m && k < want.size(); k++) {
        double d;
        memcpy(&d, &keys[order[k]], sizeof d);
        const uint64_t v = vals[order[k]];
        if (d != want[k].d || v / n != want[k].i || v % n != want[k].j) {
            CHECK(false, "metric %d n=%llu edge %llu: (%.17g,%llu,%llu), want (%.17g,%u,%u)", M,
                  (unsigned long long)n, (unsigned long long)k, d, (unsigned long long)(v / n),
                  (unsigned long long)(v % n), want[k].d, want[k].i, want[k].j);
            break;
        }
    }
}

template <typename T, int M> static void check_metric()
{
    static const uint64_t ns[] = {1, 2, 3, 17, 129, 140};
    static const uint64_t dims[] = {0, 1, 3, 31, 33, 70};
    for (uint64_t n : ns)
        for (uint64_t dim : dims)
            if (n * dim <= 140 * 70) {
                check_distances<T, T, M>(n, dim, false);
                check_distances<T, T, M>(n, dim, true);
            }
    check_distances<T, double, M>(150, 5, false);
    check_edges<T, M>(150, 3, 1.5);
    check_edges<T, M>(70, 4, INFINITY);
    check_edges<T, M>(40, 2, -1);
}

template <typename T> static void check_dtype()
{
    check_metric<T, TOPOML_METRIC_EUCLIDEAN>();
    check_metric<T, TOPOML_METRIC_SQEUCLIDEAN>();
    check_metric<T, TOPOML_METRIC_MANHATTAN>();
    check_metric<T, TOPOML_METRIC_CHEBYSHEV>();
    check_metric<T, TOPOML_METRIC_COSINE>();
}

/* A NaN coordinate: the count pass names the smallest pair (j, i) packed as
 * j*n + i whose distance is NaN. */
static void check_nan_is_reported()
{
    const uint64_t n = 10, dim = 2;
    std::vector<double> p = cloud<double>(n, dim, false);
    p[7 * dim + 1] = NAN;
    std::vector<double> norms(n);
    unsigned long long counters[2] = {0, ~0ull};
    emu::launch(1, [&] {
        edges_kernel<double, TOPOML_METRIC_EUCLIDEAN, false>(p.data(), norms.data(), n, dim, 0,
                                                             INFINITY, &counters[0], &counters[1],
                                                             nullptr, nullptr, 0);
    });
    CHECK(counters[1] == 0 * n + 7, "bad pair %llu, want d(7,0)", counters[1]);
    CHECK(counters[0] == 36, "%llu finite distances, want 36", counters[0]);
}

#ifdef TMC_HAVE_IMAGE
/* Images of a few diagrams (one empty, some infinite points), the points in
 * chunks of 7 as image.cu takes them in chunks, the grid smaller than the
 * work so the grid-stride loops go round: against scalar_image. */
static void check_images()
{
    const uint64_t offsets[] = {0, 9, 9, 30, 31, 60};
    const uint64_t n_diagrams = 5, total = offsets[n_diagrams];
    std::vector<topoml_pair> pairs(total);
    for (uint64_t q = 0; q < total; q++) {
        double b = uniform() * 2, l = uniform() * 1.2;
        pairs[q] = {b, q % 11 == 3 ? INFINITY : b + l};
    }
    for (uint32_t weight = 0; weight < 3; weight++)
        for (uint32_t infinite = 0; infinite < 2; infinite++) {
            topoml_image_params_v1 p;
            memset(&p, 0, sizeof p);
            p.struct_size = sizeof p;
            p.weight = weight;
            p.weight_max = 0.8;
            p.weight_power = 1.5;
            p.sigma = weight == 2 ? 0.03 : 0.15;
            p.birth_min = -0.3;
            p.birth_max = 2.3;
            p.pers_min = 0;
            p.pers_max = 1.5;
            p.width = 13;
            p.height = 11;
            p.infinite = infinite;
            p.clip_death = 2.6;
            const uint64_t pixels = (uint64_t)p.width * p.height;
            std::vector<double> want(n_diagrams * pixels), got(n_diagrams * pixels, 0.0);
            char err[256] = "";
            topoml_call_v1 call;
            memset(&call, 0, sizeof call);
            call.struct_size = sizeof call;
            call.error = err;
            call.error_size = sizeof err;
            int rc = scalar_image(&call, &p, n_diagrams, offsets, pairs.data(), want.data());
            CHECK(rc == TOPOML_OK, "scalar_image: %d %s", rc, err);
            const image_geometry g = image_geometry_of(&p);
            const uint64_t chunk = 7;
            std::vector<double> ex(chunk * g.W), ey(chunk * g.H);
            uint64_t k0 = 0, k1 = 0;
            for (uint64_t q0 = offsets[0]; q0 < total; q0 += chunk) {
                const uint64_t count = total - q0 < chunk ? total - q0 : chunk;
                image_chunk_diagrams(offsets, n_diagrams, q0, count, &k0, &k1);
                if (k1 == k0)
                    continue;
                emu::launch(
                    2, [&] { factors_kernel(g, pairs.data(), q0, count, ex.data(), ey.data()); });
                emu::launch(3, [&] {
                    pixels_kernel(g, offsets, k0, k1, q0, count, ex.data(), ey.data(),
                                  got.data() + k0 * pixels);
                });
            }
            for (uint64_t k = 0; k < want.size(); k++)
                if (memcmp(&want[k], &got[k], sizeof(double)) != 0) {
                    CHECK(false, "image weight %u infinite %u: pixel %llu = %.17g, want %.17g",
                          weight, infinite, (unsigned long long)k, got[k], want[k]);
                    break;
                }
        }
}
#endif

int main()
{
    check_dtype<float>();
    check_dtype<double>();
    check_nan_is_reported();
#ifdef TMC_HAVE_IMAGE
    check_images();
#endif
    CHECK(emu::divergences == 0, "%d blocks where threads disagreed on the barriers",
          emu::divergences);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
