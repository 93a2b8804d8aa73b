/*
 * test_cpp_compat_plugin.cpp — the cpp-compat plugin tested through its ABI
 * alone: dlopen the .so, negotiate as a host would, call the ops, and compare
 * the answers with programs that compute the same things independently:
 *
 *  - Debian's ripser and ripser-coeff (Ripser 1.2.1), run for real on the
 *    shipped Ripser examples and on random clouds written to temporary files;
 *  - PHAT (phat-utils) reducing a boundary matrix this file builds by brute
 *    force (every vertex subset, sorted by diameter), for clouds full of ties;
 *  - plugins/scalar/metric.h for the distances, bit for bit.
 *
 * Barcodes are compared as multisets per dimension with a relative tolerance
 * of 1e-5 (Ripser prints 6 significant digits and computes in float).
 *
 * Usage: test_cpp_compat_plugin PLUGIN.so DATA_DIR [RIPSER [RIPSER_COEFF [PHAT]]]
 * A program that is missing makes the cases that need it SKIP, not fail.
 */
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "metric.h" /* the scalar reference's metrics (plugins/scalar) */
#include "topoml/plugin.h"

namespace
{

/* ---- a host: counting allocator with fault injection, progress hook ---- */

struct Host {
    long allocations = 0; /* made so far */
    long live = 0;
    long fail_at = -1;     /* the allocation number that fails, or -1 */
    int cancel_after = -1; /* progress calls before asking to stop, or -1 */
    int progress_calls = 0;
};

void *host_alloc(void *hd, size_t n)
{
    Host *h = static_cast<Host *>(hd);
    if (h->allocations++ == h->fail_at)
        return nullptr;
    void *p = std::malloc(n);
    if (p)
        h->live++;
    return p;
}

void *host_realloc(void *hd, void *p, size_t n)
{
    Host *h = static_cast<Host *>(hd);
    if (!p)
        return host_alloc(hd, n);
    if (h->allocations++ == h->fail_at)
        return nullptr;
    return std::realloc(p, n);
}

void host_free(void *hd, void *p)
{
    if (p) {
        static_cast<Host *>(hd)->live--;
        std::free(p);
    }
}

void host_log(void *, int, const char *)
{
}

int host_progress(void *hd, const char *, uint64_t, uint64_t)
{
    Host *h = static_cast<Host *>(hd);
    h->progress_calls++;
    return h->cancel_after >= 0 && h->progress_calls > h->cancel_after;
}

struct Call {
    Host host;
    char error[512] = "";
    topoml_call_v1 c{};

    explicit Call(uint64_t max_memory = 0)
    {
        c.struct_size = sizeof c;
        c.host_data = &host;
        c.alloc = host_alloc;
        c.realloc = host_realloc;
        c.free = host_free;
        c.log = host_log;
        c.progress = host_progress;
        c.max_memory = max_memory;
        c.error = error;
        c.error_size = sizeof error;
        c.device = -1;
    }
};

const topoml_backend_v1 *backend;

/* ---- results ---- */

int failures = 0, skips = 0, passes = 0;
std::string tmpdir;
std::string data_dir, ripser_bin, ripser_coeff_bin, phat_bin;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stdout, "    %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);      \
            std::fprintf(stdout, __VA_ARGS__);                                                     \
            std::fprintf(stdout, "\n");                                                            \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

struct Skip {
    std::string why;
};

void run_case(const char *name, const std::function<bool()> &body)
{
    try {
        if (body()) {
            passes++;
            std::printf("ok   %s\n", name);
        } else {
            failures++;
            std::printf("FAIL %s\n", name);
        }
    } catch (const Skip &s) {
        skips++;
        std::printf("SKIP %s (%s)\n", name, s.why.c_str());
    }
    std::fflush(stdout);
}

bool executable(const std::string &path)
{
    return !path.empty() && access(path.c_str(), X_OK) == 0;
}

/* ---- barcodes ---- */

struct Bar {
    double birth, death;
};
using Barcode = std::vector<std::vector<Bar>>; /* by dimension */

Barcode from_plugin(const topoml_barcode_v1 &b, uint32_t max_dim)
{
    Barcode out(max_dim + 1);
    for (uint64_t k = 0; k < b.n_intervals; k++)
        if (b.intervals[k].dim <= max_dim)
            out[b.intervals[k].dim].push_back({b.intervals[k].birth, b.intervals[k].death});
    return out;
}

bool close(double a, double b, double rel)
{
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-12});
}

/* Multisets equal up to `rel`: each bar of `a` is matched to a distinct bar
 * of `b`, greedily in sorted order (bars are few; ties are near-equal). */
bool same_barcode(const Barcode &a, const Barcode &b, double rel, std::string &why)
{
    for (size_t d = 0; d < std::max(a.size(), b.size()); d++) {
        std::vector<Bar> x = d < a.size() ? a[d] : std::vector<Bar>{};
        std::vector<Bar> y = d < b.size() ? b[d] : std::vector<Bar>{};
        std::ostringstream m;
        if (x.size() != y.size()) {
            m << "dim " << d << ": " << x.size() << " bars vs " << y.size();
            why = m.str();
            return false;
        }
        std::vector<bool> used(y.size(), false);
        for (const Bar &p : x) {
            bool found = false;
            for (size_t k = 0; k < y.size() && !found; k++)
                if (!used[k] && close(p.birth, y[k].birth, rel) && close(p.death, y[k].death, rel))
                    used[k] = found = true;
            if (!found) {
                m << "dim " << d << ": bar [" << p.birth << "," << p.death << ") has no match";
                why = m.str();
                return false;
            }
        }
    }
    return true;
}

/* Ripser's text output: "persistence intervals in dim k:" then " [b,d)" or
 * " [b, )" lines. */
Barcode parse_ripser(const std::string &text, uint32_t max_dim)
{
    Barcode out(max_dim + 1);
    std::istringstream in(text);
    std::string line;
    int dim = -1;
    while (std::getline(in, line)) {
        unsigned k;
        if (std::sscanf(line.c_str(), "persistence intervals in dim %u:", &k) == 1) {
            dim = int(k);
            continue;
        }
        size_t open = line.find('[');
        if (open == std::string::npos || dim < 0 || dim > int(max_dim))
            continue;
        size_t comma = line.find(',', open);
        double birth = std::strtod(line.c_str() + open + 1, nullptr);
        std::string rest = line.substr(comma + 1);
        double death =
            rest[0] == ' ' || rest[0] == ')' ? INFINITY : std::strtod(rest.c_str(), nullptr);
        out[dim].push_back({birth, death});
    }
    return out;
}

std::string run_program(const std::string &cmd)
{
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return "";
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    pclose(p);
    return out;
}

/* ---- inputs ---- */

std::vector<double> read_numbers(const std::string &path)
{
    std::ifstream f(path);
    std::vector<double> v;
    std::string tok;
    char c;
    while (f.get(c)) {
        if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
            if (!tok.empty())
                v.push_back(std::strtod(tok.c_str(), nullptr));
            tok.clear();
        } else {
            tok += c;
        }
    }
    if (!tok.empty())
        v.push_back(std::strtod(tok.c_str(), nullptr));
    return v;
}

uint64_t condensed_n(size_t entries)
{
    uint64_t n = 1;
    while (n * (n - 1) / 2 < entries)
        n++;
    return n;
}

topoml_input_v1 condensed_input(const std::vector<double> &d)
{
    topoml_input_v1 in{};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_CONDENSED;
    in.n = condensed_n(d.size());
    in.dtype = TOPOML_F64;
    in.data = d.data();
    return in;
}

template <class T>
topoml_input_v1 points_input(const std::vector<T> &p, uint64_t dim, topoml_metric m)
{
    topoml_input_v1 in{};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = p.size() / dim;
    in.dim = dim;
    in.dtype = sizeof(T) == 4 ? TOPOML_F32 : TOPOML_F64;
    in.metric = m;
    in.data = p.data();
    return in;
}

std::vector<double> random_points(std::mt19937_64 &rng, size_t n, size_t dim)
{
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> p(n * dim);
    for (double &x : p)
        x = u(rng);
    return p;
}

/* Lower-distance text of a condensed matrix, full precision. */
std::string write_lower(const std::vector<double> &d, const std::string &name)
{
    std::string path = tmpdir + "/" + name;
    FILE *f = std::fopen(path.c_str(), "w");
    uint64_t n = condensed_n(d.size());
    for (uint64_t i = 1, k = 0; i < n; i++) {
        for (uint64_t j = 0; j < i; j++)
            std::fprintf(f, "%s%.17g", j ? "," : "", d[k++]);
        std::fprintf(f, "\n");
    }
    std::fclose(f);
    return path;
}

std::vector<double> euclidean_condensed(const std::vector<double> &p, size_t dim)
{
    size_t n = p.size() / dim;
    std::vector<double> d;
    for (size_t i = 1; i < n; i++)
        for (size_t j = 0; j < i; j++)
            d.push_back(scalar_dist_f64(TOPOML_METRIC_EUCLIDEAN, &p[i * dim], &p[j * dim], dim));
    return d;
}

/* ---- running the plugin ---- */

struct Rips {
    int status;
    Barcode bars;
    std::string error;
    long leaked;
};

Rips run_rips(const topoml_input_v1 &in, uint32_t max_dim, double threshold = INFINITY,
              uint32_t modulus = 2, uint64_t max_memory = 0)
{
    Call call(max_memory);
    topoml_rips_params_v1 p{};
    p.struct_size = sizeof p;
    p.max_dim = max_dim;
    p.threshold = threshold;
    p.modulus = modulus;
    topoml_barcode_v1 b{};
    b.struct_size = sizeof b;
    Rips r;
    r.status = backend->rips(nullptr, &call.c, &in, &p, &b);
    r.bars = from_plugin(b, max_dim);
    r.error = call.error;
    call.c.free(call.c.host_data, b.intervals);
    r.leaked = call.host.live;
    return r;
}

std::string ripser_on(const std::string &program, const std::string &file,
                      const std::string &format, uint32_t max_dim, double threshold = INFINITY,
                      uint32_t modulus = 2)
{
    std::ostringstream cmd;
    /* Debian's ripser aborts on --dim 0; dimension 0 comes with --dim 1. */
    cmd << program << " --format " << format << " --dim " << std::max(max_dim, 1u);
    if (!std::isinf(threshold))
        cmd << " --threshold " << std::setprecision(17) << threshold;
    if (modulus != 2)
        cmd << " --modulus " << modulus;
    cmd << " " << file << " 2>&1";
    return run_program(cmd.str());
}

bool compare_with_ripser(const topoml_input_v1 &in, const std::string &file,
                         const std::string &format, uint32_t max_dim, double threshold = INFINITY,
                         uint32_t modulus = 2)
{
    const std::string &prog = modulus == 2 ? ripser_bin : ripser_coeff_bin;
    if (!executable(prog))
        throw Skip{"no " + std::string(modulus == 2 ? "ripser" : "ripser-coeff")};
    Rips ours = run_rips(in, max_dim, threshold, modulus);
    CHECK(ours.status == TOPOML_OK, "rips returned %d: %s", ours.status, ours.error.c_str());
    CHECK(ours.leaked == 0, "%ld allocations not freed", ours.leaked);
    Barcode theirs =
        parse_ripser(ripser_on(prog, file, format, max_dim, threshold, modulus), max_dim);
    std::string why;
    CHECK(same_barcode(ours.bars, theirs, 1e-5, why), "%s (%s, dim %u)", why.c_str(), file.c_str(),
          max_dim);
    return true;
}

/* ---- PHAT: a brute-force Rips boundary matrix, reduced by PHAT ---- */

Barcode phat_barcode(const std::vector<double> &d, uint32_t max_dim)
{
    if (!executable(phat_bin))
        throw Skip{"no phat"};
    uint64_t n = condensed_n(d.size());
    auto dist = [&](uint64_t i, uint64_t j) {
        if (i < j)
            std::swap(i, j);
        return d[i * (i - 1) / 2 + j];
    };
    double r = INFINITY; /* enclosing radius */
    for (uint64_t i = 0; i < n; i++) {
        double far = 0;
        for (uint64_t j = 0; j < n; j++)
            if (j != i)
                far = std::max(far, dist(i, j));
        r = std::min(r, far);
    }
    struct Simplex {
        std::vector<uint32_t> v;
        double diam;
    };
    std::vector<Simplex> all;
    for (uint64_t mask = 1; mask < (uint64_t(1) << n); mask++) {
        std::vector<uint32_t> v;
        for (uint32_t b = 0; b < n; b++)
            if (mask >> b & 1)
                v.push_back(b);
        if (v.size() > max_dim + 2)
            continue;
        double diam = 0;
        for (size_t a = 0; a < v.size(); a++)
            for (size_t b = a + 1; b < v.size(); b++)
                diam = std::max(diam, dist(v[a], v[b]));
        if (diam <= r)
            all.push_back({v, diam});
    }
    std::sort(all.begin(), all.end(), [](const Simplex &a, const Simplex &b) {
        if (a.diam != b.diam)
            return a.diam < b.diam;
        if (a.v.size() != b.v.size())
            return a.v.size() < b.v.size();
        return a.v < b.v;
    });
    std::string in_path = tmpdir + "/phat.in", out_path = tmpdir + "/phat.out";
    {
        std::ofstream f(in_path);
        for (const Simplex &s : all) {
            f << s.v.size() - 1;
            if (s.v.size() > 1)
                for (size_t t = 0; t < s.v.size(); t++) {
                    std::vector<uint32_t> face = s.v;
                    face.erase(face.begin() + t);
                    size_t idx = 0;
                    while (all[idx].v != face)
                        idx++;
                    f << " " << idx;
                }
            f << "\n";
        }
    }
    run_program(phat_bin + " --ascii --twist " + in_path + " " + out_path + " 2>&1");
    std::ifstream f(out_path);
    size_t pairs = 0;
    f >> pairs;
    std::vector<bool> paired(all.size(), false);
    Barcode out(max_dim + 1);
    for (size_t k = 0; k < pairs; k++) {
        size_t b, e;
        f >> b >> e;
        paired[b] = paired[e] = true;
        if (all[e].diam > all[b].diam)
            out[all[b].v.size() - 1].push_back({all[b].diam, all[e].diam});
    }
    for (size_t k = 0; k < all.size(); k++)
        if (!paired[k] && all[k].v.size() - 1 <= max_dim)
            out[all[k].v.size() - 1].push_back({all[k].diam, INFINITY});
    return out;
}

/* ---- the cases ---- */

bool negotiation_and_capabilities()
{
    CHECK(backend->struct_size >= sizeof(topoml_backend_v1), "short vtable");
    CHECK(std::strcmp(backend->name, "cpp-compat") == 0, "name %s", backend->name);
    /* The identity says how rips works, as the README does (it once named an
     * algorithm the plugin no longer uses). */
    CHECK(backend->description && std::strstr(backend->description, "cohomology with clearing") &&
              !std::strstr(backend->description, "boundary matrix"),
          "description %s", backend->description ? backend->description : "(null)");
    char why[128] = "";
    CHECK(backend->probe(nullptr, why, sizeof why) == TOPOML_OK, "probe: %s", why);
    const topoml_capability_v1 *caps;
    uint32_t n = 0;
    CHECK(backend->capabilities(nullptr, &caps, &n) == TOPOML_OK, "capabilities");
    bool rips = false;
    for (uint32_t k = 0; k < n; k++)
        if (caps[k].op == TOPOML_OP_RIPS) {
            rips = true;
            CHECK(caps[k].max_dim == 7 && caps[k].max_modulus == 251, "rips caps %u %u",
                  caps[k].max_dim, caps[k].max_modulus);
        }
    CHECK(rips && backend->rips && backend->distances && backend->edges && backend->h0, "ops");
    CHECK(!backend->image, "image op claimed");
    return true;
}

bool distances_match_scalar_reference_bit_for_bit()
{
    std::mt19937_64 rng(11);
    for (uint64_t dim : {1, 3, 9}) {
        std::vector<double> p = random_points(rng, 40, dim);
        for (size_t k = 0; k < dim; k++)
            p[5 * dim + k] = 0.0; /* a zero vector for cosine */
        std::vector<float> pf(p.begin(), p.end());
        for (int m = 0; m < TOPOML_METRIC_COUNT; m++) {
            topoml_metric metric = topoml_metric(m);
            Call call;
            std::vector<double> out(40 * 39 / 2);
            topoml_input_v1 in = points_input(p, dim, metric);
            CHECK(backend->distances(nullptr, &call.c, &in, out.data()) == TOPOML_OK, "%s",
                  call.error);
            std::vector<float> outf(out.size());
            topoml_input_v1 inf = points_input(pf, dim, metric);
            CHECK(backend->distances(nullptr, &call.c, &inf, outf.data()) == TOPOML_OK, "%s",
                  call.error);
            for (uint64_t i = 1, k = 0; i < 40; i++)
                for (uint64_t j = 0; j < i; j++, k++) {
                    double want = scalar_dist_f64(metric, &p[i * dim], &p[j * dim], dim);
                    float wantf = scalar_dist_f32(metric, &pf[i * dim], &pf[j * dim], dim);
                    CHECK(std::memcmp(&out[k], &want, sizeof want) == 0,
                          "f64 metric %d (%llu,%llu)", m, (unsigned long long)i,
                          (unsigned long long)j);
                    CHECK(std::memcmp(&outf[k], &wantf, sizeof wantf) == 0, "f32 metric %d", m);
                }
            CHECK(call.host.live == 0, "leak");
        }
    }
    return true;
}

bool edges_are_sorted_and_complete()
{
    std::mt19937_64 rng(12);
    /* Points on a grid: many equal distances, so the (d, i, j) order matters. */
    std::vector<float> p;
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 4; y++) {
            p.push_back(float(x));
            p.push_back(float(y));
        }
    topoml_input_v1 in = points_input(p, 2, TOPOML_METRIC_EUCLIDEAN);
    Call call;
    topoml_edge *edges = nullptr;
    uint64_t n_edges = 0;
    CHECK(backend->edges(nullptr, &call.c, &in, 2.0, &edges, &n_edges) == TOPOML_OK, "%s",
          call.error);
    std::vector<topoml_edge> want;
    for (uint32_t i = 1; i < 20; i++)
        for (uint32_t j = 0; j < i; j++) {
            double d = scalar_dist_f32(TOPOML_METRIC_EUCLIDEAN, &p[2 * i], &p[2 * j], 2);
            if (d <= 2.0)
                want.push_back({d, j, i});
        }
    std::sort(want.begin(), want.end(), [](const topoml_edge &a, const topoml_edge &b) {
        return a.d != b.d ? a.d < b.d : a.i != b.i ? a.i < b.i : a.j < b.j;
    });
    CHECK(n_edges == want.size(), "%llu edges, want %zu", (unsigned long long)n_edges, want.size());
    for (size_t k = 0; k < want.size(); k++)
        CHECK(edges[k].d == want[k].d && edges[k].i == want[k].i && edges[k].j == want[k].j,
              "edge %zu", k);
    call.c.free(call.c.host_data, edges);
    CHECK(call.host.live == 0, "leak");
    return true;
}

bool h0_matches_rips_dimension_0()
{
    std::mt19937_64 rng(13);
    std::vector<double> p = random_points(rng, 60, 3);
    topoml_input_v1 in = points_input(p, 3, TOPOML_METRIC_MANHATTAN);
    for (double t : {double(INFINITY), 0.6}) {
        Call call;
        topoml_barcode_v1 b{};
        b.struct_size = sizeof b;
        CHECK(backend->h0(nullptr, &call.c, &in, t, &b) == TOPOML_OK, "%s", call.error);
        Barcode h0 = from_plugin(b, 0);
        call.c.free(call.c.host_data, b.intervals);
        CHECK(call.host.live == 0, "leak");
        Rips r = run_rips(in, 0, t);
        CHECK(r.status == TOPOML_OK, "%s", r.error.c_str());
        std::string why;
        CHECK(same_barcode(h0, r.bars, 0.0, why), "%s", why.c_str());
    }
    return true;
}

bool rips_matches_ripser_on_example(const char *file, uint32_t max_dim, uint32_t modulus = 2)
{
    std::string path = data_dir + "/" + file;
    std::vector<double> d = read_numbers(path);
    CHECK(!d.empty(), "cannot read %s", path.c_str());
    topoml_input_v1 in = condensed_input(d);
    return compare_with_ripser(in, path, "lower-distance", max_dim, INFINITY, modulus);
}

bool rips_matches_expected_file(const char *file, const char *expected, uint32_t max_dim,
                                uint32_t modulus)
{
    std::vector<double> d = read_numbers(data_dir + "/" + file);
    topoml_input_v1 in = condensed_input(d);
    Rips ours = run_rips(in, max_dim, INFINITY, modulus);
    CHECK(ours.status == TOPOML_OK, "%s", ours.error.c_str());
    std::ifstream f(data_dir + "/expected/" + expected);
    std::stringstream text;
    text << f.rdbuf();
    CHECK(!text.str().empty(), "cannot read %s", expected);
    std::string why;
    CHECK(same_barcode(ours.bars, parse_ripser(text.str(), max_dim), 1e-5, why), "%s", why.c_str());
    return true;
}

/* Cases of seconds natively; the Valgrind run (TOPOML_TEST_LIGHT=1) skips
 * them. */
void heavy()
{
    if (std::getenv("TOPOML_TEST_LIGHT"))
        throw Skip{"a heavy case, TOPOML_TEST_LIGHT is set"};
}

/* Ripser's published benchmark inputs, uncut: dense complexes where almost
 * every column of the top dimension is an emergent pair and a few need
 * long reductions (the H2 class of the 3-sphere). */
bool rips_matches_expected_sphere_3_192_dim2()
{
    heavy();
    return rips_matches_expected_file("sphere_3_192.lower_distance_matrix",
                                      "sphere_3_192.dim2.txt", 2, 2);
}

bool rips_mod3_matches_ripser_coeff_on_sphere_3_192_dim2()
{
    heavy();
    return rips_matches_ripser_on_example("sphere_3_192.lower_distance_matrix", 2, 3);
}

bool rips_matches_expected_o3_1024_dim3()
{
    heavy();
    std::vector<double> p = read_numbers(data_dir + "/o3_1024.txt");
    CHECK(p.size() == 1024 * 9, "o3_1024.txt: %zu numbers", p.size());
    topoml_input_v1 in = points_input(p, 9, TOPOML_METRIC_EUCLIDEAN);
    Rips ours = run_rips(in, 3, 1.8);
    CHECK(ours.status == TOPOML_OK, "%s", ours.error.c_str());
    CHECK(ours.leaked == 0, "%ld allocations not freed", ours.leaked);
    std::ifstream f(data_dir + "/expected/o3_1024.dim3.t1.8.txt");
    std::stringstream text;
    text << f.rdbuf();
    CHECK(!text.str().empty(), "cannot read o3_1024.dim3.t1.8.txt");
    std::string why;
    CHECK(same_barcode(ours.bars, parse_ripser(text.str(), 3), 1e-5, why), "%s", why.c_str());
    return true;
}

bool rips_matches_ripser_on_random_clouds()
{
    std::mt19937_64 rng(14);
    for (int trial = 0; trial < 12; trial++) {
        size_t n = 12 + trial * 4, dim = 2 + trial % 3;
        uint32_t max_dim = trial % 3;
        std::vector<double> p = random_points(rng, n, dim);
        std::vector<double> d = euclidean_condensed(p, dim);
        std::string file = write_lower(d, "cloud.lower");
        topoml_input_v1 in = condensed_input(d);
        if (!compare_with_ripser(in, file, "lower-distance", max_dim))
            return false;
        /* The same cloud as points, and cut by a threshold. */
        topoml_input_v1 pts = points_input(p, dim, TOPOML_METRIC_EUCLIDEAN);
        if (!compare_with_ripser(pts, file, "lower-distance", max_dim))
            return false;
        if (!compare_with_ripser(in, file, "lower-distance", max_dim, 0.9))
            return false;
    }
    return true;
}

bool rips_f32_points_match_ripser()
{
    std::mt19937_64 rng(15);
    std::vector<double> p = random_points(rng, 40, 3);
    std::vector<float> pf(p.begin(), p.end());
    std::string path = tmpdir + "/cloud.txt";
    {
        FILE *f = std::fopen(path.c_str(), "w");
        for (size_t i = 0; i < 40; i++)
            std::fprintf(f, "%.9g %.9g %.9g\n", pf[3 * i], pf[3 * i + 1], pf[3 * i + 2]);
        std::fclose(f);
    }
    topoml_input_v1 in = points_input(pf, 3, TOPOML_METRIC_EUCLIDEAN);
    return compare_with_ripser(in, path, "point-cloud", 2);
}

bool rips_mod3_matches_ripser_coeff()
{
    std::mt19937_64 rng(16);
    for (int trial = 0; trial < 4; trial++) {
        std::vector<double> p = random_points(rng, 25, 3);
        std::vector<double> d = euclidean_condensed(p, 3);
        std::string file = write_lower(d, "cloud3.lower");
        topoml_input_v1 in = condensed_input(d);
        for (uint32_t mod : {3u, 5u, 251u})
            if (!compare_with_ripser(in, file, "lower-distance", 2, INFINITY, mod))
                return false;
    }
    return true;
}

bool rips_sparse_matches_ripser()
{
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(0.1, 2.0);
    std::bernoulli_distribution keep(0.6);
    const double cut = 1.2;
    std::vector<topoml_edge> edges;
    /* Ripser 1.2.1 in sparse mode lets edges above --threshold into the
     * complex (it reports bars born after the threshold), so it is given the
     * edges under the cut instead: the same complex. */
    std::string all = tmpdir + "/graph.sparse", under = tmpdir + "/graph-cut.sparse";
    FILE *f = std::fopen(all.c_str(), "w"), *g = std::fopen(under.c_str(), "w");
    for (uint32_t i = 0; i < 30; i++)
        for (uint32_t j = i + 1; j < 30; j++)
            if (keep(rng)) {
                double d = u(rng);
                edges.push_back({d, i, j});
                std::fprintf(f, "%u %u %.17g\n", i, j, d);
                if (d <= cut)
                    std::fprintf(g, "%u %u %.17g\n", i, j, d);
            }
    std::fclose(f);
    std::fclose(g);
    std::shuffle(edges.begin(), edges.end(), rng);
    topoml_input_v1 in{};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_SPARSE;
    in.n = 30;
    in.n_edges = edges.size();
    in.edges = edges.data();
    if (!compare_with_ripser(in, all, "sparse", 2))
        return false;
    Rips ours = run_rips(in, 2, cut);
    CHECK(ours.status == TOPOML_OK, "%s", ours.error.c_str());
    Barcode theirs = parse_ripser(ripser_on(ripser_bin, under, "sparse", 2), 2);
    std::string why;
    CHECK(same_barcode(ours.bars, theirs, 1e-5, why), "threshold %g: %s", cut, why.c_str());
    return true;
}

bool rips_matches_phat_on_grids_with_ties()
{
    /* Grid points (with a duplicate) in two metrics: diameters tie
     * everywhere, so every tie-breaking path is exercised. */
    std::vector<double> p;
    for (int x = 0; x < 4; x++)
        for (int y = 0; y < 3; y++) {
            p.push_back(x);
            p.push_back(y);
        }
    p.push_back(1);
    p.push_back(1);
    for (topoml_metric m :
         {TOPOML_METRIC_EUCLIDEAN, TOPOML_METRIC_CHEBYSHEV, TOPOML_METRIC_MANHATTAN}) {
        topoml_input_v1 in = points_input(p, 2, m);
        std::vector<double> d(13 * 12 / 2);
        Call call;
        CHECK(backend->distances(nullptr, &call.c, &in, d.data()) == TOPOML_OK, "%s", call.error);
        Barcode want = phat_barcode(d, 2);
        Rips ours = run_rips(in, 2);
        CHECK(ours.status == TOPOML_OK, "%s", ours.error.c_str());
        std::string why;
        CHECK(same_barcode(ours.bars, want, 0.0, why), "metric %d: %s", int(m), why.c_str());
    }
    return true;
}

bool rips_matches_phat_on_random_clouds()
{
    std::mt19937_64 rng(18);
    for (int trial = 0; trial < 6; trial++) {
        std::vector<double> p = random_points(rng, 11 + trial % 3, 3);
        std::vector<double> d = euclidean_condensed(p, 3);
        Barcode want = phat_barcode(d, 2);
        Rips ours = run_rips(condensed_input(d), 2);
        CHECK(ours.status == TOPOML_OK, "%s", ours.error.c_str());
        std::string why;
        CHECK(same_barcode(ours.bars, want, 0.0, why), "%s", why.c_str());
    }
    return true;
}

bool tiny_inputs()
{
    std::vector<double> none;
    topoml_input_v1 in = condensed_input(none);
    in.n = 0;
    Rips r = run_rips(in, 2);
    CHECK(r.status == TOPOML_OK && r.bars[0].empty(), "0 points");
    in.n = 1;
    r = run_rips(in, 2);
    CHECK(r.status == TOPOML_OK && r.bars[0].size() == 1 && std::isinf(r.bars[0][0].death),
          "1 point");
    std::vector<double> two = {0.5};
    r = run_rips(condensed_input(two), 3);
    CHECK(r.status == TOPOML_OK && r.bars[0].size() == 2 && r.bars[1].empty(), "2 points");
    std::vector<double> dup = {0.0, 0.0, 0.0}; /* three equal points */
    r = run_rips(condensed_input(dup), 2);
    CHECK(r.status == TOPOML_OK && r.bars[0].size() == 1 && r.leaked == 0, "duplicates");
    return true;
}

bool threshold_keeps_classes_alive_as_infinite()
{
    /* A square of side 1: H1 is born at 1 and dies at sqrt 2; cut at 1.2 it
     * stays alive, so its death is +INFINITY. */
    std::vector<double> sq = {0, 0, 1, 0, 1, 1, 0, 1};
    topoml_input_v1 in = points_input(sq, 2, TOPOML_METRIC_EUCLIDEAN);
    Rips r = run_rips(in, 1, 1.2);
    CHECK(r.status == TOPOML_OK, "%s", r.error.c_str());
    CHECK(r.bars[1].size() == 1 && r.bars[1][0].birth == 1 && std::isinf(r.bars[1][0].death),
          "H1 %zu bars", r.bars[1].size());
    r = run_rips(in, 1);
    CHECK(r.bars[1].size() == 1 && std::fabs(r.bars[1][0].death - std::sqrt(2.0)) < 1e-15, "full");
    /* Cut below every edge: n infinite H0 bars. */
    r = run_rips(in, 1, 0.5);
    CHECK(r.bars[0].size() == 4 && std::isinf(r.bars[0][3].death), "cut below edges");
    return true;
}

bool bad_inputs_are_refused_with_a_message()
{
    std::vector<double> d = {1.0, NAN, 2.0};
    Rips r = run_rips(condensed_input(d), 1);
    CHECK(r.status == TOPOML_E_INVALID && r.error.find("not a distance") != std::string::npos,
          "NaN: %d %s", r.status, r.error.c_str());
    d = {1.0, -1.0, 2.0};
    r = run_rips(condensed_input(d), 1);
    CHECK(r.status == TOPOML_E_INVALID, "negative: %d", r.status);
    d = {1.0, 1.0, 1.0};
    r = run_rips(condensed_input(d), 1, INFINITY, 4);
    CHECK(r.status == TOPOML_E_INVALID && r.error.find("prime") != std::string::npos, "mod 4");
    r = run_rips(condensed_input(d), 1, INFINITY, 257);
    CHECK(r.status == TOPOML_E_UNSUPPORTED, "mod 257: %d", r.status);
    r = run_rips(condensed_input(d), 1, INFINITY, 4294967291u); /* the largest 32-bit prime */
    CHECK(r.status == TOPOML_E_UNSUPPORTED, "mod 2^32-5: %d", r.status);
    r = run_rips(condensed_input(d), 8);
    CHECK(r.status == TOPOML_E_UNSUPPORTED, "dim 8: %d", r.status);
    r = run_rips(condensed_input(d), 1, NAN);
    CHECK(r.status == TOPOML_E_INVALID, "NaN threshold: %d", r.status);

    topoml_input_v1 in = condensed_input(d);
    in.n = uint64_t(1) << 33;
    r = run_rips(in, 1);
    CHECK(r.status == TOPOML_E_OVERFLOW, "2^33 points: %d %s", r.status, r.error.c_str());
    std::vector<double> one = {0.0};
    topoml_input_v1 pts = points_input(one, 1, TOPOML_METRIC_EUCLIDEAN);
    pts.n = uint64_t(1) << 31;
    pts.dim = uint64_t(1) << 34;
    r = run_rips(pts, 1);
    CHECK(r.status == TOPOML_E_OVERFLOW, "n*dim overflow: %d %s", r.status, r.error.c_str());

    std::vector<topoml_edge> edges = {{1.0, 0, 1}, {1.0, 1, 1}};
    topoml_input_v1 sp{};
    sp.struct_size = sizeof sp;
    sp.kind = TOPOML_INPUT_SPARSE;
    sp.n = 3;
    sp.n_edges = 2;
    sp.edges = edges.data();
    r = run_rips(sp, 1);
    CHECK(r.status == TOPOML_E_INVALID, "loop edge: %d", r.status);
    edges[1] = {2.0, 0, 1};
    r = run_rips(sp, 1);
    CHECK(r.status == TOPOML_E_INVALID && r.error.find("twice") != std::string::npos,
          "duplicate: %s", r.error.c_str());

    topoml_input_v1 bad = condensed_input(d);
    bad.struct_size = 8;
    r = run_rips(bad, 1);
    CHECK(r.status == TOPOML_E_INVALID, "short struct: %d", r.status);
    bad = condensed_input(d);
    bad.kind = 7;
    r = run_rips(bad, 1);
    CHECK(r.status == TOPOML_E_INVALID, "bad kind: %d", r.status);
    CHECK(backend->rips(nullptr, nullptr, &bad, nullptr, nullptr) == TOPOML_E_INVALID, "NULL call");
    return true;
}

bool memory_limit_refuses_before_allocating()
{
    std::vector<double> d = read_numbers(data_dir + "/sphere_3_192.lower_distance_matrix");
    CHECK(!d.empty(), "no sphere data");
    Rips r = run_rips(condensed_input(d), 2, INFINITY, 2, 8u << 20);
    CHECK(r.status == TOPOML_E_LIMIT, "status %d: %s", r.status, r.error.c_str());
    CHECK(r.error.find("estimated") != std::string::npos &&
              r.error.find("simplices") != std::string::npos,
          "message: %s", r.error.c_str());
    CHECK(r.leaked == 0, "leak after refusal");
    return true;
}

/* Generators only when asked for and when the barcode has room: a host of
 * core 0.1 (shorter params and barcode) gets its barcode, and nothing is
 * written past the struct_size it gave. */
bool generators_only_when_asked_and_room()
{
    std::vector<double> d = read_numbers(data_dir + "/random16.lower_distance_matrix");
    CHECK(!d.empty(), "no random16 data");
    topoml_input_v1 in = condensed_input(d);
    for (int variant = 0; variant < 3; variant++) {
        Call call;
        topoml_rips_params_v1 p{};
        p.struct_size = variant == 2 ? offsetof(topoml_rips_params_v1, flags) : sizeof p;
        p.max_dim = 2;
        p.threshold = INFINITY;
        p.modulus = 2;
        p.flags = variant == 0 ? 0 : TOPOML_RIPS_PARAM_GENERATORS;
        topoml_barcode_v1 b{};
        b.struct_size = variant == 2 ? offsetof(topoml_barcode_v1, generators) : sizeof b;
        topoml_generator sentinel{};
        if (variant == 2)
            b.generators = &sentinel; /* beyond struct_size: must stay */
        int rc = backend->rips(nullptr, &call.c, &in, &p, &b);
        CHECK(rc == TOPOML_OK, "variant %d: %d %s", variant, rc, call.error);
        CHECK(b.n_intervals > 16, "variant %d: %llu bars", variant,
              (unsigned long long)b.n_intervals);
        if (variant == 1) {
            CHECK(b.generators != nullptr, "asked, no generators");
            for (uint64_t k = 0; k < b.n_intervals; k++) {
                const topoml_interval &v = b.intervals[k];
                const topoml_generator &g = b.generators[k];
                const uint32_t *e[2] = {g.birth, g.death};
                const double val[2] = {v.birth, v.death};
                for (int t = 0; t < 2; t++) {
                    if ((t == 0 && v.dim == 0) || (t == 1 && std::isinf(v.death))) {
                        CHECK(e[t][0] == TOPOML_NO_VERTEX && e[t][1] == TOPOML_NO_VERTEX,
                              "bar %llu: an edge where there is none", (unsigned long long)k);
                        continue;
                    }
                    CHECK(e[t][0] < e[t][1] && e[t][1] < 16, "bar %llu: edge (%u, %u)",
                          (unsigned long long)k, e[t][0], e[t][1]);
                    const uint64_t at = uint64_t(e[t][1]) * (e[t][1] - 1) / 2 + e[t][0];
                    CHECK(d[at] == val[t], "bar %llu: edge (%u, %u) has length %.17g, not %.17g",
                          (unsigned long long)k, e[t][0], e[t][1], d[at], val[t]);
                }
            }
            call.c.free(call.c.host_data, b.generators);
        } else if (variant == 0) {
            CHECK(b.generators == nullptr, "generators not asked for");
        } else {
            CHECK(b.generators == &sentinel, "wrote past the barcode's struct_size");
        }
        call.c.free(call.c.host_data, b.intervals);
        CHECK(call.host.live == 0, "variant %d: leak", variant);
    }
    return true;
}

bool progress_can_cancel_and_keeps_h0()
{
    std::vector<double> d = read_numbers(data_dir + "/sphere_3_192.lower_distance_matrix");
    Call call;
    call.host.cancel_after = 3;
    topoml_rips_params_v1 p{};
    p.struct_size = sizeof p;
    p.max_dim = 2;
    p.threshold = INFINITY;
    p.modulus = 2;
    topoml_barcode_v1 b{};
    b.struct_size = sizeof b;
    topoml_input_v1 in = condensed_input(d);
    int rc = backend->rips(nullptr, &call.c, &in, &p, &b);
    CHECK(rc == TOPOML_E_CANCELLED, "status %d: %s", rc, call.error);
    CHECK(b.complete == 0 && b.max_dim == 0, "complete %u, max_dim %u after cancel", b.complete,
          b.max_dim);
    /* What comes back is H_0, complete: the same as the h0 op. */
    Barcode partial = from_plugin(b, 0);
    call.c.free(call.c.host_data, b.intervals);
    CHECK(call.host.live == 0, "leak after cancel");
    Call h0call;
    topoml_barcode_v1 h{};
    h.struct_size = sizeof h;
    CHECK(backend->h0(nullptr, &h0call.c, &in, INFINITY, &h) == TOPOML_OK, "%s", h0call.error);
    Barcode h0 = from_plugin(h, 0);
    h0call.c.free(h0call.c.host_data, h.intervals);
    std::string why;
    CHECK(partial[0].size() == 192 && same_barcode(partial, h0, 0.0, why), "partial H0: %s",
          why.c_str());
    return true;
}

bool allocation_failures_are_reported_and_leak_nothing()
{
    std::mt19937_64 rng(19);
    std::vector<double> p = random_points(rng, 14, 2);
    topoml_input_v1 in = points_input(p, 2, TOPOML_METRIC_EUCLIDEAN);
    for (uint32_t mod : {2u, 3u})
        for (long k = 0;; k++) {
            Call call;
            call.host.fail_at = k;
            topoml_rips_params_v1 prm{};
            prm.struct_size = sizeof prm;
            prm.max_dim = 2;
            prm.threshold = INFINITY;
            prm.modulus = mod;
            topoml_barcode_v1 b{};
            b.struct_size = sizeof b;
            int rc = backend->rips(nullptr, &call.c, &in, &prm, &b);
            call.c.free(call.c.host_data, b.intervals);
            CHECK(call.host.live == 0, "leak when allocation %ld fails", k);
            if (call.host.allocations <= k) {
                CHECK(rc == TOPOML_OK, "status %d with no failure", rc);
                break;
            }
            CHECK(rc == TOPOML_E_NOMEM, "allocation %ld failed but status is %d (%s)", k, rc,
                  call.error);
        }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PLUGIN.so DATA_DIR [RIPSER [RIPSER_COEFF [PHAT]]]\n",
                     argv[0]);
        return 2;
    }
    data_dir = argv[2];
    ripser_bin = argc > 3 ? argv[3] : "/usr/bin/ripser";
    ripser_coeff_bin = argc > 4 ? argv[4] : "/usr/bin/ripser-coeff";
    phat_bin = argc > 5 ? argv[5] : "/usr/bin/phat";
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    auto negotiate = reinterpret_cast<topoml_backend_negotiate_fn>(dlsym(so, TOPOML_PLUGIN_ENTRY));
    uint32_t abi = TOPOML_ABI_VERSION;
    Call call;
    topoml_host_v1 host{};
    host.struct_size = sizeof host;
    host.abi_version = TOPOML_ABI_VERSION;
    host.host_data = &call.host;
    host.alloc = host_alloc;
    host.realloc = host_realloc;
    host.free = host_free;
    host.log = host_log;
    host.core_version = "0.1.0";
    if (!negotiate || negotiate(&abi, &host, &backend) != TOPOML_OK || abi != 1 || !backend) {
        std::fprintf(stderr, "negotiation failed\n");
        return 1;
    }
    char tmpl[] = "/tmp/topoml-cpp-compat-XXXXXX";
    const char *t = mkdtemp(tmpl);
    if (!t)
        return 1;
    tmpdir = t;

    run_case("negotiation_and_capabilities", negotiation_and_capabilities);
    run_case("distances_match_scalar_reference_bit_for_bit",
             distances_match_scalar_reference_bit_for_bit);
    run_case("edges_are_sorted_and_complete", edges_are_sorted_and_complete);
    run_case("h0_matches_rips_dimension_0", h0_matches_rips_dimension_0);
    run_case("rips_matches_ripser_on_random16_dim3",
             [] { return rips_matches_ripser_on_example("random16.lower_distance_matrix", 3); });
    run_case("rips_matches_ripser_on_random20_dim2",
             [] { return rips_matches_ripser_on_example("random20.lower_distance_matrix", 2); });
    run_case("rips_matches_ripser_on_projective_plane_dim2_mod2", [] {
        return rips_matches_ripser_on_example("projective_plane.lower_distance_matrix", 2);
    });
    run_case("rips_matches_ripser_coeff_on_projective_plane_dim2_mod3", [] {
        return rips_matches_ripser_on_example("projective_plane.lower_distance_matrix", 2, 3);
    });
    run_case("rips_matches_ripser_on_sphere_3_192_dim1", [] {
        return rips_matches_ripser_on_example("sphere_3_192.lower_distance_matrix", 1);
    });
    run_case("rips_matches_expected_random16_dim7", [] {
        return rips_matches_expected_file("random16.lower_distance_matrix", "random16.dim7.txt", 7,
                                          2);
    });
    run_case("rips_matches_ripser_on_random_clouds", rips_matches_ripser_on_random_clouds);
    run_case("rips_matches_expected_sphere_3_192_dim2", rips_matches_expected_sphere_3_192_dim2);
    run_case("rips_mod3_matches_ripser_coeff_on_sphere_3_192_dim2",
             rips_mod3_matches_ripser_coeff_on_sphere_3_192_dim2);
    run_case("rips_matches_expected_o3_1024_dim3", rips_matches_expected_o3_1024_dim3);
    run_case("rips_f32_points_match_ripser", rips_f32_points_match_ripser);
    run_case("rips_mod3_matches_ripser_coeff", rips_mod3_matches_ripser_coeff);
    run_case("rips_sparse_matches_ripser", rips_sparse_matches_ripser);
    run_case("rips_matches_phat_on_grids_with_ties", rips_matches_phat_on_grids_with_ties);
    run_case("rips_matches_phat_on_random_clouds", rips_matches_phat_on_random_clouds);
    run_case("tiny_inputs", tiny_inputs);
    run_case("threshold_keeps_classes_alive_as_infinite",
             threshold_keeps_classes_alive_as_infinite);
    run_case("bad_inputs_are_refused_with_a_message", bad_inputs_are_refused_with_a_message);
    run_case("memory_limit_refuses_before_allocating", memory_limit_refuses_before_allocating);
    run_case("generators_only_when_asked_and_room", generators_only_when_asked_and_room);
    run_case("progress_can_cancel_and_keeps_h0", progress_can_cancel_and_keeps_h0);
    run_case("allocation_failures_are_reported_and_leak_nothing",
             allocation_failures_are_reported_and_leak_nothing);

    if (failures)
        std::printf("inputs of the failed cases kept in %s\n", tmpdir.c_str());
    else
        run_program("rm -rf " + tmpdir);
    dlclose(so);
    std::printf("%d passed, %d failed, %d skipped\n", passes, failures, skips);
    return failures ? 1 : 0;
}
