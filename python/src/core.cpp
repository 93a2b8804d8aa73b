/*
 * core.cpp — topoml._core, the compiled binding of the Python package over
 * the public C API (topoml/topoml.h, topoml/features.h) and nothing else.
 *
 * Thin on purpose: arrays arrive as typed, C-contiguous float64 views (the
 * Python layer makes them so, copying only when it must), the GIL is
 * released around every C call that may take time, and every status is
 * turned into a Python exception in one place (raise_status). Ctrl-C
 * reaches a running computation through the progress callback, which takes
 * the GIL back briefly to look for pending signals and to call the user's
 * progress function. Not here: argument defaults, input kinds, result
 * shapes — the Python modules decide those.
 *
 * One exception, for speed: topoml.ripser, ripser_parallel and barcodes
 * are compiled callables here (Entry), which run a compiled entry each
 * (Context::fast_*) that does the whole call on the inputs a call mostly
 * gets — a 2-D float numpy array taken as it is, plain arguments — and
 * builds the result the Python function would (test_native checks the two
 * agree), and call that Python function for anything else. On a few points the Python and numpy
 * work around the C call, with cold caches, cost as much as the C call
 * itself; docs/python.md, "Speed". Anything else it leaves to Python.
 */
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <structmember.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "topoml/features.h"
#include "topoml/topoml.h"
}

/* What a Rips entry gives beyond the diagrams (its want_generators
 * argument, a bit set; True from Python reads as WANT_GENERATORS). */
enum : uint32_t { WANT_GENERATORS = 1u, WANT_COCYCLES = 2u };

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using Points = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Index = nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Offsets = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Pairs = nb::ndarray<const double, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

nb::object cancelled_error;    /* topoml._core.CancelledError */
nb::object memory_limit_error; /* topoml._core.MemoryLimitError */
nb::object backend_warning;    /* topoml._core.BackendWarning */

/* numpy's PyArray_NewFromDescr (numpy/__multiarray_api.h: entry 94 of the
 * C API table numpy exports as the capsule _ARRAY_API, the same entry in
 * numpy 1.x and 2.x: the table's indices are numpy's ABI). It steals a
 * reference to the dtype. */
using NewFromDescr = PyObject *(*)(PyTypeObject *, PyObject *, int, const Py_ssize_t *,
                                   const Py_ssize_t *, void *, int, PyObject *);

/* What the fast entries (Context::fast_*) use on every call, made once:
 * interned names, numpy's types and functions, and the result classes and
 * metric table the Python layer registers (set_rips_types). Held for the
 * life of the process: never released at exit, when the interpreter may
 * already be gone. */
struct Globals {
    PyObject *context, *ipython;                      /* keys in dicts */
    PyObject *dgms, *cocycles, *num_edges, *idx_perm; /* RipserResult's keys */
    PyObject *r_cover, *source, *backend, *timings;   /* and attributes */
    PyObject *compute, *c, *total, *distance, *points;
    PyObject *diagrams, *selection_reason, *maxdim;   /* BarcodeResult's */
    PyObject *threshold, *modulus, *complete, *stopped;
    PyObject *empty_tuple, *zero;
    PyObject *ndarray, *empty;                        /* numpy */
    PyObject *f64, *f32, *i64, *two;                  /* numpy's dtypes; 2 */
    PyObject *sysdict, *ps1;                          /* sys.__dict__, "ps1" */
    bool interactive_flag;                            /* sys.flags.interactive */
    /* The last answer of Context::interactive() and the dicts it read */
    PyObject *seen_modules = nullptr;
    uint64_t seen_sys_version = 0, seen_modules_version = 0;
    bool seen_interactive = false;
    bool layout_holds;                                /* NumpyArray is numpy's */
    bool layout;                                      /* and is used */
    NewFromDescr new_array = nullptr;                 /* numpy's, checked; or null */
    bool use_new_array = false;                       /* and is used (with layout) */
    PyObject *ripser_result = nullptr, *barcode_result = nullptr, *metrics = nullptr;
};

/* numpy's array object as numpy's C API lays it out (PyArrayObject_fields
 * in numpy/ndarraytypes.h, the same in numpy 1.x and 2.x; PyArray_DATA,
 * PyArray_NDIM and the like read these fields). The binding is not built
 * against numpy's headers, so at import it checks this layout against the
 * buffer protocol on arrays of its own (numpy_layout_holds); where they
 * disagree it uses the buffer protocol, a few microseconds more a call. */
struct NumpyArray {
    PyObject ob_base;
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
};

/* PyArray_NewFromDescr from numpy's C API table, when a float64 (2, 3) and
 * an int64 (5,) array made with it are what numpy.empty makes (type, dtype,
 * shape, strides, flags); else null, and numpy.empty makes the arrays. */
NewFromDescr numpy_new_array(PyObject *ndarray, PyObject *f64, PyObject *i64)
{
    nb::object capsule;
    for (const char *m : {"numpy._core.multiarray", "numpy.core.multiarray"}) {
        PyObject *mod = PyImport_ImportModule(m);
        if (mod) {
            capsule = nb::steal(PyObject_GetAttrString(mod, "_ARRAY_API"));
            Py_DECREF(mod);
        }
        PyErr_Clear();
        if (capsule.is_valid())
            break;
    }
    if (!capsule.is_valid() || !PyCapsule_CheckExact(capsule.ptr()))
        return nullptr;
    auto **api = static_cast<void **>(PyCapsule_GetPointer(capsule.ptr(), nullptr));
    if (!api || !api[94]) {
        PyErr_Clear();
        return nullptr;
    }
    auto fn = reinterpret_cast<NewFromDescr>(api[94]);
    struct Want {
        PyObject *dtype;
        int nd;
        Py_ssize_t dims[2];
    };
    for (const Want &w : {Want{f64, 2, {2, 3}}, Want{i64, 1, {5, 0}}}) {
        Py_INCREF(w.dtype);
        nb::object a = nb::steal(fn(reinterpret_cast<PyTypeObject *>(ndarray), w.dtype, w.nd,
                                    w.dims, nullptr, nullptr, 0, nullptr));
        if (!a.is_valid()) {
            PyErr_Clear();
            return nullptr;
        }
        nb::object shape = w.nd == 2 ? nb::object(nb::make_tuple(w.dims[0], w.dims[1]))
                                     : nb::object(nb::make_tuple(w.dims[0]));
        nb::object strides = w.nd == 2 ? nb::object(nb::make_tuple(w.dims[1] * 8, 8))
                                       : nb::object(nb::make_tuple(8));
        nb::object flags = a.attr("flags");
        if ((PyObject *)Py_TYPE(a.ptr()) != ndarray || !a.attr("dtype").is(nb::handle(w.dtype)) ||
            !a.attr("shape").equal(shape) || !a.attr("strides").equal(strides) ||
            !nb::cast<bool>(flags.attr("owndata")) || !nb::cast<bool>(flags.attr("writeable")) ||
            !nb::cast<bool>(flags.attr("c_contiguous")))
            return nullptr;
    }
    return fn;
}

/* True when NumpyArray reads numpy's arrays as the buffer protocol does:
 * data, shape, strides, on float64 and float32 arrays with strides. */
bool numpy_layout_holds(PyObject *empty, PyObject *f64, PyObject *f32)
{
    for (PyObject *dtype : {f64, f32}) {
        nb::object a = nb::borrow(empty)(nb::make_tuple(4, 6), nb::handle(dtype));
        nb::object v = a[nb::make_tuple(nb::slice(nb::none(), nb::none(), nb::none()),
                                        nb::slice(nb::int_(1), nb::none(), nb::int_(2)))];
        Py_buffer view;
        if (PyObject_GetBuffer(v.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
            PyErr_Clear();
            return false;
        }
        const auto *s = reinterpret_cast<const NumpyArray *>(v.ptr());
        const bool same = s->data == view.buf && s->nd == 2 && view.ndim == 2 &&
                          s->dimensions[0] == view.shape[0] &&
                          s->dimensions[1] == view.shape[1] &&
                          s->strides[0] == view.strides[0] && s->strides[1] == view.strides[1] &&
                          s->descr == dtype && view.shape[1] == 3;
        PyBuffer_Release(&view);
        if (!same)
            return false;
    }
    return true;
}

Globals &globals()
{
    static Globals *g = [] {
        auto *x = new Globals();
        auto name = [](const char *s) { return PyUnicode_InternFromString(s); };
        x->context = name("topoml._core.context");
        x->ipython = name("IPython");
        x->dgms = name("dgms");
        x->cocycles = name("cocycles");
        x->num_edges = name("num_edges");
        x->idx_perm = name("idx_perm");
        x->r_cover = name("r_cover");
        x->source = name("_source");
        x->backend = name("backend");
        x->timings = name("timings");
        x->compute = name("compute");
        x->c = name("c");
        x->total = name("total");
        x->distance = name("distance");
        x->points = name("points");
        x->diagrams = name("diagrams");
        x->selection_reason = name("selection_reason");
        x->maxdim = name("maxdim");
        x->threshold = name("threshold");
        x->modulus = name("modulus");
        x->complete = name("complete");
        x->stopped = name("stopped");
        x->empty_tuple = PyTuple_New(0);
        x->zero = PyFloat_FromDouble(0.0);
        nb::module_ np = nb::module_::import_("numpy");
        x->ndarray = nb::object(np.attr("ndarray")).release().ptr();
        x->empty = nb::object(np.attr("empty")).release().ptr();
        nb::object dtype = np.attr("dtype");
        x->f64 = dtype("float64").release().ptr();
        x->f32 = dtype("float32").release().ptr();
        x->i64 = dtype("int64").release().ptr();
        x->two = PyLong_FromLong(2);
        nb::module_ sys = nb::module_::import_("sys");
        x->sysdict = nb::borrow(PyModule_GetDict(sys.ptr())).release().ptr();
        x->ps1 = name("ps1");
        x->interactive_flag = nb::cast<int>(sys.attr("flags").attr("interactive")) != 0;
        x->layout = x->layout_holds = numpy_layout_holds(x->empty, x->f64, x->f32);
        x->new_array = numpy_new_array(x->ndarray, x->f64, x->i64);
        x->use_new_array = x->layout && x->new_array;
        return x;
    }();
    return *g;
}

double now_seconds()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

/* A numpy array that owns `data` (allocated with new[]). */
template <class T> nb::ndarray<nb::numpy, T> owned_array(T *data, std::initializer_list<size_t> shape)
{
    nb::capsule owner(data, [](void *p) noexcept { delete[] static_cast<T *>(p); });
    return nb::ndarray<nb::numpy, T>(data, shape, owner);
}

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

/*
 * One topoml_context. The C API allows one thread at a time per context; the
 * Python layer keeps one Context per thread, and `busy` turns a breach of that
 * rule into an exception instead of a data race.
 */
class Context {
  public:
    explicit Context(std::optional<std::string> plugin_path, bool no_plugins, bool no_env)
    {
        topoml_context_options o;
        std::memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.flags = (no_plugins ? TOPOML_CTX_NO_PLUGINS : 0u) | (no_env ? TOPOML_CTX_NO_ENV : 0u);
        o.plugin_path = plugin_path ? plugin_path->c_str() : nullptr;
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_context_new(&ctx_, &o);
        }
        if (st != TOPOML_OK) {
            std::string msg = ctx_ ? topoml_errmsg(ctx_) : topoml_strerror(st);
            if (ctx_)
                topoml_context_free(ctx_);
            ctx_ = nullptr;
            throw nb::value_error(msg.c_str());
        }
        topoml_set_log(ctx_, &Context::on_log, this, TOPOML_LOG_WARN);
    }
    ~Context()
    {
        if (ctx_)
            topoml_context_free(ctx_);
    }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    /* ---- backends ---- */

    /* One backend's topoml_backend_info as the dict backends() lists. */
    static nb::dict info_dict(const topoml_backend_info &bi)
    {
        nb::dict d;
        d["name"] = str_or_none(bi.name);
        d["version"] = str_or_none(bi.version);
        d["vendor"] = str_or_none(bi.vendor);
        d["description"] = str_or_none(bi.description);
        d["path"] = str_or_none(bi.path);
        d["abi_version"] = bi.abi_version;
        d["probe_status"] = bi.probe_status;
        d["probe_message"] = str_or_none(bi.probe_message);
        d["gate_state"] = bi.gate_state;
        d["gate_reason"] = str_or_none(bi.gate_reason);
        d["selection"] = bi.selection;
        d["isolation"] = str_or_none(bi.isolation);
        d["sandbox"] = str_or_none(bi.sandbox);
        nb::list caps;
        for (uint32_t k = 0; k < bi.n_caps; k++) {
            const topoml_capability_v1 &c = bi.caps[k];
            nb::dict cd;
            cd["op"] = c.op;
            cd["dtypes"] = c.dtypes;
            cd["metrics"] = c.metrics;
            cd["inputs"] = c.inputs;
            cd["max_dim"] = c.max_dim;
            cd["max_modulus"] = c.max_modulus;
            cd["max_points"] = c.max_points;
            cd["device"] = str_or_none(c.device);
            cd["schedule"] = str_or_none(c.schedule);
            caps.append(cd);
        }
        d["capabilities"] = caps;
        return d;
    }

    nb::list backends()
    {
        Guard g(this);
        nb::list out;
        uint32_t n = topoml_backend_count(ctx_);
        for (uint32_t i = 0; i < n; i++) {
            topoml_backend_info bi;
            std::memset(&bi, 0, sizeof bi);
            bi.struct_size = sizeof bi;
            if (topoml_backend_get(ctx_, i, &bi) != TOPOML_OK)
                raise_status(TOPOML_E_INTERNAL);
            out.append(info_dict(bi));
        }
        return out;
    }

    /* The backend a call naming `name` gets (topoml_backend_find: probes
     * only what naming it does), as backends() lists it; None if no
     * backend has that name. */
    nb::object find_backend(const std::string &name)
    {
        Guard g(this);
        topoml_backend_info bi;
        std::memset(&bi, 0, sizeof bi);
        bi.struct_size = sizeof bi;
        int st = topoml_backend_find(ctx_, name.c_str(), &bi);
        if (st == TOPOML_E_NOT_FOUND)
            return nb::none();
        if (st != TOPOML_OK)
            raise_status(st);
        return info_dict(bi);
    }

    void use_backend(std::optional<std::string> name)
    {
        Guard g(this);
        check(topoml_use_backend(ctx_, name ? name->c_str() : nullptr));
    }

    void set_max_memory(uint64_t bytes)
    {
        Guard g(this);
        topoml_set_max_memory(ctx_, bytes);
    }
    uint64_t max_memory()
    {
        Guard g(this);
        return topoml_get_max_memory(ctx_);
    }

    /* Warnings the library logged since the last call of this function. */
    std::vector<std::string> take_warnings()
    {
        std::vector<std::string> w;
        w.swap(warnings_);
        return w;
    }

    /* What the library warned of during a computation, as BackendWarning
     * (a plugin disabled at run time must not go unnoticed: the call's
     * answer is the reference's). With the GIL held; false when a warnings
     * filter turned one into an exception (set). */
    bool emit_warnings()
    {
        if (warnings_.empty())
            return true;
        for (const std::string &m : take_warnings())
            if (PyErr_WarnEx(backend_warning.ptr(), m.c_str(), 1) != 0)
                return false;
        return true;
    }

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
    nb::object rips(std::optional<Points> points, std::optional<Vector> condensed,
                    std::optional<Index> ei, std::optional<Index> ej, std::optional<Vector> ed,
                    uint64_t n, uint32_t maxdim, double threshold, uint32_t modulus,
                    uint32_t metric, uint32_t collapse, uint32_t n_threads, nb::object progress,
                    bool check_signals, bool want_stats, uint32_t want_generators,
                    uint32_t weights, std::optional<Vector> vertex_weights, double weight_p,
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
    nb::object rips_array(nb::ndarray<nb::ndim<2>, nb::device::cpu, nb::ro> a, bool matrix,
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

    /* ---- One compiled entry per public call ----
     *
     * topoml.ripser, ripser_parallel and barcodes (Entry objects) run
     * these first, on their arguments as given. On the inputs a call mostly gets (a 2-D
     * float64 or float32 numpy array, plain ints and floats, a metric the C
     * side has by its exact name, no progress bar) the whole call happens
     * here: the checks, the C work with the GIL released once, and the
     * result object. For anything else they return None before doing
     * anything, and the Python function takes its general path (_rips._compute),
     * which converts the input or raises with the message. */

    /* A 2-D array: its values, type, shape and strides (in elements). */
    struct Array {
        const void *data;
        bool f64;
        uint64_t n, dim, s0, s1;
    };

    /* The Rips parameters, checked. */
    struct Params {
        uint32_t maxdim;
        double threshold;
        uint32_t modulus, metric, collapse, n_threads;
        /* topoml_rips_options' weighted filtration (rips only) */
        uint32_t weights = TOPOML_WEIGHTS_NONE;
        const double *vertex_weights = nullptr;
        double weight_p = 1;
        uint32_t dtm_neighbors = 3;
        double dtm_r = 2;
    };

    /* What a finished computation hands to the result's builder. */
    struct Run {
        const topoml_barcode *bc;
        double seconds, c_seconds, t_entry;
        const topoml_stats *stats; /* when asked */
        uint32_t want_generators; /* WANT_GENERATORS | WANT_COCYCLES */
        const topoml_edge *zero;
        uint64_t n_zero, n_points;
    };

    /* What the fast entries read from their arguments. */
    struct Call {
        Array array;
        bool matrix;
        Params p;
        PyObject *progress; /* borrowed: None or a callable */
        PyObject *kind;     /* ripser's _source kind: "distance" or "points" */
    };

    /* The calling thread's context with the process-wide backend choice
     * (topoml._context.context()): made on the thread's first call and
     * kept in the thread's state dict, so it goes with the thread. */
    static Context &of_thread(nb::object *owner = nullptr)
    {
        PyObject *d = PyThreadState_GetDict();
        if (!d)
            throw std::runtime_error("topoml: no thread state");
        PyObject *o = PyDict_GetItemWithError(d, globals().context);
        nb::object made;
        if (!o) {
            if (PyErr_Occurred())
                throw nb::python_error();
            made = nb::type<Context>()();
            if (PyDict_SetItem(d, globals().context, made.ptr()) != 0)
                throw nb::python_error();
            o = made.ptr();
        }
        Context &c = *nb::inst_ptr<Context>(o);
        if (c.generation_ != selection().generation) {
            const Selection &s = selection();
            const uint64_t gen = s.generation;
            c.use_backend(s.name);
            c.generation_ = gen;
        }
        if (owner)
            *owner = nb::borrow(o);
        return c;
    }

    /* The process-wide backend choice of topoml.select_backend; read and
     * written with the GIL held. Each context follows it on its next call. */
    struct Selection {
        std::optional<std::string> name;
        uint64_t generation = 0;
    };
    static Selection &selection()
    {
        static Selection s;
        return s;
    }

    /* The fast entries' shared body: None when `c` could not be read from
     * the arguments (the Python layer takes over), else the call's result
     * as `build` makes it. */
    template <class Build>
    static nb::object fast(PyObject *X, Call &c, bool ok, bool want_stats, double t_entry,
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
    nb::object rips_dict(const Run &r, uint32_t maxdim)
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

    /* A numpy array's buffer (PEP 3118), released with this object. */
    struct Buffer {
        Py_buffer view;
        bool held = false;
        ~Buffer()
        {
            if (held)
                PyBuffer_Release(&view);
        }
        /* True for a 2-D float64 or float32 array in native byte order,
         * aligned, with non-negative strides, described into `a`. */
        bool read(PyObject *X, Array &a)
        {
            const Globals &g = globals();
            if ((PyObject *)Py_TYPE(X) != g.ndarray)
                return false;
            const auto *s = reinterpret_cast<const NumpyArray *>(X);
            if (g.layout && (s->descr == g.f64 || s->descr == g.f32)) {
                /* numpy's own float64 / float32 (native byte order) */
                a.f64 = s->descr == g.f64;
                const Py_ssize_t size = a.f64 ? 8 : 4;
                if (s->nd != 2 || reinterpret_cast<uintptr_t>(s->data) % size != 0)
                    return false;
                for (int k = 0; k < 2; k++)
                    if (s->strides[k] < 0 || s->strides[k] % size != 0)
                        return false;
                a.data = s->data;
                a.n = (uint64_t)s->dimensions[0];
                a.dim = (uint64_t)s->dimensions[1];
                a.s0 = (uint64_t)(s->strides[0] / size);
                a.s1 = (uint64_t)(s->strides[1] / size);
                return true;
            }
            if (PyObject_GetBuffer(X, &view, PyBUF_RECORDS_RO) != 0) {
                PyErr_Clear();
                return false;
            }
            held = true;
            if (view.ndim != 2 || !view.format)
                return false;
            const char *f = view.format;
            if (*f == '@' || *f == '=' || (*f == '<' && is_little_endian()))
                f++;
            if (f[0] == 0 || f[1] != 0)
                return false;
            a.f64 = f[0] == 'd';
            if ((!a.f64 && f[0] != 'f') || view.itemsize != (a.f64 ? 8 : 4) ||
                reinterpret_cast<uintptr_t>(view.buf) % view.itemsize != 0)
                return false;
            for (int k = 0; k < 2; k++)
                if (view.strides[k] < 0 || view.strides[k] % view.itemsize != 0)
                    return false;
            a.data = view.buf;
            a.n = (uint64_t)view.shape[0];
            a.dim = (uint64_t)view.shape[1];
            a.s0 = (uint64_t)(view.strides[0] / view.itemsize);
            a.s1 = (uint64_t)(view.strides[1] / view.itemsize);
            return true;
        }
    };

    static bool is_little_endian()
    {
        const uint16_t one = 1;
        return *reinterpret_cast<const uint8_t *>(&one) == 1;
    }

    /* progress=None shows a bar when Python runs interactively
     * (_progress.interactive()): that, and progress=True, is the Python
     * layer's (_progress.Bar). False reaches the C side as None. */
    static bool progress_of(PyObject *&progress)
    {
        if (progress == Py_False) {
            progress = Py_None;
            return true;
        }
        if (progress == Py_None)
            return !interactive();
        return progress != Py_True && PyCallable_Check(progress);
    }

    static bool interactive()
    {
        Globals &g = globals();
        if (g.interactive_flag)
            return true;
        PyObject *modules = PyImport_GetModuleDict();
#if PY_VERSION_HEX < 0x030C0000
        /* sys.__dict__ and sys.modules unchanged since the last look: the
         * same answer. Up to Python 3.11 every change to a dict gives it a
         * new version tag, unique in the process, so equal tags of the same
         * two dicts mean equal contents; reading two tags touches less than
         * the two look-ups, which with cold caches cost some microseconds. */
        const uint64_t v_sys = reinterpret_cast<PyDictObject *>(g.sysdict)->ma_version_tag;
        const uint64_t v_modules = reinterpret_cast<PyDictObject *>(modules)->ma_version_tag;
        if (modules == g.seen_modules && v_sys == g.seen_sys_version &&
            v_modules == g.seen_modules_version)
            return g.seen_interactive;
#endif
        PyObject *m = PyDict_GetItemWithError(g.sysdict, g.ps1);
        if (!m && !PyErr_Occurred())
            m = PyDict_GetItemWithError(modules, g.ipython);
        if (!m && PyErr_Occurred())
            throw nb::python_error();
#if PY_VERSION_HEX < 0x030C0000
        g.seen_modules = modules;
        g.seen_sys_version = v_sys;
        g.seen_modules_version = v_modules;
        g.seen_interactive = m != nullptr;
#endif
        return m != nullptr;
    }

    /* ---- Reading the arguments (false: the Python layer's general path) ---- */

    /* A plain int >= low (not a bool, not a numpy integer) within uint32. */
    static bool read_int(PyObject *o, long long low, uint32_t &out)
    {
        if (!PyLong_CheckExact(o))
            return false;
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || v < low || v > (long long)UINT32_MAX)
            return false;
        out = (uint32_t)v;
        return true;
    }

    /* A plain float or int, not NaN, >= 0 (inf: none). */
    static bool read_threshold(PyObject *o, double &t)
    {
        if (PyFloat_CheckExact(o)) {
            t = PyFloat_AS_DOUBLE(o);
        } else if (PyLong_CheckExact(o)) {
            t = PyLong_AsDouble(o);
            if (t == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                return false;
            }
        } else {
            return false;
        }
        return !std::isnan(t) && t >= 0;
    }

    /* giotto-ph's n_threads (-1: every core) as the C option (0: every). */
    static bool read_threads(PyObject *o, uint32_t &out)
    {
        if (!PyLong_CheckExact(o))
            return false;
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || v == 0 || v < -1 || v > (long long)UINT32_MAX)
            return false;
        out = v == -1 ? 0 : (uint32_t)v;
        return true;
    }

    /* How X is read: a distance matrix when `distance` is True; when it is
     * False (or None: a 2-D array is points), points under `metric`, an
     * exact key of _inputs.METRICS, or a matrix for "precomputed". */
    static bool read_kind(PyObject *distance, PyObject *metric, Call &c)
    {
        c.p.metric = 0;
        if (!globals().metrics) /* set_rips_types not called yet: no result types */
            return false;
        if (distance == Py_True) {
            c.matrix = true;
            return true;
        }
        if ((distance != Py_False && distance != Py_None) || !PyUnicode_CheckExact(metric))
            return false;
        if (PyUnicode_CompareWithASCIIString(metric, "precomputed") == 0) {
            c.matrix = true;
            return true;
        }
        PyObject *code = PyDict_GetItemWithError(globals().metrics, metric);
        if (!code) {
            PyErr_Clear();
            return false;
        }
        c.matrix = false;
        return read_int(code, 0, c.p.metric);
    }

    static bool no_metric_params(PyObject *o)
    {
        return o == Py_None || (PyDict_CheckExact(o) && PyDict_GET_SIZE(o) == 0);
    }

    /* ---- The entries ---- */

    /* topoml.ripser(X, maxdim, thresh, coeff, distance_matrix, do_cocycles,
     * metric, n_perm): a RipserResult, or None. */
    static nb::object fast_ripser(nb::handle X, nb::handle maxdim, nb::handle thresh,
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
    static nb::object fast_ripser_parallel(nb::handle X, nb::handle maxdim, nb::handle thresh,
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
            out["dgms"] = ctx.split_by_dim(r.bc, c.p.maxdim);
            return nb::object(out);
        });
    }

    /* topoml.barcodes(X, maxdim, threshold, modulus, metric, backend,
     * distance_matrix, metric_params, progress, collapse, n_threads,
     * cocycles): a BarcodeResult, or None (also for cocycles asked for:
     * the general path gives them). */
    static nb::object fast_barcodes(nb::handle X, nb::handle maxdim, nb::handle threshold,
                                    nb::handle modulus, nb::handle metric, nb::handle backend,
                                    nb::handle distance_matrix, nb::handle metric_params,
                                    nb::handle progress, nb::handle collapse,
                                    nb::handle n_threads, nb::handle cocycles)
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
    nb::object ripser_result(const Run &r, const Call &c, nb::handle X, nb::handle metric)
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
    nb::object barcode_result(const Run &r, const Call &c)
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
    static nb::object timings(const Run &r)
    {
        const Globals &g = globals();
        nb::dict t;
        set_item(t, g.compute, nb::float_(r.seconds));
        set_item(t, g.c, nb::float_(r.c_seconds));
        set_item(t, g.total, nb::float_(now_seconds() - r.t_entry));
        return t;
    }

    static void set_item(nb::handle d, PyObject *key, nb::handle value)
    {
        if (PyDict_SetItem(d.ptr(), key, value.ptr()) != 0)
            throw nb::python_error();
    }
    /* A new instance's attributes, all at once: its __dict__ made here
     * (setting them one by one looks each name up in the class first,
     * some microseconds a call with cold caches). Neither class has
     * descriptors or __setattr__ of its own for these names. */
    static void set_dict(nb::handle o, nb::handle attrs)
    {
        if (PyObject_GenericSetDict(o.ptr(), attrs.ptr(), nullptr) != 0)
            throw nb::python_error();
    }

  private:
    uint64_t generation_ = UINT64_MAX; /* of selection() when this context last followed it */

    /* rips on an Array: a point cloud, or with `matrix` a square distance
     * matrix (checked and cut to its lower triangle here); None when the
     * matrix fails a check or is not square. */
    template <class Build>
    nb::object on_array(const Array &a, bool matrix, const Params &p, PyObject *progress,
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
    static topoml_rips_options rips_options(uint32_t maxdim, double threshold, uint32_t modulus,
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
    nb::object run_rips(Prepare &&prepare, Create &&create, uint64_t n_points, const Params &p,
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

  public:
    /* ---- Vietoris–Rips on an array in CUDA device memory ----
     *
     * `a`: anything DLPack imports as a C-contiguous float32/float64 CUDA
     * array (a torch/CuPy array or a DLPack capsule): points (n x dim) or,
     * with condensed, the n(n-1)/2 entries of a condensed matrix. The values
     * stay where they are (topoml_data_from_device); `stream` is the
     * cudaStream_t (as an integer) after whose work they are ready. Returns
     * rips's dict with "host_copies": the host copies the library made,
     * and with want_generators "gens" (generators_by_dim). */
    nb::dict rips_device(nb::ndarray<nb::device::cuda, nb::c_contig> a, bool condensed, uint64_t n,
                         uint32_t maxdim, double threshold, uint32_t modulus, uint32_t metric,
                         uintptr_t stream, nb::object progress, bool check_signals,
                         bool want_generators)
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

    /* Pairwise distances of a point cloud, condensed in Ripser's order. */
    nb::ndarray<nb::numpy, double> distances(Points points, uint32_t metric)
    {
        Guard g(this);
        topoml_data *data = make_data(points, std::nullopt, std::nullopt, std::nullopt,
                                      std::nullopt, points.shape(0));
        void *out = nullptr;
        uint64_t count = 0;
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_distances(ctx_, data, (topoml_metric)metric, TOPOML_F64, &out, &count);
        }
        topoml_data_free(ctx_, data);
        if (!emit_warnings()) {
            topoml_free(ctx_, out);
            throw nb::python_error();
        }
        check(st);
        double *copy = new double[count ? count : 1];
        std::memcpy(copy, out, count * sizeof(double));
        topoml_free(ctx_, out);
        return owned_array(copy, {(size_t)count});
    }

    /* ---- features of one diagram (topoml/features.h) ---- */

    nb::ndarray<nb::numpy, double> pairs_finite(Pairs pairs, uint32_t mode, double clip)
    {
        Guard g(this);
        size_t n = pairs.shape(0);
        double *out = new double[2 * n + 2];
        uint64_t kept = 0;
        int st = topoml_pairs_finite(ctx_, as_pairs(pairs), n, mode, clip,
                                     reinterpret_cast<topoml_pair *>(out), &kept);
        if (st != TOPOML_OK) {
            delete[] out;
            raise_status(st);
        }
        return owned_array(out, {(size_t)kept, 2});
    }

    nb::ndarray<nb::numpy, double> betti_curve(Pairs pairs, Vector grid)
    {
        Guard g(this);
        size_t m = grid.shape(0);
        std::vector<uint64_t> counts(m);
        check(topoml_betti_curve(ctx_, as_pairs(pairs), pairs.shape(0), grid.data(), m,
                                 counts.data()));
        double *out = new double[m ? m : 1];
        for (size_t i = 0; i < m; i++)
            out[i] = (double)counts[i];
        return owned_array(out, {m});
    }

    nb::ndarray<nb::numpy, double> landscapes(Pairs pairs, uint32_t levels, Vector grid)
    {
        Guard g(this);
        size_t m = grid.shape(0);
        double *out = new double[(size_t)levels * m + 1];
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_landscapes(ctx_, as_pairs(pairs), pairs.shape(0), levels, grid.data(), m,
                                   out);
        }
        if (st != TOPOML_OK) {
            delete[] out;
            raise_status(st);
        }
        return owned_array(out, {(size_t)levels, m});
    }

    double entropy(Pairs pairs)
    {
        Guard g(this);
        double e = 0;
        check(topoml_persistent_entropy(ctx_, as_pairs(pairs), pairs.shape(0), &e));
        return e;
    }

    double total_persistence(Pairs pairs, double q)
    {
        Guard g(this);
        double s = 0;
        check(topoml_total_persistence(ctx_, as_pairs(pairs), pairs.shape(0), q, &s));
        return s;
    }

    double bottleneck(Pairs a, Pairs b)
    {
        Guard g(this);
        double d = 0;
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_bottleneck_distance(ctx_, as_pairs(a), a.shape(0), as_pairs(b),
                                            b.shape(0), &d);
        }
        check(st);
        return d;
    }

    double wasserstein(Pairs a, Pairs b, double order, double internal_p)
    {
        Guard g(this);
        double d = 0;
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_wasserstein_distance(ctx_, as_pairs(a), a.shape(0), as_pairs(b),
                                             b.shape(0), order, internal_p, &d);
        }
        check(st);
        return d;
    }

    /* Persistence images of several diagrams at once: diagram k is
     * pairs[offsets[k]:offsets[k+1]]; returns (n_diagrams, height, width). */
    nb::ndarray<nb::numpy, double> persistence_images(Pairs pairs, Offsets offsets, uint32_t weight,
                                                      double weight_max, double weight_power,
                                                      double sigma, double birth_min,
                                                      double birth_max, double pers_min,
                                                      double pers_max, uint32_t width,
                                                      uint32_t height, uint32_t infinite,
                                                      double clip_death, nb::object progress,
                                                      bool check_signals)
    {
        Guard g(this);
        if (offsets.shape(0) < 1)
            throw nb::value_error("persistence images: offsets needs at least one entry");
        size_t nd = offsets.shape(0) - 1;
        if (nd > 0 && offsets.data()[nd] > pairs.shape(0))
            throw nb::value_error("persistence images: offsets run past the pairs");
        topoml_image_params_v1 p;
        topoml_image_params_init(&p);
        p.weight = weight;
        p.weight_max = weight_max;
        p.weight_power = weight_power;
        p.sigma = sigma;
        p.birth_min = birth_min;
        p.birth_max = birth_max;
        p.pers_min = pers_min;
        p.pers_max = pers_max;
        p.width = width;
        p.height = height;
        p.infinite = infinite;
        p.clip_death = clip_death;
        size_t cells = nd * (size_t)width * (size_t)height;
        if (width != 0 && height != 0 && cells / width / height != nd)
            throw nb::value_error("persistence images: too many pixels");
        double *out = new double[cells ? cells : 1];
        Progress pr(progress, check_signals);
        topoml_set_progress(ctx_, &Progress::callback, &pr);
        int st;
        {
            nb::gil_scoped_release rel;
            st = topoml_persistence_images(ctx_, &p, nd, offsets.data(), as_pairs(pairs), out);
        }
        topoml_set_progress(ctx_, nullptr, nullptr);
        if (!emit_warnings()) {
            delete[] out;
            throw nb::python_error();
        }
        if (st != TOPOML_OK) {
            delete[] out;
            if (st == TOPOML_E_CANCELLED)
                pr.raise();
            raise_status(st);
        }
        return owned_array(out, {nd, (size_t)height, (size_t)width});
    }

  private:
    topoml_context *ctx_ = nullptr;
    bool busy_ = false;
    std::vector<std::string> warnings_;

    /* One call at a time on this context (the C API's rule). */
    struct Guard {
        Context *c;
        explicit Guard(Context *c) : c(c)
        {
            if (c->busy_)
                throw std::runtime_error(
                    "topoml: a Context is used by one thread at a time; make one per thread");
            c->busy_ = true;
        }
        ~Guard() { c->busy_ = false; }
    };

    static void on_log(void *user, int level, const char *message)
    {
        if (level <= TOPOML_LOG_WARN && message)
            static_cast<Context *>(user)->warnings_.emplace_back(message);
    }

    /* The status as the Python exception the package documents, with the C
     * message. */
    [[noreturn]] void raise_status(int st)
    {
        std::string msg = topoml_errmsg(ctx_);
        if (msg.empty())
            msg = topoml_strerror(st);
        switch (st) {
        case TOPOML_E_INVALID:
        case TOPOML_E_PARSE:
        case TOPOML_E_OVERFLOW:
        case TOPOML_E_NOT_FOUND:
        case TOPOML_E_CONFIG:
            throw nb::value_error(msg.c_str());
        case TOPOML_E_NOMEM:
            PyErr_SetString(PyExc_MemoryError, msg.c_str());
            throw nb::python_error();
        case TOPOML_E_LIMIT: {
            nb::object exc = memory_limit_error(msg.c_str());
            nb::setattr(exc, "partial", nb::none());
            PyErr_SetObject(memory_limit_error.ptr(), exc.ptr());
            throw nb::python_error();
        }
        case TOPOML_E_IO:
            PyErr_SetString(PyExc_OSError, msg.c_str());
            throw nb::python_error();
        case TOPOML_E_CANCELLED:
            PyErr_SetString(cancelled_error.ptr(), msg.c_str());
            throw nb::python_error();
        default:
            throw std::runtime_error(msg);
        }
    }
    void check(int st)
    {
        if (st != TOPOML_OK)
            raise_status(st);
    }

    static nb::object str_or_none(const char *s)
    {
        if (!s)
            return nb::none();
        return nb::str(s);
    }

    static const topoml_pair *as_pairs(const Pairs &p)
    {
        return reinterpret_cast<const topoml_pair *>(p.data());
    }

    /* The shape checks of an input, with the GIL held: a ValueError. */
    static void check_input(const std::optional<Points> &points,
                            const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                            const std::optional<Index> &ej, const std::optional<Vector> &ed,
                            uint64_t n)
    {
        if (points)
            return;
        if (condensed) {
            if (n < 2 ? condensed->shape(0) != 0 : condensed->shape(0) != n * (n - 1) / 2)
                throw nb::value_error("condensed distances: length is not n(n-1)/2");
        } else if (ei && ej && ed) {
            size_t m = ed->shape(0);
            if (ei->shape(0) != m || ej->shape(0) != m)
                throw nb::value_error("sparse distances: i, j and d differ in length");
        } else {
            throw nb::value_error("no input: give points, condensed distances or edges");
        }
    }

    /* The data set of an input that passed check_input; runs without the
     * GIL (the arrays are held by the caller's arguments). */
    int create_data(topoml_data **data, const std::optional<Points> &points,
                    const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                    const std::optional<Index> &ej, const std::optional<Vector> &ed, uint64_t n)
    {
        if (points)
            return topoml_data_from_points(ctx_, data, points->shape(0), points->shape(1),
                                           points->data());
        if (condensed)
            return topoml_data_from_condensed(ctx_, data, n, condensed->data());
        size_t m = ed->shape(0);
        auto *edges = static_cast<topoml_edge *>(std::malloc(sizeof(topoml_edge) * (m ? m : 1)));
        if (!edges)
            return TOPOML_E_NOMEM;
        for (size_t k = 0; k < m; k++)
            edges[k] = topoml_edge{ed->data()[k], ei->data()[k], ej->data()[k]};
        int st = topoml_data_from_edges(ctx_, data, n, m, edges);
        std::free(edges);
        return st;
    }

    topoml_data *make_data(const std::optional<Points> &points,
                           const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                           const std::optional<Index> &ej, const std::optional<Vector> &ed,
                           uint64_t n)
    {
        check_input(points, condensed, ei, ej, ed, n);
        topoml_data *data = nullptr;
        int st;
        {
            nb::gil_scoped_release rel;
            st = create_data(&data, points, condensed, ei, ej, ed, n);
        }
        if (st != TOPOML_OK)
            raise_status(st);
        return data;
    }

    /* TOPOML_E_LIMIT after some dimensions were finished: MemoryLimitError
     * with the C message and `partial`, the finished dimensions as rips's
     * dict plus "stopped" ({"dim": the first unfinished dimension,
     * "reason": "memory limit"}, as the CLI's JSON says it). Frees bc. */
    [[noreturn]] void raise_partial(topoml_barcode *bc, double seconds, double c_seconds,
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
    nb::dict barcode_dict(const topoml_barcode *bc, uint32_t maxdim, double seconds)
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
    static nb::list split_by_dim(const topoml_barcode *bc, uint32_t maxdim)
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

    /* A new (rows, 2) float64 numpy array that owns its memory, made by
     * numpy's C API or numpy.empty: on small results a nanobind export (a wrapper object,
     * then numpy's look for the array protocols on it) costs more than
     * filling the array. */
    static nb::object new_pairs(uint64_t rows)
    {
        const Globals &g = globals();
        if (g.use_new_array)
            return new_array(g.f64, 2, (Py_ssize_t)rows, 2);
        nb::object n = nb::steal(PyLong_FromUnsignedLongLong(rows));
        if (!n.is_valid())
            throw nb::python_error();
        PyObject *items[2] = {n.ptr(), g.two};
        nb::object shape = nb::steal(PyTuple_New(2));
        if (!shape.is_valid())
            throw nb::python_error();
        for (int k = 0; k < 2; k++) {
            Py_INCREF(items[k]);
            PyTuple_SET_ITEM(shape.ptr(), k, items[k]);
        }
        PyObject *args[1] = {shape.ptr()};
        nb::object arr = nb::steal(PyObject_Vectorcall(g.empty, args, 1, nullptr));
        if (!arr.is_valid())
            throw nb::python_error();
        return arr;
    }

    /* A new C-contiguous numpy array of `dtype` (nd 1 or 2 dimensions), as
     * numpy.empty makes it, by numpy's C API (Globals::new_array): no shape
     * tuple, no argument parsing, fewer places touched. */
    static nb::object new_array(PyObject *dtype, int nd, Py_ssize_t d0, Py_ssize_t d1)
    {
        const Globals &g = globals();
        const Py_ssize_t dims[2] = {d0, d1};
        Py_INCREF(dtype); /* stolen */
        nb::object arr = nb::steal(g.new_array(reinterpret_cast<PyTypeObject *>(g.ndarray), dtype,
                                               nd, dims, nullptr, nullptr, 0, nullptr));
        if (!arr.is_valid())
            throw nb::python_error();
        return arr;
    }

    /* The memory of a new C-contiguous numpy array (numpy.empty's). */
    template <class T> static T *array_data(const nb::object &arr)
    {
        if (globals().layout)
            return reinterpret_cast<T *>(reinterpret_cast<const NumpyArray *>(arr.ptr())->data);
        Py_buffer view;
        if (PyObject_GetBuffer(arr.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0)
            throw nb::python_error();
        T *p = static_cast<T *>(view.buf);
        PyBuffer_Release(&view);
        return p;
    }

    /* numpy.arange(n) (int64), a new array (new_array or numpy.empty)
     * filled here. */
    static nb::object arange(uint64_t n)
    {
        const Globals &g = globals();
        nb::object arr;
        if (g.use_new_array) {
            arr = new_array(g.i64, 1, (Py_ssize_t)n, 0);
        } else {
            nb::object len = nb::steal(PyLong_FromUnsignedLongLong(n));
            if (!len.is_valid())
                throw nb::python_error();
            PyObject *args[2] = {len.ptr(), g.i64};
            arr = nb::steal(PyObject_Vectorcall(g.empty, args, 2, nullptr));
            if (!arr.is_valid())
                throw nb::python_error();
        }
        int64_t *p = array_data<int64_t>(arr);
        for (uint64_t k = 0; k < n; k++)
            p[k] = (int64_t)k;
        return arr;
    }

    static uint64_t h0_bars(const topoml_barcode *bc)
    {
        uint64_t n = 0, k = 0;
        const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
        while (k < n && iv[k].dim == 0)
            k++;
        return k;
    }

    static uint64_t data_points(uint64_t n, const std::optional<Points> &points)
    {
        return points ? points->shape(0) : n;
    }

    /* The representative cocycles of split_by_dim's rows: per dimension a
     * list with one (k, d + 2) int64 array per row, ripser.py's layout
     * (vertices descending, then the value in 0..p-1). */
    static nb::list cocycles_by_dim(const topoml_barcode *bc, uint32_t maxdim)
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
    static nb::list generators_by_dim(const topoml_barcode *bc, uint32_t maxdim)
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

    /* The progress callback's state: the user's function (or None) and
     * whether to look for Ctrl-C. The callback runs without the GIL on the
     * computing thread (backends report from the calling thread only); it
     * takes the GIL at most every 50 ms, and always for the last report. */
    struct Progress {
        nb::object fn;
        bool check_signals;
        double last = 0;
        PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
        bool user_cancel = false;

        Progress(nb::object f, bool sig) : fn(std::move(f)), check_signals(sig) {}
        ~Progress()
        {
            if (type || value || trace) {
                nb::gil_scoped_acquire g;
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(trace);
            }
        }

        static int callback(void *user, const char *stage, uint64_t done, uint64_t total)
        {
            auto *p = static_cast<Progress *>(user);
            if (!p->check_signals && p->fn.is_none())
                return 0;
            double t = now_seconds();
            if (t - p->last < 0.05 && done < total)
                return 0;
            p->last = t;
            nb::gil_scoped_acquire g;
            if (p->type || p->user_cancel)
                return 1; /* already asked to stop; keep the first reason */
            if (p->check_signals && PyErr_CheckSignals() != 0) {
                PyErr_Fetch(&p->type, &p->value, &p->trace);
                return 1;
            }
            if (!p->fn.is_none()) {
                PyObject *r = PyObject_CallFunction(p->fn.ptr(), "sKK", stage ? stage : "",
                                                    (unsigned long long)done,
                                                    (unsigned long long)total);
                if (!r) {
                    PyErr_Fetch(&p->type, &p->value, &p->trace);
                    return 1;
                }
                int stop = PyObject_IsTrue(r);
                Py_DECREF(r);
                if (stop < 0) {
                    PyErr_Fetch(&p->type, &p->value, &p->trace);
                    return 1;
                }
                if (stop) {
                    p->user_cancel = true;
                    return 1;
                }
            }
            return 0;
        }

        /* After TOPOML_E_CANCELLED: the exception that caused it (Ctrl-C's
         * KeyboardInterrupt, or what the user's function raised). */
        void raise()
        {
            if (type) {
                PyErr_Restore(type, value, trace);
                type = value = trace = nullptr;
                throw nb::python_error();
            }
        }
    };
};

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

/* The classes and the metric table the fast entries fill and read
 * (topoml._rips registers them when it is imported). */
void set_rips_types(nb::type_object ripser_result, nb::type_object barcode_result,
                    nb::dict metrics)
{
    Globals &g = globals();
    for (PyObject **slot : {&g.ripser_result, &g.barcode_result, &g.metrics})
        Py_XDECREF(*slot);
    g.ripser_result = ripser_result.release().ptr();
    g.barcode_result = barcode_result.release().ptr();
    g.metrics = metrics.release().ptr();
}

/* Runs F on the arguments: a new reference, or nullptr with a Python
 * exception set (C++ exceptions turned as nanobind turns them). */
template <nb::object (*F)(PyObject *const *)> PyObject *run_fast(PyObject *const *args)
{
    try {
        return F(args).release().ptr();
    } catch (nb::python_error &e) {
        e.restore();
    } catch (nb::builtin_exception &e) {
        PyObject *type = PyExc_RuntimeError;
        switch (e.type()) {
        case nb::exception_type::value_error: type = PyExc_ValueError; break;
        case nb::exception_type::type_error: type = PyExc_TypeError; break;
        case nb::exception_type::index_error: type = PyExc_IndexError; break;
        case nb::exception_type::key_error: type = PyExc_KeyError; break;
        default: break;
        }
        PyErr_SetString(type, e.what());
    } catch (std::bad_alloc &) {
        PyErr_NoMemory();
    } catch (std::exception &e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
}

/* The fast entries as plain CPython functions (METH_FASTCALL) of a fixed
 * number of positional arguments, each as given (topoml._core.ripser and
 * so on; the tests call them directly): nanobind's dispatcher, made for
 * overloads, keywords and conversions, costs about a microsecond more a
 * call when its code is out of the caches, which on a small input is a
 * visible share of the call. */
template <Py_ssize_t N, nb::object (*F)(PyObject *const *)>
PyObject *entry(PyObject *, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != N) {
        PyErr_Format(PyExc_TypeError, "takes %zd positional arguments (%zd given)", N, nargs);
        return nullptr;
    }
    return run_fast<F>(args);
}

nb::object ripser_args(PyObject *const *a)
{
    return Context::fast_ripser(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
}
nb::object ripser_parallel_args(PyObject *const *a)
{
    return Context::fast_ripser_parallel(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                         a[9]);
}
nb::object barcodes_args(PyObject *const *a)
{
    return Context::fast_barcodes(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                                  a[10], a[11]);
}
/* ripser_parallel's public parameters: giotto-ph's nearest_neighbors_params
 * (6) and weight_params (8) are read by neither path. */
nb::object ripser_parallel_public(PyObject *const *a)
{
    return Context::fast_ripser_parallel(a[0], a[1], a[2], a[3], a[4], a[5], a[7], a[9], a[10],
                                         a[11]);
}

PyMethodDef entries[] = {
    {"ripser", (PyCFunction)(void (*)(void))entry<8, ripser_args>, METH_FASTCALL,
     "ripser(X, maxdim, thresh, coeff, distance_matrix, do_cocycles, metric, n_perm): "
     "topoml.ripser's result, or None (topoml._rips)"},
    {"ripser_parallel", (PyCFunction)(void (*)(void))entry<10, ripser_parallel_args>,
     METH_FASTCALL,
     "ripser_parallel(X, maxdim, thresh, coeff, metric, metric_params, weights, "
     "collapse_edges, n_threads, return_generators): topoml.ripser_parallel's result, or None"},
    {"barcodes", (PyCFunction)(void (*)(void))entry<12, barcodes_args>, METH_FASTCALL,
     "barcodes(X, maxdim, threshold, modulus, metric, backend, distance_matrix, metric_params, "
     "progress, collapse, n_threads, cocycles): topoml.barcodes' result, or None"},
    {nullptr, nullptr, 0, nullptr}};

/*
 * topoml.ripser, ripser_parallel and barcodes themselves: one compiled
 * callable each (an Entry), so that a call goes from the caller straight
 * to C++ with no Python frame in between (a shim's frame, its keyword
 * binding and its global look-ups cost some microseconds when their code
 * and data are out of the caches). The Entry binds the arguments, as given,
 * to the Python function's parameters (names and defaults read from that
 * function), runs the fast entry on them and, when that returns None or the
 * arguments do not bind, calls the Python function with the arguments as
 * they came: its general path, or the TypeError a bad call gets.
 * functools.update_wrapper gives the Entry the function's name, docstring
 * and __wrapped__, through which inspect.signature and help() show the
 * function's signature; __get__ makes it a routine to inspect and pydoc,
 * and __reduce__ pickles it by name, as a function.
 */
constexpr Py_ssize_t entry_max_params = 12;

struct EntryObject {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;     /* __dict__ (update_wrapper's attributes) */
    PyObject *fallback; /* the Python function */
    PyObject *on_limit; /* on_limit(exc, threshold, modulus): _rips._fast_partial */
    PyObject *(*fast)(PyObject *const *);
    Py_ssize_t n_params;
    PyObject *names[entry_max_params];    /* interned parameter names */
    PyObject *defaults[entry_max_params]; /* nullptr: no default */
};

/* The parameter of e named `key`, or -1. Keywords in a call are interned
 * strings, mostly the very objects of the function's code, so pointers are
 * compared first. */
Py_ssize_t entry_param(const EntryObject *e, PyObject *key)
{
    for (Py_ssize_t k = 0; k < e->n_params; k++)
        if (e->names[k] == key)
            return k;
    for (Py_ssize_t k = 0; k < e->n_params; k++)
        if (PyUnicode_Compare(e->names[k], key) == 0)
            return k;
    PyErr_Clear();
    return -1;
}

PyObject *entry_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames)
{
    auto *e = reinterpret_cast<EntryObject *>(self);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *slot[entry_max_params];
    bool bound = nargs <= e->n_params;
    if (bound) {
        for (Py_ssize_t k = 0; k < e->n_params; k++)
            slot[k] = k < nargs ? args[k] : nullptr;
        const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t i = 0; i < nkw && bound; i++) {
            const Py_ssize_t k = entry_param(e, PyTuple_GET_ITEM(kwnames, i));
            bound = k >= 0 && !slot[k];
            if (bound)
                slot[k] = args[nargs + i];
        }
        for (Py_ssize_t k = 0; k < e->n_params && bound; k++) {
            if (!slot[k])
                slot[k] = e->defaults[k];
            bound = slot[k] != nullptr;
        }
    }
    if (bound) {
        PyObject *r = e->fast(slot);
        if (!r) {
            /* A memory limit reached mid-way: its partial result as the
             * general path makes it (a BarcodeResult). */
            if (e->on_limit && PyErr_ExceptionMatches(memory_limit_error.ptr())) {
                PyObject *type, *value, *trace;
                PyErr_Fetch(&type, &value, &trace);
                PyErr_NormalizeException(&type, &value, &trace);
                PyObject *call[3] = {value, slot[2], slot[3]};
                PyObject *done = PyObject_Vectorcall(e->on_limit, call, 3, nullptr);
                if (!done) {
                    Py_XDECREF(type);
                    Py_XDECREF(value);
                    Py_XDECREF(trace);
                    return nullptr;
                }
                Py_DECREF(done);
                PyErr_Restore(type, value, trace);
            }
            return nullptr;
        }
        if (r != Py_None)
            return r;
        Py_DECREF(r);
    }
    return PyObject_Vectorcall(e->fallback, args, nargsf, kwnames);
}

void entry_dealloc(PyObject *self)
{
    auto *e = reinterpret_cast<EntryObject *>(self);
    PyTypeObject *type = Py_TYPE(self);
    Py_XDECREF(e->dict);
    Py_XDECREF(e->fallback);
    Py_XDECREF(e->on_limit);
    for (Py_ssize_t k = 0; k < e->n_params; k++) {
        Py_XDECREF(e->names[k]);
        Py_XDECREF(e->defaults[k]);
    }
    type->tp_free(self);
    Py_DECREF(type);
}

/* As a function: bound to an instance when read from a class. */
PyObject *entry_get(PyObject *self, PyObject *obj, PyObject *)
{
    if (!obj || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

PyObject *entry_repr(PyObject *self)
{
    nb::object name = nb::getattr(nb::handle(self), "__qualname__", nb::str("?"));
    return PyUnicode_FromFormat("<function %S at %p>", name.ptr(), self);
}

PyObject *entry_reduce(PyObject *self, PyObject *)
{
    return PyObject_GetAttrString(self, "__qualname__");
}

PyMethodDef entry_methods[] = {
    {"__reduce__", entry_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyMemberDef entry_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(EntryObject, vectorcall), READONLY, nullptr},
    {"__dictoffset__", T_PYSSIZET, offsetof(EntryObject, dict), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef entry_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot entry_slots[] = {
    {Py_tp_dealloc, (void *)entry_dealloc},
    {Py_tp_call, (void *)PyVectorcall_Call},
    {Py_tp_descr_get, (void *)entry_get},
    {Py_tp_repr, (void *)entry_repr},
    {Py_tp_methods, entry_methods},
    {Py_tp_members, entry_members},
    {Py_tp_getset, entry_getset},
    {Py_tp_doc, (void *)"A public call of topoml as one compiled callable (see __wrapped__)."},
    {0, nullptr}};

PyType_Spec entry_spec = {"topoml._core.compiled_function", sizeof(EntryObject), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, entry_slots};

nb::object entry_type;

/* Entry(function, name, on_limit): `function`'s call, name one of "ripser",
 * "ripser_parallel", "barcodes" (whose fast entry runs first); on_limit
 * None or on_limit(exc, threshold, modulus), called on a MemoryLimitError
 * of the fast entry. Parameters: the function's positional ones, in order
 * (keyword-only parameters, *args and **kwargs: refused). */
nb::object make_entry(nb::object function, const std::string &name, nb::object on_limit)
{
    struct Kind {
        const char *name;
        PyObject *(*fast)(PyObject *const *);
        Py_ssize_t n_params;
    };
    static const Kind kinds[] = {{"ripser", run_fast<ripser_args>, 8},
                                 {"ripser_parallel", run_fast<ripser_parallel_public>, 12},
                                 {"barcodes", run_fast<barcodes_args>, 12}};
    const Kind *kind = nullptr;
    for (const Kind &k : kinds)
        if (name == k.name)
            kind = &k;
    if (!kind)
        throw nb::value_error("Entry: no compiled entry of that name");
    nb::object code = function.attr("__code__");
    const Py_ssize_t argc = nb::cast<Py_ssize_t>(code.attr("co_argcount"));
    const int flags = nb::cast<int>(code.attr("co_flags"));
    if (argc != kind->n_params || nb::cast<Py_ssize_t>(code.attr("co_kwonlyargcount")) != 0 ||
        (flags & (CO_VARARGS | CO_VARKEYWORDS)) != 0)
        throw nb::value_error("Entry: the function's parameters are not the entry's");
    nb::tuple varnames = nb::cast<nb::tuple>(code.attr("co_varnames"));
    nb::object defaults = function.attr("__defaults__");
    const Py_ssize_t n_def = defaults.is_none() ? 0 : (Py_ssize_t)nb::len(defaults);
    if (!entry_type.is_valid())
        entry_type = nb::steal(PyType_FromSpec(&entry_spec));
    if (!entry_type.is_valid())
        throw nb::python_error();
    auto *type = reinterpret_cast<PyTypeObject *>(entry_type.ptr());
    nb::object self = nb::steal(type->tp_alloc(type, 0));
    if (!self.is_valid())
        throw nb::python_error();
    auto *e = reinterpret_cast<EntryObject *>(self.ptr());
    e->vectorcall = entry_vectorcall;
    e->fast = kind->fast;
    e->fallback = function.inc_ref().ptr();
    e->on_limit = on_limit.is_none() ? nullptr : on_limit.inc_ref().ptr();
    for (Py_ssize_t k = 0; k < argc; k++) {
        PyObject *n = varnames[k].inc_ref().ptr();
        PyUnicode_InternInPlace(&n);
        e->names[k] = n;
        e->defaults[k] = k >= argc - n_def ? defaults[k - (argc - n_def)].inc_ref().ptr()
                                           : nullptr;
        e->n_params = k + 1;
    }
    return self;
}

} // namespace

NB_MODULE(_core, m)
{
    m.doc() = "topoml's compiled binding over the public C API (use the topoml package).";
    cancelled_error = nb::steal(PyErr_NewExceptionWithDoc(
        "topoml._core.CancelledError",
        "The computation was cancelled by the progress callback.", PyExc_RuntimeError, nullptr));
    m.attr("CancelledError") = cancelled_error;
    memory_limit_error = nb::steal(PyErr_NewExceptionWithDoc(
        "topoml._core.MemoryLimitError",
        "The work would exceed the memory limit. `partial`: None when it was refused before "
        "any dimension was computed, else the finished dimensions.",
        PyExc_MemoryError, nullptr));
    m.attr("MemoryLimitError") = memory_limit_error;
    backend_warning = nb::steal(PyErr_NewExceptionWithDoc(
        "topoml._core.BackendWarning",
        "What the library warned of during a computation: a backend that answered wrongly "
        "and was disabled (the reference's answer was returned instead), a certificate "
        "revoked, a plugin that could not be certified or loaded, a plugin that failed and "
        "was replaced by the reference.",
        PyExc_RuntimeWarning, nullptr));
    m.attr("BackendWarning") = backend_warning;
    m.def("version", []() { return std::string(topoml_version()); });
    m.def("lower_triangle", &lower_triangle, "matrix"_a);
    m.def("set_rips_types", &set_rips_types, "ripser_result"_a, "barcode_result"_a, "metrics"_a);
    m.def("Entry", &make_entry, "function"_a, "name"_a, "on_limit"_a.none());
    m.def("thread_context", []() {
        nb::object owner;
        Context::of_thread(&owner);
        return owner;
    });
    m.def("set_selected", [](std::optional<std::string> name) {
        Context::Selection &s = Context::selection();
        s.name = std::move(name);
        s.generation++;
    }, "name"_a.none());
    m.def("selected", []() { return Context::selection().name; });
    if (PyModule_AddFunctions(m.ptr(), entries) != 0)
        throw nb::python_error();
    /* For the tests: whether NumpyArray reads numpy's arrays and numpy's C
     * API makes the result's arrays, and turning both off (the buffer
     * protocol and numpy.empty then) and on again; the old state. */
    m.def("_numpy_layout", [](std::optional<bool> use) {
        Globals &g = globals();
        const bool was = g.layout;
        if (use) {
            g.layout = *use && g.layout_holds;
            g.use_new_array = g.layout && g.new_array;
        }
        return was;
    }, "use"_a.none() = nb::none());
    m.def("_numpy_api", []() { return globals().new_array != nullptr; });

    nb::class_<Context>(m, "Context")
        .def(nb::init<std::optional<std::string>, bool, bool>(), "plugin_path"_a = nb::none(),
             "no_plugins"_a = false, "no_env"_a = false)
        .def("backends", &Context::backends)
        .def("use_backend", &Context::use_backend, "name"_a.none())
        .def("find_backend", &Context::find_backend, "name"_a)
        .def("set_max_memory", &Context::set_max_memory, "bytes"_a)
        .def("max_memory", &Context::max_memory)
        .def("take_warnings", &Context::take_warnings)
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
             "check_signals"_a, "want_generators"_a = false)
        .def("distances", &Context::distances, "points"_a, "metric"_a)
        .def("pairs_finite", &Context::pairs_finite, "pairs"_a, "mode"_a, "clip"_a)
        .def("betti_curve", &Context::betti_curve, "pairs"_a, "grid"_a)
        .def("landscapes", &Context::landscapes, "pairs"_a, "levels"_a, "grid"_a)
        .def("entropy", &Context::entropy, "pairs"_a)
        .def("total_persistence", &Context::total_persistence, "pairs"_a, "q"_a)
        .def("bottleneck", &Context::bottleneck, "a"_a, "b"_a)
        .def("wasserstein", &Context::wasserstein, "a"_a, "b"_a, "order"_a, "internal_p"_a)
        .def("persistence_images", &Context::persistence_images, "pairs"_a, "offsets"_a,
             "weight"_a, "weight_max"_a, "weight_power"_a, "sigma"_a, "birth_min"_a,
             "birth_max"_a, "pers_min"_a, "pers_max"_a, "width"_a, "height"_a, "infinite"_a,
             "clip_death"_a, "progress"_a.none(), "check_signals"_a);
}
