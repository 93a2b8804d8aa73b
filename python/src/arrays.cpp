/*
 * arrays.cpp — arrays, arguments and errors: the exception types, numpy's
 * layout and C API as the fast paths read and make arrays, the arguments of
 * the compiled entries, the input checks and data sets, the status as a
 * Python exception, new numpy arrays for results.
 */
#include "binding.h"

namespace topoml_py {

nb::object cancelled_error;    /* topoml._core.CancelledError */
nb::object memory_limit_error; /* topoml._core.MemoryLimitError */
nb::object backend_warning;    /* topoml._core.BackendWarning */

namespace {

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

} // namespace

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

bool Context::is_little_endian()
{
    const uint16_t one = 1;
    return *reinterpret_cast<const uint8_t *>(&one) == 1;
}

/* ---- Reading the arguments (false: the Python layer's general path) ---- */
/* A plain int >= low (not a bool, not a numpy integer) within uint32. */
bool Context::read_int(PyObject *o, long long low, uint32_t &out)
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
bool Context::read_threshold(PyObject *o, double &t)
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
bool Context::read_threads(PyObject *o, uint32_t &out)
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
bool Context::read_kind(PyObject *distance, PyObject *metric, Call &c)
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

bool Context::no_metric_params(PyObject *o)
{
    return o == Py_None || (PyDict_CheckExact(o) && PyDict_GET_SIZE(o) == 0);
}

/* The status as the Python exception the package documents, with the C
 * message. */
[[noreturn]] void Context::raise_status(int st)
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

void Context::check(int st)
{
    if (st != TOPOML_OK)
        raise_status(st);
}

nb::object Context::str_or_none(const char *s)
{
    if (!s)
        return nb::none();
    return nb::str(s);
}

const topoml_pair *Context::as_pairs(const Pairs &p)
{
    return reinterpret_cast<const topoml_pair *>(p.data());
}

/* The shape checks of an input, with the GIL held: a ValueError. */
void Context::check_input(const std::optional<Points> &points,
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
int Context::create_data(topoml_data **data, const std::optional<Points> &points,
                         const std::optional<Vector> &condensed, const std::optional<Index> &ei,
                         const std::optional<Index> &ej, const std::optional<Vector> &ed,
                         uint64_t n)
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

topoml_data *Context::make_data(const std::optional<Points> &points,
                                const std::optional<Vector> &condensed,
                                const std::optional<Index> &ei, const std::optional<Index> &ej,
                                const std::optional<Vector> &ed, uint64_t n)
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

/* A new (rows, 2) float64 numpy array that owns its memory, made by
 * numpy's C API or numpy.empty: on small results a nanobind export (a wrapper object,
 * then numpy's look for the array protocols on it) costs more than
 * filling the array. */
nb::object Context::new_pairs(uint64_t rows)
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
nb::object Context::new_array(PyObject *dtype, int nd, Py_ssize_t d0, Py_ssize_t d1)
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

/* numpy.arange(n) (int64), a new array (new_array or numpy.empty)
 * filled here. */
nb::object Context::arange(uint64_t n)
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

uint64_t Context::data_points(uint64_t n, const std::optional<Points> &points)
{
    return points ? points->shape(0) : n;
}

void register_arrays(nb::module_ &m)
{
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
}

} // namespace topoml_py
