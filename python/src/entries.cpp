/*
 * entries.cpp — topoml.ripser, ripser_parallel and barcodes as compiled
 * callables: the Entry type, which binds a call's arguments and runs
 * Context::fast_* (rips.cpp) or the Python function, and the same entries
 * as plain METH_FASTCALL functions.
 */
#include "binding.h"

namespace topoml_py {

namespace {

/* The classes and the metric table the fast entries fill and read
 * (topoml._rips registers them when it is imported). */
void set_rips_types(nb::type_object ripser_result, nb::type_object barcode_result,
                    nb::dict metrics, nb::callable giotto_dgms)
{
    Globals &g = globals();
    for (PyObject **slot : {&g.ripser_result, &g.barcode_result, &g.metrics, &g.giotto_dgms})
        Py_XDECREF(*slot);
    g.ripser_result = ripser_result.release().ptr();
    g.barcode_result = barcode_result.release().ptr();
    g.metrics = metrics.release().ptr();
    g.giotto_dgms = giotto_dgms.release().ptr();
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

void register_entries(nb::module_ &m)
{
    m.def("set_rips_types", &set_rips_types, "ripser_result"_a, "barcode_result"_a, "metrics"_a,
          "giotto_dgms"_a);
    m.def("Entry", &make_entry, "function"_a, "name"_a, "on_limit"_a.none());
    if (PyModule_AddFunctions(m.ptr(), entries) != 0)
        throw nb::python_error();
}

} // namespace topoml_py
