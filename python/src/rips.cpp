/*
 * rips.cpp — Vietoris–Rips: Context.rips, rips_array and rips_device, the
 * computation behind them, the compiled entries' bodies (Context::fast_*)
 * and the results they build (rips's dict, RipserResult, BarcodeResult).
 */
#include "binding.h"

namespace topoml_py {

namespace {

/* The strict lower triangle of the n x n matrix at p (strides s0, s1 in
 * elements) in Ripser's order, widened to double, into `low`; false when it
 * is not a distance matrix as topoml.ripser takes it: a diagonal entry that
 * is not 0, an entry that is not finite, or (i, j) and (j, i) further apart
 * than 1e-9 of the largest lower entry. */
template <class T>
bool lower_of(const T *p, size_t n, int64_t s0, int64_t s1, std::vector<double> &low)
{
    low.resize(n > 1 ? n * (n - 1) / 2 : 0);
    double largest = 0, worst = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i * s0 + i * s1] != 0)
            return false;
        for (size_t j = 0; j < i; j++, k++) {
            const double lo = p[i * s0 + j * s1], up = p[j * s0 + i * s1];
            if (!std::isfinite(lo) || !std::isfinite(up))
                return false;
            low[k] = lo;
            largest = std::max(largest, std::fabs(lo));
            worst = std::max(worst, std::fabs(lo - up));
        }
    }
    return worst <= 1e-9 * largest;
}

/* The strict lower triangle of a square float64 matrix (any strides) in
 * Ripser's order, in one pass, or None when the matrix is not a distance
 * matrix as topoml.ripser takes it: a diagonal entry that is not 0, an entry
 * that is not finite, or (i, j) and (j, i) further apart than 1e-9 of the
 * largest lower entry. The Python layer (_inputs.dense) then finds the
 * entry and says what is wrong; here only the fast path of a valid matrix,
 * whose numpy passes cost more than a small Rips computation. */
nb::object lower_triangle(nb::ndarray<const double, nb::ndim<2>, nb::device::cpu> a)
{
    const size_t n = a.shape(0);
    if (a.shape(1) != n)
        return nb::none();
    std::vector<double> low;
    bool ok;
    {
        nb::gil_scoped_release rel;
        ok = lower_of(a.data(), n, a.stride(0), a.stride(1), low);
    }
    if (!ok)
        return nb::none();
    double *out = new double[low.size() + 1];
    std::copy(low.begin(), low.end(), out);
    return nb::cast(owned_array(out, {low.size()}));
}

} // namespace

/* ---- Vietoris–Rips barcodes ----
 *
 * Exactly one input: points (n x dim), condensed (Ripser's lower order,
 * n given) or edges (i, j, d arrays over n vertices); collapse is a
 * topoml_collapse, n_threads 0 for the default. Returns a dict:
 * "dgms" (a list of (k, 2) arrays, dims 0..maxdim), "backend", "reason",
 * "complete", "seconds" (topoml_barcode_compute alone), "c_seconds"
 * (every C call the result needs: the data set, the barcode and, when
 * asked, the statistics and generators) and, when asked, "num_edges"
 * (pairs within the threshold, or the enclosing radius) and
 * "enclosing_radius".
 *
 * All the C work runs in one stretch without the GIL: on inputs of a
 * few points each release and re-acquire is a measurable part of the
 * call. A memory limit reached mid-way raises MemoryLimitError with the
 * finished dimensions in its `partial` attribute (rips's dict, "stopped"
 * saying where). */
nb::object Context::rips(std::optional<Points> points, std::optional<Vector> condensed,
                         std::optional<Index> ei, std::optional<Index> ej, std::optional<Vector> ed,
                         uint64_t n, uint32_t maxdim, double threshold, uint32_t modulus,
                         uint32_t metric, uint32_t collapse, uint32_t n_threads,
                         nb::object progress, bool check_signals, bool want_stats,
                         uint32_t want_generators, uint32_t weights,
                         std::optional<Vector> vertex_weights, double weight_p,
                         uint32_t dtm_neighbors, double dtm_r)
{
    Guard g(this);
    check_input(points, condensed, ei, ej, ed, n);
    const uint64_t n_points = data_points(n, points);
    if (vertex_weights && vertex_weights->shape(0) != n_points)
        throw nb::value_error("weights: not one per point");
    const Params p{maxdim, threshold, modulus, metric, collapse, n_threads, weights,
                   vertex_weights ? vertex_weights->data() : nullptr, weight_p,
                   dtm_neighbors, dtm_r};
    return run_rips([] { return true; }, [&](topoml_data **data) {
        return create_data(data, points, condensed, ei, ej, ed, n);
    }, n_points, p, progress.ptr(), check_signals, want_stats, want_generators, 0.0,
       [&](const Run &r) -> nb::object { return rips_dict(r, maxdim); });
}

/* rips for a 2-D numpy array as the caller gave it (any strides,
 * float32 or float64), with no conversion in Python: a point cloud, or
 * with `matrix` a square distance matrix whose strict lower triangle
 * (Ripser's order) is the input, taken in the same pass that checks it
 * (a zero diagonal, finite entries, (i, j) and (j, i) within 1e-9 of
 * the largest lower entry). None when the array is not one this path
 * takes (another dtype, negative strides, a matrix that fails a check):
 * the Python layer then converts it, or says what is wrong with it. */
nb::object Context::rips_array(nb::ndarray<nb::ndim<2>, nb::device::cpu, nb::ro> a, bool matrix,
                               uint32_t maxdim, double threshold, uint32_t modulus, uint32_t metric,
                               uint32_t collapse, uint32_t n_threads, nb::object progress,
                               bool check_signals, bool want_stats, uint32_t want_generators)
{
    Guard g(this);
    const bool f64 = a.dtype() == nb::dtype<double>();
    if ((!f64 && a.dtype() != nb::dtype<float>()) || a.stride(0) < 0 || a.stride(1) < 0 ||
        reinterpret_cast<uintptr_t>(a.data()) % (f64 ? sizeof(double) : sizeof(float)) != 0)
        return nb::none();
    const Array arr{a.data(), f64, (uint64_t)a.shape(0), (uint64_t)a.shape(1),
                    (uint64_t)a.stride(0), (uint64_t)a.stride(1)};
    const Params p{maxdim, threshold, modulus, metric, collapse, n_threads};
    return on_array(arr, matrix, p, progress.ptr(), check_signals, want_stats,
                    want_generators, 0.0,
                    [&](const Run &r) -> nb::object { return rips_dict(r, maxdim); });
}

/* The fast entries' shared body: None when `c` could not be read from
 * the arguments (the Python layer takes over), else the call's result
 * as `build` makes it. */
template <class Build>
nb::object Context::fast(PyObject *X, Call &c, bool ok, bool want_stats, double t_entry,
                         Build &&build)
{
    Buffer buf;
    if (!ok || !progress_of(c.progress) || !buf.read(X, c.array))
        return nb::none();
    /* ripser.py warns of a square or wide point cloud: its Python path
     * (topoml._rips._ripser) gives the warning. */
    if (c.kind == globals().points && c.array.n <= c.array.dim)
        return nb::none();
    nb::object owner;
    Context &ctx = of_thread(&owner);
    Guard g(&ctx);
    return ctx.on_array(c.array, c.matrix, c.p, c.progress, true, want_stats, false, t_entry,
                        [&](const Run &r) -> nb::object { return build(ctx, r); });
}

/* rips's dict (the result of Context.rips and rips_array). */
nb::object Context::rips_dict(const Run &r, uint32_t maxdim)
{
    nb::dict out = barcode_dict(r.bc, maxdim, r.seconds);
    out["c_seconds"] = r.c_seconds;
    if (r.stats) {
        out["num_edges"] = r.stats->edges_within;
        out["enclosing_radius"] = r.stats->enclosing_radius;
    }
    if (r.want_generators & WANT_GENERATORS) {
        int64_t *z = new int64_t[2 * r.n_zero + 2];
        for (uint64_t k = 0; k < r.n_zero; k++) {
            z[2 * k] = r.zero[k].i;
            z[2 * k + 1] = r.zero[k].j;
        }
        out["zero_edges"] = owned_array(z, {(size_t)r.n_zero, 2});
        out["gens"] = generators_by_dim(r.bc, maxdim);
    }
    if (r.want_generators & WANT_COCYCLES)
        out["cocycles"] = cocycles_by_dim(r.bc, maxdim);
    return out;
}

/* ---- The entries ---- */
/* topoml.ripser(X, maxdim, thresh, coeff, distance_matrix, do_cocycles,
 * metric, n_perm): a RipserResult, or None. */
nb::object Context::fast_ripser(nb::handle X, nb::handle maxdim, nb::handle thresh,
                                nb::handle coeff, nb::handle distance_matrix,
                                nb::handle do_cocycles, nb::handle metric, nb::handle n_perm)
{
    const double t_entry = now_seconds();
    Call c{};
    c.progress = Py_None;
    c.p.collapse = 0; /* auto */
    c.p.n_threads = 0;
    const bool ok = do_cocycles.ptr() == Py_False && n_perm.is_none() &&
                    read_int(maxdim.ptr(), 0, c.p.maxdim) &&
                    read_int(coeff.ptr(), 2, c.p.modulus) &&
                    read_threshold(thresh.ptr(), c.p.threshold) &&
                    (distance_matrix.ptr() == Py_True || distance_matrix.ptr() == Py_False) &&
                    read_kind(distance_matrix.ptr(), metric.ptr(), c);
    c.kind = distance_matrix.ptr() == Py_True ? globals().distance : globals().points;
    return fast(X.ptr(), c, ok, true, t_entry, [&](Context &ctx, const Run &r) {
        return ctx.ripser_result(r, c, X, metric);
    });
}

/* topoml.ripser_parallel(X, maxdim, thresh, coeff, metric, metric_params,
 * weights, collapse_edges, n_threads, return_generators): {"dgms"}, or
 * None (generators included: the Python layer lays them out). */
nb::object Context::fast_ripser_parallel(nb::handle X, nb::handle maxdim, nb::handle thresh,
                                         nb::handle coeff, nb::handle metric,
                                         nb::handle metric_params, nb::handle weights,
                                         nb::handle collapse_edges, nb::handle n_threads,
                                         nb::handle return_generators)
{
    const double t_entry = now_seconds();
    Call c{};
    c.progress = Py_None;
    const bool ok = weights.is_none() &&
                    (return_generators.ptr() == Py_False || return_generators.is_none()) &&
                    (collapse_edges.ptr() == Py_True || collapse_edges.ptr() == Py_False) &&
                    no_metric_params(metric_params.ptr()) &&
                    read_threads(n_threads.ptr(), c.p.n_threads) &&
                    read_int(maxdim.ptr(), 0, c.p.maxdim) &&
                    read_int(coeff.ptr(), 2, c.p.modulus) &&
                    read_threshold(thresh.ptr(), c.p.threshold) &&
                    read_kind(Py_False, metric.ptr(), c);
    c.p.collapse = collapse_edges.ptr() == Py_True ? 1 : 2;
    return fast(X.ptr(), c, ok, false, t_entry, [&](Context &ctx, const Run &r) {
        nb::dict out;
        out["dgms"] = nb::borrow<nb::callable>(globals().giotto_dgms)(
            ctx.split_by_dim(r.bc, c.p.maxdim));
        return nb::object(out);
    });
}

/* topoml.barcodes(X, maxdim, threshold, modulus, metric, backend,
 * distance_matrix, metric_params, progress, collapse, n_threads,
 * cocycles): a BarcodeResult, or None (also for cocycles asked for:
 * the general path gives them). */
nb::object Context::fast_barcodes(nb::handle X, nb::handle maxdim, nb::handle threshold,
                                  nb::handle modulus, nb::handle metric, nb::handle backend,
                                  nb::handle distance_matrix, nb::handle metric_params,
                                  nb::handle progress, nb::handle collapse, nb::handle n_threads,
                                  nb::handle cocycles)
{
    const double t_entry = now_seconds();
    Call c{};
    c.progress = progress.ptr();
    PyObject *co = collapse.ptr();
    const bool ok = backend.is_none() && no_metric_params(metric_params.ptr()) &&
                    cocycles.ptr() == Py_False &&
                    (co == Py_True || co == Py_False ||
                     (PyUnicode_CheckExact(co) &&
                      PyUnicode_CompareWithASCIIString(co, "auto") == 0)) &&
                    read_threads(n_threads.ptr(), c.p.n_threads) &&
                    read_int(maxdim.ptr(), 0, c.p.maxdim) &&
                    read_int(modulus.ptr(), 2, c.p.modulus) &&
                    read_threshold(threshold.ptr(), c.p.threshold) &&
                    read_kind(distance_matrix.ptr(), metric.ptr(), c);
    c.p.collapse = co == Py_True ? 1 : co == Py_False ? 2 : 0;
    return fast(X.ptr(), c, ok, false, t_entry, [&](Context &ctx, const Run &r) {
        return ctx.barcode_result(r, c);
    });
}

/* ---- The results ---- */
/* ripser.py's dict as _rips.RipserResult, filled as its __init__ and
 * _rips.ripser fill it (test_native checks the two paths agree). */
nb::object Context::ripser_result(const Run &r, const Call &c, nb::handle X, nb::handle metric)
{
    const Globals &g = globals();
    nb::object dgms = split_by_dim(r.bc, c.p.maxdim);
    nb::object backend = str_or_none(topoml_last_backend(ctx_));
    auto *type = reinterpret_cast<PyTypeObject *>(g.ripser_result);
    nb::object res = nb::steal(type->tp_new(type, g.empty_tuple, nullptr));
    if (!res.is_valid())
        throw nb::python_error();
    nb::object cocycles = nb::steal(PyList_New(c.p.maxdim + 1));
    if (!cocycles.is_valid())
        throw nb::python_error();
    for (uint32_t d = 0; d <= c.p.maxdim; d++) {
        PyObject *l = PyList_New(0);
        if (!l)
            throw nb::python_error();
        PyList_SET_ITEM(cocycles.ptr(), d, l);
    }
    nb::object idx = arange(r.n_points);
    nb::object source = nb::make_tuple(X, nb::handle(c.kind), metric, nb::none());
    set_item(res, g.dgms, dgms);
    set_item(res, g.cocycles, cocycles);
    set_item(res, g.num_edges, nb::int_(r.stats->edges_within));
    set_item(res, g.idx_perm, idx);
    set_item(res, g.r_cover, nb::handle(g.zero));
    nb::dict attrs;
    set_item(attrs, g.source, source);
    set_item(attrs, g.backend, backend);
    set_item(attrs, g.timings, timings(r));
    set_dict(res, attrs);
    return res;
}

/* A _rips.BarcodeResult with the attributes its __init__ sets, in the
 * same order (a dataclass: no other work in its __init__). */
nb::object Context::barcode_result(const Run &r, const Call &c)
{
    const Globals &g = globals();
    nb::object dgms = split_by_dim(r.bc, c.p.maxdim);
    auto *type = reinterpret_cast<PyTypeObject *>(g.barcode_result);
    nb::object res = nb::steal(type->tp_new(type, g.empty_tuple, nullptr));
    if (!res.is_valid())
        throw nb::python_error();
    nb::dict attrs;
    set_item(attrs, g.diagrams, dgms);
    set_item(attrs, g.backend, str_or_none(topoml_last_backend(ctx_)));
    set_item(attrs, g.selection_reason, str_or_none(topoml_last_selection_reason(ctx_)));
    set_item(attrs, g.timings, timings(r));
    set_item(attrs, g.maxdim, nb::int_(c.p.maxdim));
    set_item(attrs, g.threshold, nb::float_(c.p.threshold));
    set_item(attrs, g.modulus, nb::int_(c.p.modulus));
    set_item(attrs, g.complete, nb::bool_(topoml_barcode_complete(r.bc) != 0));
    set_item(attrs, g.num_edges, nb::none());
    set_item(attrs, g.stopped, nb::none());
    set_item(attrs, g.cocycles, nb::none());
    set_dict(res, attrs);
    return res;
}

/* {"compute", "c", "total"} (BarcodeResult.timings); total up to now. */
nb::object Context::timings(const Run &r)
{
    const Globals &g = globals();
    nb::dict t;
    set_item(t, g.compute, nb::float_(r.seconds));
    set_item(t, g.c, nb::float_(r.c_seconds));
    set_item(t, g.total, nb::float_(now_seconds() - r.t_entry));
    return t;
}

void Context::set_item(nb::handle d, PyObject *key, nb::handle value)
{
    if (PyDict_SetItem(d.ptr(), key, value.ptr()) != 0)
        throw nb::python_error();
}

/* A new instance's attributes, all at once: its __dict__ made here
 * (setting them one by one looks each name up in the class first,
 * some microseconds a call with cold caches). Neither class has
 * descriptors or __setattr__ of its own for these names. */
void Context::set_dict(nb::handle o, nb::handle attrs)
{
    if (PyObject_GenericSetDict(o.ptr(), attrs.ptr(), nullptr) != 0)
        throw nb::python_error();
}

/* rips on an Array: a point cloud, or with `matrix` a square distance
 * matrix (checked and cut to its lower triangle here); None when the
 * matrix fails a check or is not square. */
template <class Build>
nb::object Context::on_array(const Array &a, bool matrix, const Params &p, PyObject *progress,
                             bool check_signals, bool want_stats, uint32_t want_generators,
                             double t_entry, Build &&build)
{
    const uint64_t n = a.n;
    if (matrix) {
        if (a.dim != n)
            return nb::none();
        std::vector<double> lower;
        return run_rips([&] {
            return a.f64 ? lower_of(static_cast<const double *>(a.data), n, a.s0, a.s1, lower)
                         : lower_of(static_cast<const float *>(a.data), n, a.s0, a.s1, lower);
        }, [&](topoml_data **data) {
            return topoml_data_from_condensed(ctx_, data, n, lower.data());
        }, n, p, progress, check_signals, want_stats, want_generators, t_entry, build);
    }
    const uint64_t size = a.f64 ? sizeof(double) : sizeof(float);
    /* C-ordered float64 is what topoml_data_from_points copies as it is;
     * the strided reader would widen it into a buffer first. */
    const bool plain = a.f64 && (n < 2 || a.s0 == a.dim) && (a.dim < 2 || a.s1 == 1);
    return run_rips([] { return true; }, [&](topoml_data **data) {
        if (plain)
            return topoml_data_from_points(ctx_, data, n, a.dim,
                                           static_cast<const double *>(a.data));
        return topoml_data_from_points_strided(ctx_, data, n, a.dim,
                                               a.f64 ? TOPOML_F64 : TOPOML_F32, a.data,
                                               a.s0 * size, a.s1 * size);
    }, n, p, progress, check_signals, want_stats, want_generators, t_entry, build);
}

/* The Rips options every entry point shares. */
topoml_rips_options Context::rips_options(uint32_t maxdim, double threshold, uint32_t modulus,
                                          uint32_t metric, uint32_t want_generators)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = maxdim;
    o.threshold = threshold;
    o.modulus = modulus;
    o.metric = metric;
    if (want_generators & WANT_GENERATORS)
        o.flags |= TOPOML_RIPS_GENERATORS;
    if (want_generators & WANT_COCYCLES)
        o.flags |= TOPOML_RIPS_COCYCLES;
    return o;
}

/* The computation behind every Rips entry point: `prepare()` readies
 * the input, false when this path does not take it (then None);
 * `create(&data)` makes the data set; both run without the GIL, in the
 * one stretch the whole call releases it (on inputs of a few points
 * each release and re-acquire is a measurable part of the call), and
 * only `create` and what follows count as the C work ("c_seconds").
 * n_points is the data set's number of points;
 * `build(run)` makes the result from the barcode. t_entry: when the
 * call began (now_seconds), for a partial result's "total"; 0 if the
 * Python layer times it. */
template <class Prepare, class Create, class Build>
nb::object Context::run_rips(Prepare &&prepare, Create &&create, uint64_t n_points, const Params &p,
                             PyObject *progress, bool check_signals, bool want_stats,
                             uint32_t want_generators, double t_entry, Build &&build)
{
    topoml_rips_options o =
        rips_options(p.maxdim, p.threshold, p.modulus, p.metric, want_generators);
    o.collapse = p.collapse;
    o.n_threads = p.n_threads;
    o.weights = p.weights;
    o.vertex_weights = p.vertex_weights;
    o.weight_p = p.weight_p;
    o.dtm_neighbors = p.dtm_neighbors;
    o.dtm_r = p.dtm_r;
    const double threshold = p.threshold;
    const uint32_t metric = p.metric;

    Progress pr(nb::borrow(progress), check_signals);
    topoml_set_progress(ctx_, &Progress::callback, &pr);
    topoml_data *data = nullptr;
    topoml_barcode *bc = nullptr;
    topoml_stats stats;
    std::memset(&stats, 0, sizeof stats);
    /* Generators: the merges of H0 at length 0 (duplicate points) give
     * no bar, so no generator; giotto-ph's layout needs them to tell
     * the components apart (topoml/_gens.py). Looked up only when
     * there are any: fewer H0 bars than points. */
    topoml_edge *zero = nullptr;
    uint64_t n_zero = 0;
    int st, st_stats = TOPOML_OK;
    double t0, t1, c0, c1;
    bool taken;
    {
        nb::gil_scoped_release rel;
        taken = prepare();
        c0 = now_seconds();
        st = taken ? create(&data) : TOPOML_E_INVALID;
        t0 = t1 = now_seconds();
        if (st == TOPOML_OK) {
            st = topoml_barcode_compute(ctx_, &bc, data, &o);
            t1 = now_seconds();
        }
        if (st == TOPOML_OK && want_stats) {
            double within = std::isinf(threshold) ? INFINITY : threshold;
            st_stats = topoml_data_stats(ctx_, data, (topoml_metric)metric, within, &stats);
            if (st_stats == TOPOML_OK && std::isinf(threshold) &&
                std::isfinite(stats.enclosing_radius))
                st_stats = topoml_data_stats(ctx_, data, (topoml_metric)metric,
                                             stats.enclosing_radius, &stats);
        }
        if (st == TOPOML_OK && (want_generators & WANT_GENERATORS) && h0_bars(bc) < n_points)
            st = topoml_edges(ctx_, data, (topoml_metric)metric, 0.0, &zero, &n_zero);
        c1 = now_seconds();
    }
    topoml_set_progress(ctx_, nullptr, nullptr);
    topoml_data_free(ctx_, data);
    if (!emit_warnings()) {
        topoml_free(ctx_, zero);
        topoml_barcode_free(bc);
        throw nb::python_error();
    }
    if (!taken)
        return nb::none();
    if (st != TOPOML_OK) {
        topoml_free(ctx_, zero);
        if (st == TOPOML_E_CANCELLED) {
            /* a cancel hands back the finished dimensions: freed here,
             * once, whether or not an exception raised the cancel */
            topoml_barcode_free(bc);
            bc = nullptr;
            pr.raise();
        }
        if (st == TOPOML_E_LIMIT && bc)
            raise_partial(bc, t1 - t0, c1 - c0, t_entry); /* frees bc */
        topoml_barcode_free(bc);
        raise_status(st);
    }
    if (st_stats != TOPOML_OK) {
        topoml_barcode_free(bc);
        raise_status(st_stats);
    }
    struct Free {
        topoml_context *ctx;
        topoml_barcode *bc;
        topoml_edge *zero;
        ~Free()
        {
            topoml_free(ctx, zero);
            topoml_barcode_free(bc);
        }
    } done{ctx_, bc, zero};
    const Run r{bc, t1 - t0, c1 - c0, t_entry, want_stats ? &stats : nullptr,
                want_generators, zero, n_zero, n_points};
    return build(r);
}

/* ---- Vietoris–Rips on an array in CUDA device memory ----
 *
 * `a`: anything DLPack imports as a C-contiguous float32/float64 CUDA
 * array (a torch/CuPy array or a DLPack capsule): points (n x dim) or,
 * with condensed, the n(n-1)/2 entries of a condensed matrix. The values
 * stay where they are (topoml_data_from_device); `stream` is the
 * cudaStream_t (as an integer) after whose work they are ready. Returns
 * rips's dict with "host_copies": the host copies the library made,
 * and with want_generators "gens" (generators_by_dim). */
nb::dict Context::rips_device(nb::ndarray<nb::device::cuda, nb::c_contig> a, bool condensed,
                              uint64_t n, uint32_t maxdim, double threshold, uint32_t modulus,
                              uint32_t metric, uintptr_t stream, nb::object progress,
                              bool check_signals, bool want_generators)
{
    Guard g(this);
    topoml_dtype dtype;
    if (a.dtype() == nb::dtype<float>())
        dtype = TOPOML_F32;
    else if (a.dtype() == nb::dtype<double>())
        dtype = TOPOML_F64;
    else
        throw nb::type_error("device array: float32 or float64 values only");
    if (a.ndim() != (condensed ? 1u : 2u))
        throw nb::value_error(condensed ? "device array: a condensed matrix is 1-D"
                                        : "device array: points need a 2-D array");
    const uint64_t dim = condensed ? 0 : a.shape(1);
    if (!condensed)
        n = a.shape(0);
    else if (a.shape(0) != n * (n ? n - 1 : 0) / 2)
        throw nb::value_error("device array: not n(n-1)/2 entries");
    topoml_data *data = nullptr;
    int st = topoml_data_from_device(ctx_, &data, TOPOML_MEMORY_CUDA,
                                     condensed ? TOPOML_INPUT_CONDENSED : TOPOML_INPUT_POINTS,
                                     dtype, n, dim, a.data(), a.device_id(),
                                     reinterpret_cast<void *>(stream));
    if (st != TOPOML_OK)
        raise_status(st);
    topoml_rips_options o = rips_options(maxdim, threshold, modulus, metric, want_generators);
    Progress pr(progress, check_signals);
    topoml_set_progress(ctx_, &Progress::callback, &pr);
    topoml_barcode *bc = nullptr;
    double t0, t1;
    {
        nb::gil_scoped_release rel;
        t0 = now_seconds();
        st = topoml_barcode_compute(ctx_, &bc, data, &o);
        t1 = now_seconds();
    }
    topoml_set_progress(ctx_, nullptr, nullptr);
    const uint64_t copies = topoml_data_host_copies(data);
    topoml_data_free(ctx_, data);
    if (!emit_warnings()) {
        topoml_barcode_free(bc);
        throw nb::python_error();
    }
    if (st != TOPOML_OK) {
        topoml_barcode_free(bc);
        if (st == TOPOML_E_CANCELLED)
            pr.raise();
        raise_status(st);
    }
    nb::dict out = barcode_dict(bc, maxdim, t1 - t0);
    out["host_copies"] = copies;
    if (want_generators)
        out["gens"] = generators_by_dim(bc, maxdim);
    topoml_barcode_free(bc);
    return out;
}

/* TOPOML_E_LIMIT after some dimensions were finished: MemoryLimitError
 * with the C message and `partial`, the finished dimensions as rips's
 * dict plus "stopped" ({"dim": the first unfinished dimension,
 * "reason": "memory limit"}, as the CLI's JSON says it). Frees bc. */
[[noreturn]] void Context::raise_partial(topoml_barcode *bc, double seconds, double c_seconds,
                                         double t_entry)
{
    std::string msg = topoml_errmsg(ctx_);
    if (msg.empty())
        msg = topoml_strerror(TOPOML_E_LIMIT);
    const uint32_t done = topoml_barcode_max_dim(bc);
    nb::dict partial;
    try {
        partial = barcode_dict(bc, done, seconds);
    } catch (...) {
        topoml_barcode_free(bc);
        throw;
    }
    topoml_barcode_free(bc);
    partial["c_seconds"] = c_seconds;
    nb::dict stopped;
    stopped["dim"] = done + 1;
    stopped["reason"] = "memory limit";
    partial["stopped"] = stopped;
    if (t_entry > 0) /* a fast entry's: the whole call so far */
        partial["total"] = now_seconds() - t_entry;
    nb::object exc = memory_limit_error(msg.c_str());
    nb::setattr(exc, "partial", partial);
    PyErr_SetObject(memory_limit_error.ptr(), exc.ptr());
    throw nb::python_error();
}

/* What every barcode call returns: the diagrams, whether they are
 * complete, the backend that ran and why, the computation's seconds. */
nb::dict Context::barcode_dict(const topoml_barcode *bc, uint32_t maxdim, double seconds)
{
    nb::dict out;
    out["dgms"] = split_by_dim(bc, maxdim);
    out["complete"] = topoml_barcode_complete(bc) != 0;
    out["backend"] = str_or_none(topoml_last_backend(ctx_));
    out["reason"] = str_or_none(topoml_last_selection_reason(ctx_));
    out["seconds"] = seconds;
    return out;
}

/* Intervals grouped by dimension into one (k, 2) array per dimension
 * 0..maxdim: the one copy out of the C result. */
nb::list Context::split_by_dim(const topoml_barcode *bc, uint32_t maxdim)
{
    uint64_t n = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    std::vector<uint64_t> count(maxdim + 1, 0);
    for (uint64_t k = 0; k < n; k++)
        if (iv[k].dim <= maxdim)
            count[iv[k].dim]++;
    nb::list out = nb::steal<nb::list>(PyList_New(maxdim + 1));
    if (!out.is_valid())
        throw nb::python_error();
    uint64_t k = 0;
    for (uint32_t d = 0; d <= maxdim; d++) {
        nb::object arr = new_pairs(count[d]);
        double *a = array_data<double>(arr);
        uint64_t w = 0;
        for (; k < n && iv[k].dim == d; k++, w++) {
            a[2 * w] = iv[k].birth;
            a[2 * w + 1] = iv[k].death;
        }
        PyList_SET_ITEM(out.ptr(), d, arr.release().ptr());
    }
    return out;
}

uint64_t Context::h0_bars(const topoml_barcode *bc)
{
    uint64_t n = 0, k = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    while (k < n && iv[k].dim == 0)
        k++;
    return k;
}

/* The representative cocycles of split_by_dim's rows: per dimension a
 * list with one (k, d + 2) int64 array per row, ripser.py's layout
 * (vertices descending, then the value in 0..p-1). */
nb::list Context::cocycles_by_dim(const topoml_barcode *bc, uint32_t maxdim)
{
    uint64_t n = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    nb::list out;
    uint64_t k = 0;
    for (uint32_t d = 0; d <= maxdim; d++) {
        nb::list dim;
        for (; k < n && iv[k].dim == d; k++) {
            uint64_t rows = 0;
            const uint32_t *c = topoml_barcode_cocycle(bc, k, &rows);
            if (!c)
                throw std::runtime_error("topoml: the barcode has no cocycles");
            const uint64_t w = (uint64_t)d + 2;
            int64_t *a = new int64_t[rows * w + 1];
            for (uint64_t q = 0; q < rows * w; q++)
                a[q] = (int64_t)c[q];
            dim.append(owned_array(a, {(size_t)rows, (size_t)w}));
        }
        out.append(dim);
    }
    return out;
}

/* The generators of split_by_dim's rows, one (k, 4) int64 array per
 * dimension: birth edge (i, j), death edge (i, j); -1 where there is no
 * edge (the birth in dimension 0, an infinite death). */
nb::list Context::generators_by_dim(const topoml_barcode *bc, uint32_t maxdim)
{
    uint64_t n = 0, ng = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    const topoml_generator *g = topoml_barcode_generators(bc, &ng);
    if ((!g && n > 0) || ng != n)
        throw std::runtime_error("topoml: the barcode has no generators");
    nb::list out;
    uint64_t k = 0;
    for (uint32_t d = 0; d <= maxdim; d++) {
        uint64_t start = k;
        while (k < n && iv[k].dim == d)
            k++;
        int64_t *a = new int64_t[4 * (k - start) + 4];
        for (uint64_t r = start; r < k; r++) {
            const uint32_t v[4] = {g[r].birth[0], g[r].birth[1], g[r].death[0], g[r].death[1]};
            for (int c = 0; c < 4; c++)
                a[4 * (r - start) + c] = v[c] == TOPOML_NO_VERTEX ? -1 : (int64_t)v[c];
        }
        out.append(owned_array(a, {(size_t)(k - start), 4}));
    }
    return out;
}

void register_rips(nb::module_ &m, nb::class_<Context> &context)
{
    m.def("lower_triangle", &lower_triangle, "matrix"_a);
    context
        .def("rips", &Context::rips, "points"_a.none(), "condensed"_a.none(), "ei"_a.none(),
             "ej"_a.none(), "ed"_a.none(), "n"_a, "maxdim"_a, "threshold"_a, "modulus"_a,
             "metric"_a, "collapse"_a, "n_threads"_a, "progress"_a.none(), "check_signals"_a,
             "want_stats"_a, "want_generators"_a = 0u, "weights"_a = 0u,
             "vertex_weights"_a.none() = nb::none(), "weight_p"_a = 1.0, "dtm_neighbors"_a = 3u,
             "dtm_r"_a = 2.0)
        .def("rips_array", &Context::rips_array, "a"_a, "matrix"_a, "maxdim"_a, "threshold"_a,
             "modulus"_a, "metric"_a, "collapse"_a, "n_threads"_a, "progress"_a.none(),
             "check_signals"_a, "want_stats"_a, "want_generators"_a)
        .def("rips_device", &Context::rips_device, "a"_a, "condensed"_a, "n"_a, "maxdim"_a,
             "threshold"_a, "modulus"_a, "metric"_a, "stream"_a, "progress"_a.none(),
             "check_signals"_a, "want_generators"_a = false);
}

} // namespace topoml_py
