/*
 * test_cpp_wrapper.cpp — the header-only C++ wrapper (topoml/topoml.hpp)
 * against the real libtopoml: handles and their moves, views, every op, and
 * that each C status arrives as the right exception with the library's
 * message. Built as strict C++17 (-Wall -Wextra -Werror -pedantic).
 *
 * Usage: test_cpp_wrapper SOURCE_DIR (for docs/examples)
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

#include "topoml/features.h"
#include "topoml/topoml.hpp"

namespace
{

int failures = 0, passes = 0;
std::string source_dir;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::printf("    %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

void run_case(const char *name, bool (*body)())
{
    bool ok = false;
    try {
        ok = body();
    } catch (const std::exception &e) {
        std::printf("    unexpected exception: %s\n", e.what());
    }
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    (ok ? passes : failures)++;
}

/* Call f, which must throw topoml::Error with `status`; true if it did. */
template <class F> bool throws(topoml::Status status, F &&f, std::string *message = nullptr)
{
    try {
        f();
    } catch (const topoml::Error &e) {
        if (message)
            *message = e.what();
        if (e.status() != status)
            std::printf("    threw status %d (%s), wanted %d\n", e.code(), e.what(),
                        static_cast<int>(status));
        return e.status() == status;
    }
    std::printf("    did not throw\n");
    return false;
}

/* A context that sees no environment and no plugin files: the built-in
 * scalar backend only, so results do not depend on the machine. */
topoml::Context plain()
{
    topoml::ContextOptions o;
    o.use_environment = false;
    o.load_plugins = false;
    return topoml::Context(o);
}

std::vector<double> circle(int n)
{
    const double turn = 8 * std::atan(1.0);
    std::vector<double> p;
    for (int k = 0; k < n; k++) {
        p.push_back(std::cos(turn * k / n));
        p.push_back(std::sin(turn * k / n));
    }
    return p;
}

std::string write_temp(const std::string &text)
{
    char path[] = "/tmp/topoml-cpp-wrapper-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        throw std::runtime_error("mkstemp");
    close(fd);
    std::ofstream(path) << text;
    return path;
}

bool version_and_status_text()
{
    CHECK(topoml::version() == TOPOML_VERSION_STRING);
    CHECK(std::strcmp(topoml::strerror(topoml::Status::limit), topoml_strerror(TOPOML_E_LIMIT)) ==
          0);
    topoml::Error e(TOPOML_E_GATE, "");
    CHECK(e.status() == topoml::Status::gate && e.code() == TOPOML_E_GATE);
    CHECK(std::string(e.what()) == topoml_strerror(TOPOML_E_GATE));
    static_assert(std::is_base_of<std::runtime_error, topoml::Error>::value, "");
    static_assert(std::is_base_of<topoml::Error, topoml::Cancelled>::value, "");
    return true;
}

bool handles_move_and_are_not_copyable()
{
    static_assert(!std::is_copy_constructible<topoml::Context>::value, "");
    static_assert(!std::is_copy_assignable<topoml::Data>::value, "");
    static_assert(!std::is_copy_constructible<topoml::Barcode>::value, "");
    static_assert(!std::is_copy_constructible<topoml::Array<double>>::value, "");
    static_assert(std::is_nothrow_move_constructible<topoml::Context>::value, "");
    static_assert(std::is_nothrow_move_assignable<topoml::Barcode>::value, "");
    topoml::Context a = plain();
    topoml::Context b = std::move(a);
    CHECK(!a && b);
    CHECK(throws(topoml::Status::invalid, [&] { a.set_max_memory(1); }));
    topoml::Data d = b.from_points(circle(12), 2);
    topoml::Data e = std::move(d);
    CHECK(!d && e && e.count() == 12 && e.dim() == 2 && e.kind() == TOPOML_INPUT_POINTS);
    CHECK(throws(topoml::Status::invalid, [&] { (void)d.count(); }));
    topoml::Barcode x = b.barcode(e);
    topoml::Barcode y;
    y = std::move(x);
    CHECK(!x && y && y.complete());
    CHECK(throws(topoml::Status::invalid, [&] { (void)x.intervals(); }));
    topoml::Barcode &same = y;
    y = std::move(same); /* self-move leaves it usable */
    CHECK(y && y.max_dim() == 1);
    a = std::move(b); /* the data and barcode still belong to the same context */
    CHECK(a && !b && a.format(y).find("persistence intervals in dim 1:") != std::string::npos);
    return true;
}

bool barcode_of_a_circle_has_one_loop()
{
    topoml::Context ctx = plain();
    topoml::Data d = ctx.from_points(circle(24), 2);
    topoml::RipsOptions o;
    o.max_dim = 2;
    topoml::Barcode bc = ctx.barcode(d, o);
    CHECK(bc.complete() && bc.max_dim() == 2);
    topoml::View<topoml_interval> h0 = bc.dimension(0), h1 = bc.dimension(1), h2 = bc.dimension(2);
    CHECK(h0.size() == 24 && std::isinf(h0.back().death));
    CHECK(h1.size() == 1 && h1[0].birth > 0.2 && h1[0].birth < 0.3 && h1[0].death > 1.7);
    /* Evenly spaced points tie a lot: short-lived H2 classes appear. */
    CHECK(!h2.empty() && h2[0].dim == 2 && h2[0].death - h2[0].birth < 0.2);
    CHECK(bc.intervals().size() == h0.size() + h1.size() + h2.size());
    bool out_of_range = false;
    try {
        (void)h1.at(1);
    } catch (const std::out_of_range &) {
        out_of_range = true;
    }
    CHECK(out_of_range);
    std::vector<topoml_interval> copy = h1.to_vector();
    CHECK(copy.size() == 1 && copy[0].dim == 1);
    CHECK(ctx.last_backend() == "scalar");
    CHECK(!bc.has_cocycles());
    /* With cocycles: the H1 bar's starts with its birth edge at value 1,
     * rows of 3 words (2 vertices descending, the value); H0 has none. */
    o.max_dim = 1;
    o.cocycles = true;
    topoml::Barcode cc = ctx.barcode(d, o);
    CHECK(cc.has_cocycles() && cc.cocycle(0).empty());
    const std::size_t k1 = cc.dimension(0).size();
    topoml::View<std::uint32_t> z = cc.cocycle(k1);
    CHECK(z.size() >= 3 && z.size() % 3 == 0 && z[0] > z[1] && z[0] < 24 && z[2] == 1);
    bool no_cocycles = false;
    try {
        (void)bc.cocycle(0);
    } catch (const topoml::Error &) {
        no_cocycles = true;
    }
    CHECK(no_cocycles);
    return true;
}

bool data_from_memory_and_files()
{
    topoml::Context ctx = plain();
    /* A square as a condensed matrix and as a sparse edge list. */
    const double s = std::sqrt(2.0);
    topoml::Data m = ctx.from_condensed({1, s, 1, 1, s, 1});
    CHECK(m.count() == 4 && m.kind() == TOPOML_INPUT_CONDENSED);
    topoml::Barcode a = ctx.barcode(m);
    CHECK(a.dimension(1).size() == 1 && a.dimension(1)[0].birth == 1);
    topoml::Data g = ctx.from_edges(4, {{1, 0, 1}, {1, 1, 2}, {1, 2, 3}, {1, 0, 3}});
    CHECK(g.kind() == TOPOML_INPUT_SPARSE);
    topoml::Barcode b = ctx.barcode(g);
    CHECK(b.dimension(1).size() == 1 && std::isinf(b.dimension(1)[0].death));
    /* Weighted: the square's vertices born at 0.1, 0.2, 0.3, 0.4; with p =
     * inf its sides enter at max(1, w) = 1: H0 is (0.1, inf) and three bars
     * (w, 1), H1 unchanged. */
    topoml::RipsOptions wo;
    wo.weights = TOPOML_WEIGHTS_GIVEN;
    wo.vertex_weights = {0.1, 0.2, 0.3, 0.4};
    wo.weight_p = INFINITY;
    topoml::Barcode wb = ctx.barcode(m, wo);
    CHECK(wb.dimension(0).size() == 4 && wb.dimension(1).size() == 1);
    double births = 0;
    for (const topoml_interval &v : wb.dimension(0))
        births += v.birth;
    CHECK(std::fabs(births - 1.0) < 1e-12);
    wo.vertex_weights = {0.1, -0.2, 0.3, 0.4};
    CHECK(throws(topoml::Status::invalid, [&] { ctx.barcode(m, wo); }));
    CHECK(throws(topoml::Status::invalid, [&] { ctx.from_condensed({1, 2}); }));
    CHECK(throws(topoml::Status::invalid, [&] { ctx.from_points({1, 2, 3}, 2); }));

    topoml::Data pp = ctx.read(source_dir + "/docs/examples/projective_plane.lower_distance_matrix",
                               TOPOML_FORMAT_LOWER_DISTANCE);
    topoml::RipsOptions o;
    o.max_dim = 2;
    topoml::Barcode z2 = ctx.barcode(pp, o);
    CHECK(z2.dimension(1).size() == 1 && z2.dimension(2).size() == 1);
    o.modulus = 3;
    topoml::Barcode z3 = ctx.barcode(pp, o);
    CHECK(z3.dimension(1).empty() && z3.dimension(2).empty());
    topoml_stats st = ctx.stats(pp);
    CHECK(st.min == 1 && st.enclosing_radius == 2);

    std::FILE *f = std::tmpfile();
    std::fputs("0 0\n3 4\n", f);
    std::rewind(f);
    topoml::Data two = ctx.read(f, "two.txt", TOPOML_FORMAT_POINT_CLOUD);
    std::fclose(f);
    CHECK(two.count() == 2);
    return true;
}

bool errors_carry_status_and_message()
{
    topoml::Context ctx = plain();
    std::string msg;
    CHECK(throws(
        topoml::Status::not_found,
        [&] { ctx.read("/nonexistent/x.txt", TOPOML_FORMAT_POINT_CLOUD); }, &msg));
    CHECK(msg.find("/nonexistent/x.txt") != std::string::npos);
    std::string bad = write_temp("1 2\n3\n");
    CHECK(throws(
        topoml::Status::parse, [&] { ctx.read(bad, TOPOML_FORMAT_POINT_CLOUD); }, &msg));
    CHECK(msg.find(bad) != std::string::npos && msg == ctx.errmsg());
    std::remove(bad.c_str());

    topoml::Data d = ctx.from_points(circle(10), 2);
    topoml::RipsOptions o;
    o.modulus = 4;
    CHECK(throws(
        topoml::Status::invalid, [&] { ctx.barcode(d, o); }, &msg));
    CHECK(msg.find("prime") != std::string::npos);
    topoml::Data empty;
    CHECK(throws(topoml::Status::invalid, [&] { ctx.barcode(empty); }));

    std::string config = write_temp("gate: sideways\n");
    topoml::ContextOptions co;
    co.use_environment = false;
    co.config_path = config;
    CHECK(throws(
        topoml::Status::config, [&] { topoml::Context c(co); }, &msg));
    CHECK(msg.find(config) != std::string::npos);
    std::remove(config.c_str());

    CHECK(throws(
        topoml::Status::not_found, [&] { ctx.use_backend("no-such-backend"); }, &msg));
    CHECK(msg.find("no-such-backend") != std::string::npos);
    ctx.use_any_backend();
    CHECK(ctx.barcode(d).complete());
    return true;
}

bool memory_limit_throws_limit()
{
    topoml::Context ctx = plain();
    std::vector<double> p;
    for (int k = 0; k < 3000; k++)
        p.push_back(k * 0.001);
    topoml::Data d = ctx.from_points(p, 1);
    ctx.set_max_memory(1 << 16);
    CHECK(ctx.max_memory() == 1 << 16);
    std::string msg;
    CHECK(throws(
        topoml::Status::limit, [&] { ctx.distances<double>(d); }, &msg));
    CHECK(!msg.empty());
    ctx.set_max_memory(0);
    CHECK(ctx.distances<double>(d).size() == 3000u * 2999u / 2);
    return true;
}

bool distances_and_edges()
{
    topoml::Context ctx = plain();
    topoml::Data d = ctx.from_points({0, 0, 3, 4, 6, 8}, 2);
    topoml::Array<double> d64 = ctx.distances<double>(d);
    CHECK(d64.size() == 3 && d64[0] == 5 && d64[1] == 10 && d64[2] == 5);
    topoml::Array<float> d32 = ctx.distances<float>(d, TOPOML_METRIC_MANHATTAN);
    CHECK(d32.size() == 3 && d32[0] == 7.0f && d32[1] == 14.0f);
    topoml::View<double> v = d64; /* an Array is viewable */
    CHECK(v.size() == 3 && *std::max_element(v.begin(), v.end()) == 10);
    topoml::Array<double> moved = std::move(d64);
    CHECK(d64.empty() && moved.size() == 3);
    topoml::Array<topoml_edge> e = ctx.edges(d, 5.0);
    CHECK(e.size() == 2 && e[0].i == 0 && e[0].j == 1 && e[1].i == 1 && e[1].j == 2);
    std::vector<topoml_edge> copy = e.to_vector();
    CHECK(copy.size() == 2);
    return true;
}

bool progress_cancel_throws_cancelled_with_the_finished_dimensions()
{
    topoml::Context ctx = plain();
    std::vector<double> p;
    for (int k = 0; k < 300; k++) /* points on a helix: a long dimension 2 */
        for (double x : {std::cos(k * 0.7), std::sin(k * 0.7), k * 0.01, std::cos(k * 1.3)})
            p.push_back(x);
    topoml::Data d = ctx.from_points(p, 4);
    int calls = 0;
    ctx.set_progress([&](const char *, std::uint64_t, std::uint64_t) {
        calls++;
        return false;
    });
    topoml::RipsOptions o;
    o.max_dim = 2;
    try {
        ctx.barcode(d, o);
        std::printf("    not cancelled after %d progress calls\n", calls);
        return false;
    } catch (const topoml::Cancelled &c) {
        CHECK(c.status() == topoml::Status::cancelled && calls == 1);
        if (c.partial()) {
            CHECK(!c.partial()->complete());
            CHECK(c.partial()->dimension(0).size() <= 300);
        }
    }
    ctx.set_progress(nullptr);
    CHECK(ctx.barcode(d).complete());
    return true;
}

/* The callback may answer topoml::Progress in words: Cancel cancels,
 * Continue goes on; an empty std::function or a null function pointer
 * removes the callback. (A callback returning int does not compile:
 * tests/cpp_progress_int.cpp, the cpp_progress_int_refused test.) */
bool progress_answers_in_words()
{
    topoml::Context ctx = plain();
    std::vector<double> p;
    for (int k = 0; k < 300; k++)
        for (double x : {std::cos(k * 0.7), std::sin(k * 0.7), k * 0.01, std::cos(k * 1.3)})
            p.push_back(x);
    topoml::Data d = ctx.from_points(p, 4);
    topoml::RipsOptions o;
    o.max_dim = 2;
    int calls = 0;
    ctx.set_progress([&](const char *, std::uint64_t, std::uint64_t) {
        calls++;
        return topoml::Progress::Continue;
    });
    CHECK(ctx.barcode(d, o).complete() && calls > 1);
    calls = 0;
    ctx.set_progress([&](const char *, std::uint64_t, std::uint64_t) {
        calls++;
        return topoml::Progress::Cancel;
    });
    bool cancelled = false;
    try {
        ctx.barcode(d, o);
    } catch (const topoml::Cancelled &) {
        cancelled = true;
    }
    CHECK(cancelled && calls == 1);
    /* An empty std::function removes it, as nullptr does. */
    ctx.set_progress(topoml::Context::ProgressFn());
    CHECK(ctx.barcode(d, o).complete() && calls == 1);
    bool (*none)(const char *, std::uint64_t, std::uint64_t) = nullptr;
    ctx.set_progress(none);
    CHECK(ctx.barcode(d, o).complete());
    return true;
}

struct Mine {
    int value;
};

bool exceptions_from_callbacks_cross_no_c_code()
{
    topoml::Context ctx = plain();
    std::vector<double> p;
    for (int k = 0; k < 200; k++)
        for (double x : {std::cos(k * 0.7), std::sin(k * 0.7), k * 0.01})
            p.push_back(x);
    topoml::Data d = ctx.from_points(p, 3);
    ctx.set_progress([](const char *, std::uint64_t, std::uint64_t) -> bool { throw Mine{7}; });
    topoml::RipsOptions o;
    o.max_dim = 2;
    bool caught = false;
    try {
        ctx.barcode(d, o);
    } catch (const Mine &m) {
        caught = m.value == 7;
    }
    CHECK(caught);
    ctx.set_progress(nullptr);

    /* A failing op logs its error (at debug level). */
    std::vector<std::string> logged;
    ctx.set_log([&](int, const char *m) { logged.push_back(m); }, TOPOML_LOG_DEBUG);
    o.modulus = 4;
    CHECK(throws(topoml::Status::invalid, [&] { ctx.barcode(d, o); }));
    CHECK(!logged.empty() && logged.back().find("prime") != std::string::npos);
    ctx.set_log([](int, const char *) { throw std::logic_error("from the log"); },
                TOPOML_LOG_DEBUG);
    caught = false;
    try {
        ctx.barcode(d, o);
    } catch (const std::logic_error &e) {
        caught = std::string(e.what()) == "from the log";
    }
    CHECK(caught); /* the callback's exception wins over the status */
    ctx.set_log(nullptr);
    CHECK(ctx.barcode(d).complete());
    return true;
}

/* features.h has no C++ layer of its own: its C functions are called from
 * C++ with the wrapper's handles (get()) and views, as docs/embedding.md
 * shows, and their results owned by a unique_ptr. */
bool features_from_cpp_through_the_c_api()
{
    topoml::Context ctx = plain();
    topoml::RipsOptions o;
    o.threshold = 1.0;
    topoml::Barcode bc = ctx.barcode(ctx.from_points(circle(24), 2), o);
    std::vector<topoml_pair> h1;
    for (const topoml_interval &v : bc.dimension(1))
        h1.push_back({v.birth, v.death});
    CHECK(h1.size() == 1);
    double d = -1;
    CHECK(topoml_bottleneck_distance(ctx.get(), h1.data(), h1.size(), h1.data(), h1.size(), &d) ==
              TOPOML_OK &&
          d == 0);
    std::vector<topoml_pair> empty;
    CHECK(topoml_bottleneck_distance(ctx.get(), h1.data(), h1.size(), empty.data(), 0, &d) ==
              TOPOML_OK &&
          std::isinf(d)); /* the loop outlives the threshold: it is cut off, infinite */
    struct DiagramFree {
        void operator()(topoml_diagram *p) const noexcept { topoml_diagram_free(p); }
    };
    topoml_diagram *raw = nullptr;
    CHECK(topoml_diagram_from_barcode(ctx.get(), &raw, bc.get()) == TOPOML_OK);
    std::unique_ptr<topoml_diagram, DiagramFree> dg(raw);
    std::uint64_t n = 0;
    topoml_diagram_pairs(dg.get(), 1, &n);
    CHECK(n == 1 && topoml_diagram_cut_off(dg.get(), 1, 0) == 1);
    CHECK(topoml_diagram_threshold(dg.get()) == 1.0);
    return true;
}

/* Blocks the library holds through a counting allocator. */
struct Counting {
    long live = 0;
};

void *counting_alloc(void *user, std::size_t n)
{
    void *p = std::malloc(n ? n : 1);
    if (p)
        static_cast<Counting *>(user)->live++;
    return p;
}

void *counting_realloc(void *user, void *ptr, std::size_t n)
{
    void *q = std::realloc(ptr, n ? n : 1);
    if (q && !ptr)
        static_cast<Counting *>(user)->live++;
    return q;
}

void counting_free(void *user, void *ptr)
{
    if (ptr) {
        static_cast<Counting *>(user)->live--;
        std::free(ptr);
    }
}

struct Thrown : std::runtime_error {
    Thrown() : std::runtime_error(std::string(300, 'x')) {} /* its text on the heap */
};

/* Whatever a call made is released when a callback (log or progress)
 * throws during it: the exception reaches the caller, and the library
 * holds no more blocks than before. Every call of the Context that returns
 * something the library allocated, with callbacks that throw at their first
 * report; a call that reports nothing returns normally. */
bool a_throwing_callback_leaks_nothing()
{
    Counting count;
    topoml_allocator al{counting_alloc, counting_realloc, counting_free, &count};
    topoml::ContextOptions o;
    o.use_environment = false;
    o.load_plugins = false;
    o.allocator = &al;
    /* A full matrix whose triangles differ: read with a warning. */
    const std::string asym = write_temp("0 1 2 3\n1.5 0 3 4\n2 3 0 5\n3 4 5 0\n");
    int thrown = 0;
    bool ok = true;
    {
        topoml::Context ctx(o);
        const std::vector<double> pts = circle(40);
        const topoml::Data d = ctx.from_points(pts, 2);
        const topoml::Barcode bc = ctx.barcode(d);
        std::vector<topoml_edge> edges = {{1.0, 0, 1}, {2.0, 1, 2}};
        for (int which = 0; which < 2; which++) {
            if (which == 0)
                ctx.set_log([](int, const char *) { throw Thrown(); }, TOPOML_LOG_DEBUG);
            else
                ctx.set_progress(
                    [](const char *, std::uint64_t, std::uint64_t) -> bool { throw Thrown(); });
            const std::vector<std::pair<const char *, std::function<void()>>> calls = {
                {"read", [&] { ctx.read(asym, TOPOML_FORMAT_AUTO); }},
                {"read FILE", [&] {
                     std::FILE *f = std::fopen(asym.c_str(), "rb");
                     try {
                         ctx.read(f, "asym", TOPOML_FORMAT_AUTO);
                     } catch (...) {
                         std::fclose(f);
                         throw;
                     }
                     std::fclose(f);
                 }},
                {"from_points", [&] { ctx.from_points(pts, 2); }},
                {"from_condensed", [&] { ctx.from_condensed({1, 2, 3}); }},
                {"from_edges", [&] { ctx.from_edges(3, edges); }},
                {"stats", [&] { ctx.stats(d); }},
                {"distances<double>", [&] { ctx.distances<double>(d); }},
                {"distances<float>", [&] { ctx.distances<float>(d); }},
                {"edges", [&] { ctx.edges(d, 0.5); }},
                {"barcode", [&] { ctx.barcode(d); }},
                {"format", [&] { ctx.format(bc, TOPOML_OUTPUT_JSON); }},
                /* A failing call logs its error (debug): thrown too. */
                {"failing barcode", [&] {
                     topoml::RipsOptions r;
                     r.modulus = 4;
                     ctx.barcode(d, r);
                 }},
            };
            for (const auto &c : calls) {
                const long before = count.live;
                try {
                    c.second();
                } catch (const Thrown &) {
                    thrown++;
                } catch (const topoml::Error &e) {
                    /* Refused before any progress: the status, rightly. */
                    if (which == 0 || std::strncmp(c.first, "failing", 7) != 0) {
                        std::printf("    %s: %s instead of the callback's exception\n",
                                    c.first, e.what());
                        ok = false;
                    }
                } catch (const std::exception &e) {
                    std::printf("    %s: %s instead of the callback's exception\n", c.first,
                                e.what());
                    ok = false;
                }
                if (count.live != before) {
                    std::printf("    %s (%s callback): %ld blocks more than before\n", c.first,
                                which ? "progress" : "log", count.live - before);
                    ok = false;
                }
            }
            ctx.set_log(nullptr);
            ctx.set_progress(nullptr);
        }
    }
    std::remove(asym.c_str());
    CHECK(ok);
    CHECK(thrown >= 4); /* the reads, the failing barcode, a progress report */
    CHECK(count.live == 0);
    return true;
}

/* Handles outliving their Context (a misuse the C API cannot forgive): the
 * C context lives until the last of them goes, so using and freeing them
 * afterwards is sound (memcheck_test_cpp_wrapper would see it otherwise);
 * format() writes into memory, and callbacks are taken off with the Context. */
bool handles_may_outlive_their_context()
{
    topoml::Data d;
    topoml::Barcode bc;
    topoml::Array<double> dist;
    std::string text;
    {
        topoml::Context ctx = plain();
        int logged = 0;
        ctx.set_log([&logged](int, const char *) { ++logged; }, TOPOML_LOG_DEBUG);
        d = ctx.from_points(circle(24), 2);
        bc = ctx.barcode(d);
        dist = ctx.distances<double>(d);
        text = ctx.format(bc, TOPOML_OUTPUT_JSON);
        CHECK(text.find("\"dims\"") != std::string::npos);
    } /* the Context goes first */
    CHECK(d.count() == 24 && d.dim() == 2);
    CHECK(bc.complete() && bc.dimension(1).size() == 1);
    CHECK(dist.size() == 24 * 23 / 2 && dist[0] > 0);
    topoml::Data moved = std::move(d);
    CHECK(moved.count() == 24);
    return true;
}

bool backends_are_listed_and_can_be_chosen()
{
    std::string config = write_temp("enable: [cpp-compat]\n");
    topoml::ContextOptions co;
    co.use_environment = false;
    co.config_path = config;
    topoml::Context ctx(co);
    std::remove(config.c_str());
    std::vector<topoml::BackendInfo> all = ctx.backends();
    CHECK(!all.empty() && all[0].name == "scalar" && all[0].path.empty() && all[0].enabled());
    CHECK(!all[0].capabilities.empty());
    /* the appended fields of the C record, as the C API gives them */
    for (std::uint32_t k = 0; k < all.size(); k++) {
        topoml_backend_info b{};
        b.struct_size = sizeof b;
        CHECK(topoml_backend_get(ctx.get(), k, &b) == TOPOML_OK);
        CHECK(all[k].name == b.name && all[k].selection == b.selection);
        CHECK(all[k].isolation == (b.isolation ? b.isolation : ""));
        CHECK(all[k].isolation == "host" || all[k].isolation == "process");
    }
    CHECK(all[0].isolation == "host" && all[0].selection == TOPOML_SELECT_AUTO);
    auto cc = std::find_if(all.begin(), all.end(),
                           [](const topoml::BackendInfo &b) { return b.name == "cpp-compat"; });
    if (cc == all.end()) {
        std::printf("    (no cpp-compat plugin built: only the scalar backend is checked)\n");
        return true;
    }
    CHECK(cc->enabled() && cc->probe_status == topoml::Status::ok && cc->abi_version == 1);
    topoml::Data d = ctx.from_points(circle(30), 2);
    topoml::RipsOptions o;
    o.max_dim = 2;
    ctx.use_backend("cpp-compat");
    topoml::Barcode ours = ctx.barcode(d, o);
    CHECK(ctx.last_backend() == "cpp-compat" && !ctx.last_selection_reason().empty());
    ctx.use_backend("scalar");
    topoml::Barcode ref = ctx.barcode(d, o);
    CHECK(ctx.last_backend() == "scalar");
    CHECK(ours.intervals().size() == ref.intervals().size());
    CHECK(ctx.format(ours) == ctx.format(ref));

    /* Cancelled on cpp-compat: its partial barcode is H0, complete. */
    std::vector<double> p;
    for (int k = 0; k < 400; k++)
        for (double x : {std::cos(k * 0.7), std::sin(k * 0.7), k * 0.01, std::cos(k * 1.3)})
            p.push_back(x);
    topoml::Data big = ctx.from_points(p, 4);
    ctx.use_backend("cpp-compat");
    /* past the core's edge collapse stages ("collapse ..."), stop at the
     * backend's first report */
    ctx.set_progress([](const char *stage, std::uint64_t, std::uint64_t) {
        return std::strncmp(stage, "collapse", 8) == 0;
    });
    try {
        ctx.barcode(big, o);
        std::printf("    not cancelled\n");
        return false;
    } catch (const topoml::Cancelled &c) {
        CHECK(c.partial() && !c.partial()->complete() && c.partial()->max_dim() == 0);
        CHECK(c.partial()->dimension(0).size() == 400 && c.partial()->dimension(1).empty());
    }
    return true;
}

bool find_backend_finds_by_name_and_maps_errors()
{
    topoml::Context ctx = plain();
    topoml::BackendInfo s = ctx.find_backend("scalar");
    CHECK(s.name == "scalar" && s.path.empty() && s.enabled() &&
          s.probe_status == topoml::Status::ok);
    const topoml::BackendInfo listed = ctx.backends()[0];
    CHECK(s.version == listed.version && s.gate_reason == listed.gate_reason);
    CHECK(!s.capabilities.empty() && s.capabilities.data() == listed.capabilities.data() &&
          s.capabilities.size() == listed.capabilities.size());
    std::string msg;
    CHECK(throws(
        topoml::Status::not_found, [&] { ctx.find_backend("no-such-backend"); }, &msg));
    CHECK(msg.find("no-such-backend") != std::string::npos &&
          msg.find("scalar") != std::string::npos && msg == ctx.errmsg());
    /* The earlier answer still stands, and the context still works. */
    CHECK(ctx.find_backend("scalar").enabled());
    CHECK(throws(topoml::Status::invalid, [&] { ctx.find_backend(std::string("scalar\0x", 8)); }));
    topoml::Context moved = std::move(ctx);
    CHECK(throws(topoml::Status::invalid, [&] { ctx.find_backend("scalar"); }));
    CHECK(moved.find_backend("scalar").name == "scalar");
    return true;
}

#ifdef TOPOML_TEST_BUILD_DIR
/* The fault plugins append a line to $TOPOML_TEST_PROBE_LOG when probed. */
int lines_of(const std::string &path)
{
    std::ifstream f(path);
    std::string line;
    int n = 0;
    while (std::getline(f, line))
        n++;
    return n;
}

bool find_backend_probes_only_the_named_plugin()
{
    const std::string faults = std::string(TOPOML_TEST_BUILD_DIR) + "/fault-plugins/";
    const std::string log = write_temp("");
    const std::string config = write_temp("gate: strict\n");
    setenv("TOPOML_TEST_PROBE_LOG", log.c_str(), 1);
    setenv("TOPOML_TEST_PROBE_MS", "1", 1);
    bool ok = false;
    try {
        topoml::ContextOptions co;
        co.use_environment = false;
        co.config_path = config;
        co.plugin_path = faults + "probe-slow:" + faults + "accel";
        topoml::Context ctx(co);
        ok = [&] {
            CHECK(ctx.find_backend("scalar").enabled() && lines_of(log) == 0);
            topoml::BackendInfo slow = ctx.find_backend("fault-probe-slow");
            CHECK(slow.name == "fault-probe-slow" && slow.probe_status == topoml::Status::ok);
            CHECK(slow.path.find("/probe-slow/topoml-backend-fault-probe-slow.so") !=
                  std::string::npos);
            /* found, but not certified under `gate: strict`: it says why */
            CHECK(!slow.enabled() && !slow.gate_reason.empty());
            CHECK(lines_of(log) == 1); /* its own file only */
            CHECK(ctx.find_backend("fault-accel").name == "fault-accel" && lines_of(log) == 2);
            std::string msg;
            CHECK(throws(
                topoml::Status::not_found, [&] { ctx.find_backend("fault-nobody"); }, &msg));
            CHECK(msg.find("fault-accel") != std::string::npos &&
                  msg.find("fault-probe-slow") != std::string::npos);
            return true;
        }();
    } catch (...) {
        unsetenv("TOPOML_TEST_PROBE_LOG");
        unsetenv("TOPOML_TEST_PROBE_MS");
        std::remove(log.c_str());
        std::remove(config.c_str());
        throw;
    }
    unsetenv("TOPOML_TEST_PROBE_LOG");
    unsetenv("TOPOML_TEST_PROBE_MS");
    std::remove(log.c_str());
    std::remove(config.c_str());
    return ok;
}
#endif

} // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
        return 2;
    }
    source_dir = argv[1];
    run_case("version_and_status_text", version_and_status_text);
    run_case("handles_move_and_are_not_copyable", handles_move_and_are_not_copyable);
    run_case("barcode_of_a_circle_has_one_loop", barcode_of_a_circle_has_one_loop);
    run_case("data_from_memory_and_files", data_from_memory_and_files);
    run_case("errors_carry_status_and_message", errors_carry_status_and_message);
    run_case("memory_limit_throws_limit", memory_limit_throws_limit);
    run_case("distances_and_edges", distances_and_edges);
    run_case("progress_cancel_throws_cancelled_with_the_finished_dimensions",
             progress_cancel_throws_cancelled_with_the_finished_dimensions);
    run_case("exceptions_from_callbacks_cross_no_c_code",
             exceptions_from_callbacks_cross_no_c_code);
    run_case("progress_answers_in_words", progress_answers_in_words);
    run_case("backends_are_listed_and_can_be_chosen", backends_are_listed_and_can_be_chosen);
    run_case("a_throwing_callback_leaks_nothing", a_throwing_callback_leaks_nothing);
    run_case("features_from_cpp_through_the_c_api", features_from_cpp_through_the_c_api);
    run_case("handles_may_outlive_their_context", handles_may_outlive_their_context);
    run_case("find_backend_finds_by_name_and_maps_errors",
             find_backend_finds_by_name_and_maps_errors);
#ifdef TOPOML_TEST_BUILD_DIR
    run_case("find_backend_probes_only_the_named_plugin",
             find_backend_probes_only_the_named_plugin);
#endif
    std::printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
