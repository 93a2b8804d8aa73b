/*
 * test_alloc_failure.c — the SQLite-style allocation-failure loop: run a
 * workload (context, parsing, distances, edges, barcodes) with an allocator
 * that fails the Nth allocation, for N = 1, 2, ... until the workload runs
 * without a failure. Every failure must surface as TOPOML_E_NOMEM with a
 * message, leak nothing, and leave the context usable.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/topoml.h"

#include "check_run.h"

static long fail_at; /* 0: never */
static long counter;
static long live;
static bool failed;

static void *t_alloc(void *u, size_t n)
{
    (void)u;
    if (++counter == fail_at) {
        failed = true;
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        live++;
    return p;
}
static void *t_realloc(void *u, void *p, size_t n)
{
    (void)u;
    if (++counter == fail_at) {
        failed = true;
        return NULL;
    }
    void *q = realloc(p, n);
    if (q && !p)
        live++;
    return q;
}
static void t_free(void *u, void *p)
{
    (void)u;
    if (p)
        live--;
    free(p);
}

static const char cloud[] = "0,0\n1,0\n0,1\n1,1\n0.5,0.5\n2,2\n2,3\n3,2\n";
static const char lower[] = "\n1\n2,1\n2,2,1\n3,2,2,1\n";

/* One step: OK, or NOMEM with a message. Anything else fails the test. */
static bool step_ok(topoml_context *ctx, int rc, const char *what)
{
    if (rc == TOPOML_OK)
        return true;
    ck_assert_msg(rc == TOPOML_E_NOMEM, "%s (fail_at %ld): status %d: %s", what, fail_at, rc,
                  ctx ? topoml_errmsg(ctx) : "");
    ck_assert_msg(ctx == NULL || topoml_errmsg(ctx)[0] != '\0', "%s: NOMEM without a message",
                  what);
    return false;
}

static int read_text(topoml_context *ctx, topoml_data **d, const char *text, topoml_format f)
{
    FILE *s = fmemopen((void *)text, strlen(text), "r");
    ck_assert_ptr_nonnull(s);
    int rc = topoml_data_read_stream(ctx, d, s, "memory", f);
    fclose(s);
    return rc;
}

/* The ops on an open context; returns after the first failure. */
static void ops(topoml_context *ctx)
{
    topoml_data *pts = NULL, *mat = NULL;
    void *dist = NULL;
    topoml_edge *edges = NULL;
    topoml_barcode *bc = NULL;
    uint64_t n;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    if (!step_ok(ctx, read_text(ctx, &pts, cloud, TOPOML_FORMAT_POINT_CLOUD), "read points"))
        goto done;
    if (!step_ok(ctx, read_text(ctx, &mat, lower, TOPOML_FORMAT_LOWER_DISTANCE), "read matrix"))
        goto done;
    if (!step_ok(ctx, topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F32, &dist, &n),
                 "distances"))
        goto done;
    if (!step_ok(ctx, topoml_edges(ctx, mat, TOPOML_METRIC_EUCLIDEAN, 2.0, &edges, &n), "edges"))
        goto done;
    int rc = topoml_barcode_compute(ctx, &bc, pts, &o);
    if (rc == TOPOML_E_UNSUPPORTED) { /* no Rips op in this build: H0 then */
        o.max_dim = 0;
        rc = topoml_barcode_compute(ctx, &bc, pts, &o);
    }
    if (!step_ok(ctx, rc, "barcode"))
        goto done;
    topoml_barcode_free(bc);
    bc = NULL;
    o.threshold = 1.5;
    step_ok(ctx, topoml_barcode_compute(ctx, &bc, mat, &o), "barcode with threshold");
done:
    topoml_barcode_free(bc);
    topoml_free(ctx, edges);
    topoml_free(ctx, dist);
    topoml_data_free(ctx, mat);
    topoml_data_free(ctx, pts);
}

static long run_loop(uint32_t flags)
{
    topoml_allocator a = {t_alloc, t_realloc, t_free, NULL};
    topoml_context_options opts = {.struct_size = sizeof opts, .flags = flags, .allocator = &a};
    long n;
    for (n = 1; n < 100000; n++) {
        fail_at = n;
        counter = 0;
        live = 0;
        failed = false;
        topoml_context *ctx = NULL;
        int rc = topoml_context_new(&ctx, &opts);
        if (step_ok(ctx, rc, "context")) {
            ops(ctx);
            if (failed) {
                /* The context must still work once memory is back. */
                fail_at = 0;
                ops(ctx);
            }
        }
        topoml_context_free(ctx);
        ck_assert_msg(live == 0, "fail_at %ld: %ld allocations leaked", n, live);
        if (!failed)
            break;
    }
    return n;
}

START_TEST(test_every_allocation_failure_is_nomem_without_leaks)
{
    long points = run_loop(TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS);
    ck_assert_int_gt(points, 10);
    fprintf(stderr, "allocation failure points tried (no plugins): %ld\n", points);
}
END_TEST

START_TEST(test_allocation_failures_while_loading_plugins)
{
    long points = run_loop(TOPOML_CTX_NO_ENV);
    fprintf(stderr, "allocation failure points tried (with plugin discovery): %ld\n", points);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alloc_failure");
    TCase *tc = tcase_create("alloc_failure");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_allocation_failure_is_nomem_without_leaks);
    tcase_add_test(tc, test_allocation_failures_while_loading_plugins);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
