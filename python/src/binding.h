/*
 * binding.h — what the parts of topoml._core share (python/src/README.md
 * says which file holds what). Internal to the binding: nothing here is
 * the package's interface; the Python modules see only what the register_*
 * functions define.
 */
#ifndef TOPOML_PY_BINDING_H
#define TOPOML_PY_BINDING_H

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

namespace topoml_py {

/* ---- Arrays and errors (arrays.cpp) ----
 *
 * The typed array views the nanobind-bound calls take, the exception types
 * the module defines, numpy's array layout and C API as the fast paths
 * use them, and the per-process table of names and types (globals()). */

using Points = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Vector = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Index = nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Offsets = nb::ndarray<const uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Pairs = nb::ndarray<const double, nb::shape<-1, 2>, nb::c_contig, nb::device::cpu>;

extern nb::object cancelled_error;    /* topoml._core.CancelledError */
extern nb::object memory_limit_error; /* topoml._core.MemoryLimitError */
extern nb::object backend_warning;    /* topoml._core.BackendWarning */

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
    /* _rips._giotto_dgms: giotto-ph's float32 diagrams of ripser_parallel */
    PyObject *giotto_dgms = nullptr;
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

/* Made on first use, kept for the life of the process (arrays.cpp). */
Globals &globals();

/* ---- Time (backends.cpp) ---- */

double now_seconds();

/* ---- New numpy arrays ---- */

/* A numpy array that owns `data` (allocated with new[]). */
template <class T> nb::ndarray<nb::numpy, T> owned_array(T *data, std::initializer_list<size_t> shape)
{
    nb::capsule owner(data, [](void *p) noexcept { delete[] static_cast<T *>(p); });
    return nb::ndarray<nb::numpy, T>(data, shape, owner);
}

/* ---- The context ----
 *
 * One class for the whole binding (nanobind binds one type); its members
 * are defined by concern, each block below in the file it names. */

/*
 * One topoml_context. The C API allows one thread at a time per context; the
 * Python layer keeps one Context per thread, and `busy` turns a breach of that
 * rule into an exception instead of a data race.
 */
class Context {
  public:
    explicit Context(std::optional<std::string> plugin_path, bool no_plugins, bool no_env);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

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

    /* The process-wide backend choice of topoml.select_backend; read and
     * written with the GIL held. Each context follows it on its next call. */
    struct Selection {
        std::optional<std::string> name;
        uint64_t generation = 0;
    };

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

    /* backends.cpp: the context itself, the backends, the memory limit, the
     * library's warnings, the thread's context and the process-wide
     * selection, progress and Ctrl-C. */
    static nb::dict info_dict(const topoml_backend_info &bi);
    nb::list backends();
    nb::object find_backend(const std::string &name);
    void use_backend(std::optional<std::string> name);
    void set_max_memory(uint64_t bytes);
    uint64_t max_memory();
    std::vector<std::string> take_warnings();
    bool emit_warnings();
    static Context &of_thread(nb::object *owner = nullptr);
    static Selection &selection();
    static bool progress_of(PyObject *&progress);
    static bool interactive();

    /* arrays.cpp: reading the arguments of the compiled entries, the checks
     * and conversions of input arrays, the status as a Python exception, new
     * numpy arrays for results. */
    static bool is_little_endian();
    static bool read_int(PyObject *o, long long low, uint32_t &out);
    static bool read_threshold(PyObject *o, double &t);
    static bool read_threads(PyObject *o, uint32_t &out);
    static bool read_kind(PyObject *distance, PyObject *metric, Call &c);
    static bool no_metric_params(PyObject *o);

    /* rips.cpp: Vietoris–Rips barcodes (Context.rips, rips_array,
     * rips_device), the compiled entries' bodies (fast_*) and the results
     * they build. */
    nb::object rips(std::optional<Points> points, std::optional<Vector> condensed,
                    std::optional<Index> ei, std::optional<Index> ej, std::optional<Vector> ed,
                    uint64_t n, uint32_t maxdim, double threshold, uint32_t modulus,
                    uint32_t metric, uint32_t collapse, uint32_t n_threads, nb::object progress,
                    bool check_signals, bool want_stats, uint32_t want_generators,
                    uint32_t weights, std::optional<Vector> vertex_weights, double weight_p,
                    uint32_t dtm_neighbors, double dtm_r);
    nb::object rips_array(nb::ndarray<nb::ndim<2>, nb::device::cpu, nb::ro> a, bool matrix,
                          uint32_t maxdim, double threshold, uint32_t modulus, uint32_t metric,
                          uint32_t collapse, uint32_t n_threads, nb::object progress,
                          bool check_signals, bool want_stats, uint32_t want_generators);
    template <class Build>
    static nb::object fast(PyObject *X, Call &c, bool ok, bool want_stats, double t_entry,
                           Build &&build);
    nb::object rips_dict(const Run &r, uint32_t maxdim);
    static nb::object fast_ripser(nb::handle X, nb::handle maxdim, nb::handle thresh,
                                  nb::handle coeff, nb::handle distance_matrix,
                                  nb::handle do_cocycles, nb::handle metric, nb::handle n_perm);
    static nb::object fast_ripser_parallel(nb::handle X, nb::handle maxdim, nb::handle thresh,
                                           nb::handle coeff, nb::handle metric,
                                           nb::handle metric_params, nb::handle weights,
                                           nb::handle collapse_edges, nb::handle n_threads,
                                           nb::handle return_generators);
    static nb::object fast_barcodes(nb::handle X, nb::handle maxdim, nb::handle threshold,
                                    nb::handle modulus, nb::handle metric, nb::handle backend,
                                    nb::handle distance_matrix, nb::handle metric_params,
                                    nb::handle progress, nb::handle collapse,
                                    nb::handle n_threads, nb::handle cocycles);
    nb::object ripser_result(const Run &r, const Call &c, nb::handle X, nb::handle metric);
    nb::object barcode_result(const Run &r, const Call &c);
    static nb::object timings(const Run &r);
    static void set_item(nb::handle d, PyObject *key, nb::handle value);
    static void set_dict(nb::handle o, nb::handle attrs);
    nb::dict rips_device(nb::ndarray<nb::device::cuda, nb::c_contig> a, bool condensed, uint64_t n,
                         uint32_t maxdim, double threshold, uint32_t modulus, uint32_t metric,
                         uintptr_t stream, nb::object progress, bool check_signals,
                         bool want_generators);

    /* features.cpp: distances and the features of diagrams
     * (topoml/features.h). */
    nb::ndarray<nb::numpy, double> distances(Points points, uint32_t metric);
    nb::ndarray<nb::numpy, double> pairs_finite(Pairs pairs, uint32_t mode, double clip);
    nb::ndarray<nb::numpy, double> betti_curve(Pairs pairs, Vector grid);
    nb::ndarray<nb::numpy, double> landscapes(Pairs pairs, uint32_t levels, Vector grid);
    double entropy(Pairs pairs);
    double total_persistence(Pairs pairs, double q);
    double bottleneck(Pairs a, Pairs b);
    double wasserstein(Pairs a, Pairs b, double order, double internal_p);
    nb::ndarray<nb::numpy, double> persistence_images(Pairs pairs, Offsets offsets, uint32_t weight,
                                                      double weight_max, double weight_power,
                                                      double sigma, double birth_min,
                                                      double birth_max, double pers_min,
                                                      double pers_max, uint32_t width,
                                                      uint32_t height, uint32_t infinite,
                                                      double clip_death, nb::object progress,
                                                      bool check_signals);

  private:
    uint64_t generation_ = UINT64_MAX; /* of selection() when this context last followed it */
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

    /* backends.cpp: the context itself, the backends, the memory limit, the
     * library's warnings, the thread's context and the process-wide
     * selection, progress and Ctrl-C. */
    static void on_log(void *user, int level, const char *message);

    /* arrays.cpp: reading the arguments of the compiled entries, the checks
     * and conversions of input arrays, the status as a Python exception, new
     * numpy arrays for results. */
    [[noreturn]] void raise_status(int st);
    void check(int st);
    static nb::object str_or_none(const char *s);
    static const topoml_pair *as_pairs(const Pairs &p);
    static void check_input(const std::optional<Points> &points,
                            const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                            const std::optional<Index> &ej, const std::optional<Vector> &ed,
                            uint64_t n);
    int create_data(topoml_data **data, const std::optional<Points> &points,
                    const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                    const std::optional<Index> &ej, const std::optional<Vector> &ed, uint64_t n);
    topoml_data *make_data(const std::optional<Points> &points,
                           const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                           const std::optional<Index> &ej, const std::optional<Vector> &ed,
                           uint64_t n);
    static nb::object new_pairs(uint64_t rows);
    static nb::object new_array(PyObject *dtype, int nd, Py_ssize_t d0, Py_ssize_t d1);
    static nb::object arange(uint64_t n);
    static uint64_t data_points(uint64_t n, const std::optional<Points> &points);

    /* rips.cpp: Vietoris–Rips barcodes (Context.rips, rips_array,
     * rips_device), the compiled entries' bodies (fast_*) and the results
     * they build. */
    template <class Build>
    nb::object on_array(const Array &a, bool matrix, const Params &p, PyObject *progress,
                        bool check_signals, bool want_stats, uint32_t want_generators,
                        double t_entry, Build &&build);
    static topoml_rips_options rips_options(uint32_t maxdim, double threshold, uint32_t modulus,
                                            uint32_t metric, uint32_t want_generators);
    template <class Prepare, class Create, class Build>
    nb::object run_rips(Prepare &&prepare, Create &&create, uint64_t n_points, const Params &p,
                        PyObject *progress, bool check_signals, bool want_stats,
                        uint32_t want_generators, double t_entry, Build &&build);
    [[noreturn]] void raise_partial(topoml_barcode *bc, double seconds, double c_seconds,
                                    double t_entry);
    nb::dict barcode_dict(const topoml_barcode *bc, uint32_t maxdim, double seconds);
    static nb::list split_by_dim(const topoml_barcode *bc, uint32_t maxdim);
    static uint64_t h0_bars(const topoml_barcode *bc);
    static nb::list cocycles_by_dim(const topoml_barcode *bc, uint32_t maxdim);
    static nb::list generators_by_dim(const topoml_barcode *bc, uint32_t maxdim);

    /* Here, as a template both arrays.cpp and rips.cpp use. */
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
};

/* ---- Registration: each part defines its functions and Context's
 * methods; core.cpp calls them in this order. ---- */

void register_arrays(nb::module_ &m);
void register_backends(nb::module_ &m, nb::class_<Context> &context);
void register_rips(nb::module_ &m, nb::class_<Context> &context);
void register_entries(nb::module_ &m);
void register_features(nb::class_<Context> &context);

} // namespace topoml_py

#endif
