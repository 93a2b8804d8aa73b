/*
 * features.c — vectorisations and summaries of one persistence diagram:
 * Betti curves, persistence landscapes, persistent entropy and total
 * persistence, plus the grid and infinite-point helpers they share and the
 * image parameter defaults and checks.
 *
 * Distances between diagrams are in diagram_distance.c, diagram files in
 * diagram_io.c, the image computation in the backends (plugins/scalar/image.c
 * is the reference).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compute/features_internal.h"
#include "image.h"

int tm_check_pairs(topoml_context *ctx, const char *what, const topoml_pair *pairs, uint64_t n)
{
    if (n > 0 && pairs == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: %llu pairs but no array", what,
                        (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        double b = pairs[i].birth, d = pairs[i].death;
        if (isnan(b) || isnan(d))
            return tm_error(ctx, TOPOML_E_INVALID, "%s: pair %llu is NaN", what,
                            (unsigned long long)i);
        if (!(b <= d))
            return tm_error(ctx, TOPOML_E_INVALID, "%s: pair %llu has death %g < birth %g", what,
                            (unsigned long long)i, d, b);
    }
    return TOPOML_OK;
}

char *tm_format_double(char *buf, double x)
{
    if (isnan(x))
        return strcpy(buf, "nan");
    if (isinf(x))
        return strcpy(buf, x > 0 ? "inf" : "-inf");
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, TM_DOUBLE_BUF, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

static int check_grid(topoml_context *ctx, const char *what, const double *grid, uint64_t n_grid,
                      const void *out)
{
    if (n_grid > 0 && (grid == NULL || out == NULL))
        return tm_error(ctx, TOPOML_E_INVALID, "%s: no grid or no output array", what);
    for (uint64_t i = 0; i < n_grid; i++)
        if (isnan(grid[i]))
            return tm_error(ctx, TOPOML_E_INVALID, "%s: grid value %llu is NaN", what,
                            (unsigned long long)i);
    return TOPOML_OK;
}

int topoml_grid(topoml_context *ctx, double lo, double hi, uint64_t n, double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (!isfinite(lo) || !isfinite(hi) || !(lo <= hi))
        return tm_error(ctx, TOPOML_E_INVALID, "grid: [%g, %g] must be finite with lo <= hi", lo,
                        hi);
    if (n < 1 || out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "grid: need at least one value and an array");
    /* lo + i*step would miss hi by rounding; interpolating from both ends
     * hits both exactly. */
    for (uint64_t i = 0; i < n; i++) {
        double t = n == 1 ? 0.0 : (double)i / (double)(n - 1);
        double v = i + 1 == n && n > 1 ? hi : lo * (1.0 - t) + hi * t;
        /* Rounding can take the sum a hair outside [lo, hi] (lo == hi near
         * DBL_MAX gives lo * (1 - t) + lo * t < lo): keep the grid inside. */
        out[i] = v < lo ? lo : v > hi ? hi : v;
    }
    return TOPOML_OK;
}

int topoml_pairs_finite(topoml_context *ctx, const topoml_pair *in, uint64_t n, uint32_t mode,
                        double clip_death, topoml_pair *out, uint64_t *n_out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(ctx, "pairs_finite", in, n);
    if (st)
        return st;
    if ((n > 0 && out == NULL) || n_out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "pairs_finite: no output array");
    if (mode != TOPOML_INFINITE_DROP && mode != TOPOML_INFINITE_CLIP)
        return tm_error(ctx, TOPOML_E_INVALID, "pairs_finite: unknown mode %u", mode);
    if (mode == TOPOML_INFINITE_CLIP && !isfinite(clip_death))
        return tm_error(ctx, TOPOML_E_INVALID, "pairs_finite: clip_death %g is not finite",
                        clip_death);
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++) {
        topoml_pair p = in[i];
        if (isinf(p.death)) {
            if (mode == TOPOML_INFINITE_DROP)
                continue;
            if (clip_death < p.birth)
                return tm_error(ctx, TOPOML_E_INVALID,
                                "pairs_finite: clip_death %g is below the birth %g of pair %llu",
                                clip_death, p.birth, (unsigned long long)i);
            p.death = clip_death;
        }
        out[k++] = p; /* k <= i, so in == out is safe */
    }
    *n_out = k;
    return TOPOML_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Number of values in sorted v[0..n) that are <= t. */
static uint64_t count_le(const double *v, uint64_t n, double t)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int topoml_betti_curve(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                       const double *grid, uint64_t n_grid, uint64_t *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(ctx, "betti_curve", pairs, n);
    if (!st)
        st = check_grid(ctx, "betti_curve", grid, n_grid, out);
    if (st)
        return st;
    uint64_t bytes;
    if (!tm_mul_u64(n, 2 * sizeof(double), &bytes) || bytes > SIZE_MAX)
        return tm_error(ctx, TOPOML_E_OVERFLOW, "betti_curve: %llu pairs overflow the size type",
                        (unsigned long long)n);
    if ((st = tm_check_memory(ctx, bytes, "betti curve")))
        return st;
    double *births = tm_alloc(ctx, (size_t)bytes);
    if (births == NULL && bytes > 0)
        return tm_nomem(ctx, (size_t)bytes);
    double *deaths = births + n;
    for (uint64_t i = 0; i < n; i++) {
        births[i] = pairs[i].birth;
        deaths[i] = pairs[i].death;
    }
    qsort(births, n, sizeof(double), cmp_double);
    qsort(deaths, n, sizeof(double), cmp_double);
    /* birth <= death for every pair, so a pair with death <= t also has
     * birth <= t, and #{birth <= t < death} = #{birth <= t} - #{death <= t}. */
    for (uint64_t i = 0; i < n_grid; i++)
        out[i] = count_le(births, n, grid[i]) - count_le(deaths, n, grid[i]);
    tm_free(ctx, births);
    return TOPOML_OK;
}

int topoml_landscapes(topoml_context *ctx, const topoml_pair *pairs, uint64_t n, uint32_t levels,
                      const double *grid, uint64_t n_grid, double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(ctx, "landscapes", pairs, n);
    if (!st)
        st = check_grid(ctx, "landscapes", grid, n_grid, out);
    if (st)
        return st;
    if (levels == 0)
        return tm_error(ctx, TOPOML_E_INVALID, "landscapes: need at least one level");
    uint64_t cells;
    if (!tm_mul_u64(levels, n_grid, &cells) || cells > SIZE_MAX / sizeof(double))
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "landscapes: %u levels x %llu grid points overflow the size type", levels,
                        (unsigned long long)n_grid);
    if ((st = tm_check_memory(ctx, (uint64_t)levels * sizeof(double), "landscape levels")))
        return st;
    double *top = tm_alloc(ctx, (size_t)levels * sizeof(double));
    if (top == NULL)
        return tm_nomem(ctx, (size_t)levels * sizeof(double));

    for (uint64_t g = 0; g < n_grid; g++) {
        double t = grid[g];
        /* top[0..filled) holds the largest tent values so far, descending. */
        uint32_t filled = 0;
        for (uint64_t i = 0; i < n; i++) {
            double v = fmin(t - pairs[i].birth, pairs[i].death - t);
            if (!(v > 0.0))
                continue;
            if (filled == levels && v <= top[levels - 1])
                continue;
            uint32_t j = filled < levels ? filled++ : levels - 1;
            while (j > 0 && top[j - 1] < v) {
                top[j] = top[j - 1];
                j--;
            }
            top[j] = v;
        }
        for (uint32_t k = 0; k < levels; k++)
            out[(uint64_t)k * n_grid + g] = k < filled ? top[k] : 0.0;
    }
    tm_free(ctx, top);
    return TOPOML_OK;
}

int topoml_persistent_entropy(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                              double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(ctx, "persistent_entropy", pairs, n);
    if (st)
        return st;
    if (out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "persistent_entropy: no output");
    /* The entropy depends on the lengths' ratios only: lengths are taken of
     * halves where a difference overflows (-1e308 to 1e308) and scaled by a
     * power of two (exact) so that their sum neither overflows nor loses the
     * small ones to underflow. */
    bool half = false;
    double big = 0.0;
    for (uint64_t i = 0; i < n; i++) {
        if (isinf(pairs[i].death))
            return tm_error(ctx, TOPOML_E_INVALID,
                            "persistent_entropy: pair %llu has infinite length; drop or clip "
                            "infinite points first",
                            (unsigned long long)i);
        half |= isinf(pairs[i].death - pairs[i].birth) != 0;
    }
    for (uint64_t i = 0; i < n; i++)
        big = fmax(big, half ? pairs[i].death * 0.5 - pairs[i].birth * 0.5
                             : pairs[i].death - pairs[i].birth);
    double e = 0.0;
    if (big > 0.0) {
        const int ex = ilogb(big);
        double total = 0.0;
        for (uint64_t i = 0; i < n; i++)
            total += scalbn(half ? pairs[i].death * 0.5 - pairs[i].birth * 0.5
                                 : pairs[i].death - pairs[i].birth,
                            -ex);
        for (uint64_t i = 0; i < n; i++) {
            double l = half ? pairs[i].death * 0.5 - pairs[i].birth * 0.5
                            : pairs[i].death - pairs[i].birth;
            double q = scalbn(l, -ex) / total;
            if (q > 0.0)
                e -= q * log(q);
        }
    }
    *out = e;
    return TOPOML_OK;
}

int topoml_total_persistence(topoml_context *ctx, const topoml_pair *pairs, uint64_t n, double q,
                             double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(ctx, "total_persistence", pairs, n);
    if (st)
        return st;
    if (!isfinite(q) || !(q > 0.0))
        return tm_error(ctx, TOPOML_E_INVALID,
                        "total_persistence: the degree must be finite and > 0, got %g", q);
    if (out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "total_persistence: no output");
    double s = 0.0;
    bool infinite = false;
    for (uint64_t i = 0; i < n; i++) {
        infinite |= isinf(pairs[i].death) != 0;
        double l = pairs[i].death - pairs[i].birth;
        s += q == 1.0 ? l : pow(l, q);
    }
    /* Of finite pairs, an infinite sum is one beyond double: say so rather
     * than answer inf as if a death were infinite. */
    if (isinf(s) && !infinite)
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "total_persistence: the sum of (death - birth)^%g overflows a double", q);
    *out = s;
    return TOPOML_OK;
}

void topoml_image_params_init(topoml_image_params_v1 *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof(*params));
    params->struct_size = sizeof(*params);
    params->weight = TOPOML_WEIGHT_CONSTANT;
    params->weight_max = 1.0;
    params->weight_power = 1.0;
    params->sigma = 0.1;
    params->birth_min = 0.0;
    params->birth_max = 1.0;
    params->pers_min = 0.0;
    params->pers_max = 1.0;
    params->width = 20;
    params->height = 20;
    params->infinite = TOPOML_INFINITE_DROP;
    params->clip_death = 0.0;
}

int tm_image_params_validate(topoml_context *ctx, const topoml_image_params_v1 *params,
                             uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs)
{
    char msg[256];
    msg[0] = '\0';
    int st = scalar_image_check(params, n_diagrams, offsets, pairs, msg, sizeof msg);
    return st == TOPOML_OK ? TOPOML_OK : tm_error(ctx, st, "%s", msg);
}
