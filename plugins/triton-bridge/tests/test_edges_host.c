/*
 * test_edges_host.c — collecting and sorting threshold edges
 * (src/edges_host.c) with a filter written in plain C standing in for the
 * kernel: the bounded buffer overflows and is retried once with exactly the
 * room needed, failures of each step come back with their message, memory
 * limits are honoured, nothing leaks, and the result is sorted by (d, i, j).
 */
#include <check.h>
#include <math.h>

#include "edges_host.h"
#include "tb_test_host.h"

/* A filter over a fixed edge list, emitting it in the given (unsorted)
 * order, as the kernel's tiles would. */
typedef struct fake_filter {
    const topoml_edge *edges;
    uint64_t n;
    topoml_edge *room;
    uint64_t capacity;
    uint64_t stored;
    int reserves, runs, fetches;
    int fail_reserve, fail_run, fail_fetch; /* the call number that fails (1-based) */
    int flaky;                              /* the second run finds one edge more */
} fake_filter;

static int fake_reserve(void *ctx, uint64_t capacity, char *why, size_t why_size)
{
    fake_filter *f = ctx;
    f->reserves++;
    if (f->reserves == f->fail_reserve) {
        snprintf(why, why_size, "no room for %llu edges", (unsigned long long)capacity);
        return TOPOML_E_LIMIT;
    }
    free(f->room);
    f->room = malloc(capacity * sizeof *f->room);
    f->capacity = capacity;
    return TOPOML_OK;
}

static int fake_run(void *ctx, uint64_t capacity, uint64_t *found, char *why, size_t why_size)
{
    fake_filter *f = ctx;
    f->runs++;
    ck_assert_uint_eq(capacity, f->capacity);
    if (f->runs == f->fail_run) {
        snprintf(why, why_size, "the launch failed");
        return TOPOML_E_DEVICE;
    }
    uint64_t count = 0;
    for (uint64_t k = 0; k < f->n; k++, count++)
        if (count < capacity)
            f->room[count] = f->edges[k];
    f->stored = count < capacity ? count : capacity;
    *found = count + (f->flaky && f->runs == 2);
    return TOPOML_OK;
}

static int fake_fetch(void *ctx, uint64_t count, topoml_edge *out, char *why, size_t why_size)
{
    fake_filter *f = ctx;
    f->fetches++;
    ck_assert_uint_le(count, f->stored);
    if (f->fetches == f->fail_fetch) {
        snprintf(why, why_size, "the copy failed");
        return TOPOML_E_DEVICE;
    }
    memcpy(out, f->room, count * sizeof *out);
    return TOPOML_OK;
}

static tb_edge_source source(fake_filter *f)
{
    tb_edge_source s = {f, fake_reserve, fake_run, fake_fetch};
    return s;
}

static int edge_less(const topoml_edge *a, const topoml_edge *b)
{
    if (a->d != b->d)
        return a->d < b->d;
    if (a->i != b->i)
        return a->i < b->i;
    return a->j < b->j;
}

/* Random edges with many equal distances, in random order. */
static topoml_edge *random_edges(uint64_t n, unsigned seed)
{
    topoml_edge *e = malloc(n * sizeof *e);
    srand(seed);
    for (uint64_t k = 0; k < n; k++) {
        e[k].i = (uint32_t)(rand() % 5000);
        e[k].j = e[k].i + 1 + (uint32_t)(rand() % 70000);
        e[k].d = (rand() % 4 == 0) ? 0.0 : (double)(float)((rand() % 1000) / 997.0);
    }
    return e;
}

static void check_sorted_permutation(const topoml_edge *got, const topoml_edge *in, uint64_t n)
{
    for (uint64_t k = 1; k < n; k++)
        ck_assert_msg(
            edge_less(&got[k - 1], &got[k]) ||
                (got[k - 1].d == got[k].d && got[k - 1].i == got[k].i && got[k - 1].j == got[k].j),
            "out of order at %llu", (unsigned long long)k);
    /* Same multiset: compare sums of a few invariants. */
    double sd = 0, sd2 = 0;
    uint64_t si = 0, sj = 0;
    for (uint64_t k = 0; k < n; k++) {
        sd += in[k].d - got[k].d;
        sd2 += in[k].d * in[k].i - got[k].d * got[k].i;
        si += (uint64_t)in[k].i * in[k].j - (uint64_t)got[k].i * got[k].j;
        sj += (uint64_t)in[k].j - got[k].j;
    }
    ck_assert(fabs(sd) < 1e-6 && fabs(sd2) < 1e-3);
    ck_assert_uint_eq(si, 0);
    ck_assert_uint_eq(sj, 0);
}

START_TEST(test_collect_fits_first_time)
{
    topoml_edge *in = random_edges(1000, 1);
    fake_filter f = {.edges = in, .n = 1000};
    tb_edge_source s = source(&f);
    topoml_call_v1 call = tb_test_call();
    topoml_edge *out;
    uint64_t n;
    ck_assert_int_eq(tb_edges_collect(&s, &call, 4096, &out, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 1000);
    ck_assert_int_eq(f.runs, 1);
    ck_assert_int_eq(f.reserves, 1);
    check_sorted_permutation(out, in, n);
    call.free(call.host_data, out);
    ck_assert_int_eq(tb_host_data.live, 0);
    free(f.room);
    free(in);
}
END_TEST

START_TEST(test_collect_retries_overflow_with_exact_room)
{
    topoml_edge *in = random_edges(100000, 2);
    fake_filter f = {.edges = in, .n = 100000};
    tb_edge_source s = source(&f);
    topoml_call_v1 call = tb_test_call();
    topoml_edge *out;
    uint64_t n;
    ck_assert_int_eq(tb_edges_collect(&s, &call, 1000, &out, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 100000);
    ck_assert_int_eq(f.runs, 2);
    ck_assert_int_eq(f.reserves, 2);
    ck_assert_uint_eq(f.capacity, 100000);
    check_sorted_permutation(out, in, n);
    call.free(call.host_data, out);
    ck_assert_int_eq(tb_host_data.live, 0);
    free(f.room);
    free(in);
}
END_TEST

START_TEST(test_collect_no_edges_gives_null)
{
    fake_filter f = {.edges = NULL, .n = 0};
    tb_edge_source s = source(&f);
    topoml_call_v1 call = tb_test_call();
    topoml_edge *out = (topoml_edge *)1;
    uint64_t n = 7;
    ck_assert_int_eq(tb_edges_collect(&s, &call, 0, &out, &n), TOPOML_OK);
    ck_assert_ptr_null(out);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(f.capacity, 1); /* never a zero-sized room */
    free(f.room);
}
END_TEST

START_TEST(test_collect_reports_each_failure)
{
    topoml_edge *in = random_edges(50, 3);
    const struct {
        int reserve, run, fetch, flaky, status;
        const char *text;
    } cases[] = {
        {1, 0, 0, 0, TOPOML_E_LIMIT, "no room"},
        {2, 0, 0, 0, TOPOML_E_LIMIT, "no room"},
        {0, 1, 0, 0, TOPOML_E_DEVICE, "launch failed"},
        {0, 2, 0, 0, TOPOML_E_DEVICE, "launch failed"},
        {0, 0, 1, 0, TOPOML_E_DEVICE, "copy failed"},
        {0, 0, 0, 1, TOPOML_E_DEVICE, "then 51"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fake_filter f = {.edges = in,
                         .n = 50,
                         .fail_reserve = cases[k].reserve,
                         .fail_run = cases[k].run,
                         .fail_fetch = cases[k].fetch,
                         .flaky = cases[k].flaky};
        tb_edge_source s = source(&f);
        topoml_call_v1 call = tb_test_call();
        topoml_edge *out = (topoml_edge *)1;
        uint64_t n = 7;
        ck_assert_int_eq(tb_edges_collect(&s, &call, 10, &out, &n), cases[k].status);
        ck_assert_ptr_null(out);
        ck_assert_uint_eq(n, 0);
        ck_assert_msg(strstr(tb_test_error, cases[k].text) != NULL, "case %zu: %s", k,
                      tb_test_error);
        ck_assert_int_eq(tb_host_data.live, 0);
        free(f.room);
    }
    free(in);
}
END_TEST

START_TEST(test_collect_honours_memory_limit)
{
    topoml_edge *in = random_edges(1000, 4);
    fake_filter f = {.edges = in, .n = 1000};
    tb_edge_source s = source(&f);
    topoml_call_v1 call = tb_test_call();
    call.max_memory = 1000 * sizeof(topoml_edge); /* the result fits, the sort does not */
    topoml_edge *out;
    uint64_t n;
    ck_assert_int_eq(tb_edges_collect(&s, &call, 4096, &out, &n), TOPOML_E_LIMIT);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(tb_test_error, "limit"));
    ck_assert_int_eq(tb_host_data.live, 0);
    call.max_memory = 2 * 1000 * sizeof(topoml_edge);
    ck_assert_int_eq(tb_edges_collect(&s, &call, 4096, &out, &n), TOPOML_OK);
    call.free(call.host_data, out);
    tb_host_data.fail_after = 1; /* the scratch allocation fails */
    ck_assert_int_eq(tb_edges_collect(&s, &call, 4096, &out, &n), TOPOML_E_NOMEM);
    tb_host_data.fail_after = -1;
    ck_assert_int_eq(tb_host_data.live, 0);
    free(f.room);
    free(in);
}
END_TEST

START_TEST(test_sort_orders_by_distance_then_vertices)
{
    topoml_edge e[] = {
        {1.0, 3, 4},     {0.5, 9, 10}, {1.0, 2, 7},   {1.0, 2, 5},    {0.0, 100000, 100001},
        {0.0, 0, 70000}, {0.25, 1, 2}, {1e300, 0, 1}, {1e-310, 5, 6},
    };
    const topoml_edge want[] = {
        {0.0, 0, 70000}, {0.0, 100000, 100001}, {1e-310, 5, 6}, {0.25, 1, 2},  {0.5, 9, 10},
        {1.0, 2, 5},     {1.0, 2, 7},           {1.0, 3, 4},    {1e300, 0, 1},
    };
    enum { N = sizeof e / sizeof e[0] };
    topoml_edge scratch[N];
    tb_edges_sort(e, N, scratch);
    for (int k = 0; k < N; k++) {
        ck_assert(e[k].d == want[k].d);
        ck_assert_uint_eq(e[k].i, want[k].i);
        ck_assert_uint_eq(e[k].j, want[k].j);
    }
    tb_edges_sort(e, 0, scratch);
    tb_edges_sort(e, 1, scratch);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("triton_bridge_edges_host");
    TCase *tc = tcase_create("edges_host");
    tcase_add_test(tc, test_collect_fits_first_time);
    tcase_add_test(tc, test_collect_retries_overflow_with_exact_room);
    tcase_add_test(tc, test_collect_no_edges_gives_null);
    tcase_add_test(tc, test_collect_reports_each_failure);
    tcase_add_test(tc, test_collect_honours_memory_limit);
    tcase_add_test(tc, test_sort_orders_by_distance_then_vertices);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
