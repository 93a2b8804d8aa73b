/*
 * backends.cpp — the context and its backends: Context's making, the
 * backends' list, find and choice, the memory limit, the library's
 * warnings, each thread's context and the process-wide selection, progress
 * and Ctrl-C (the progress callback itself: Context::Progress, binding.h).
 */
#include "binding.h"

namespace topoml_py {

double now_seconds()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

Context::Context(std::optional<std::string> plugin_path, bool no_plugins, bool no_env)
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

Context::~Context()
{
    if (ctx_)
        topoml_context_free(ctx_);
}

/* ---- backends ---- */
/* One backend's topoml_backend_info as the dict backends() lists. */
nb::dict Context::info_dict(const topoml_backend_info &bi)
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

nb::list Context::backends()
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
nb::object Context::find_backend(const std::string &name)
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

void Context::use_backend(std::optional<std::string> name)
{
    Guard g(this);
    check(topoml_use_backend(ctx_, name ? name->c_str() : nullptr));
}

void Context::set_max_memory(uint64_t bytes)
{
    Guard g(this);
    topoml_set_max_memory(ctx_, bytes);
}

uint64_t Context::max_memory()
{
    Guard g(this);
    return topoml_get_max_memory(ctx_);
}

/* Warnings the library logged since the last call of this function. */
std::vector<std::string> Context::take_warnings()
{
    std::vector<std::string> w;
    w.swap(warnings_);
    return w;
}

/* What the library warned of during a computation, as BackendWarning
 * (a plugin disabled at run time must not go unnoticed: the call's
 * answer is the reference's). With the GIL held; false when a warnings
 * filter turned one into an exception (set). */
bool Context::emit_warnings()
{
    if (warnings_.empty())
        return true;
    for (const std::string &m : take_warnings())
        if (PyErr_WarnEx(backend_warning.ptr(), m.c_str(), 1) != 0)
            return false;
    return true;
}

/* The calling thread's context with the process-wide backend choice
 * (topoml._context.context()): made on the thread's first call and
 * kept in the thread's state dict, so it goes with the thread. */
Context &Context::of_thread(nb::object *owner)
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

Context::Selection &Context::selection()
{
    static Selection s;
    return s;
}

/* progress=None shows a bar when Python runs interactively
 * (_progress.interactive()): that, and progress=True, is the Python
 * layer's (_progress.Bar). False reaches the C side as None. */
bool Context::progress_of(PyObject *&progress)
{
    if (progress == Py_False) {
        progress = Py_None;
        return true;
    }
    if (progress == Py_None)
        return !interactive();
    return progress != Py_True && PyCallable_Check(progress);
}

bool Context::interactive()
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

void Context::on_log(void *user, int level, const char *message)
{
    if (level <= TOPOML_LOG_WARN && message)
        static_cast<Context *>(user)->warnings_.emplace_back(message);
}

void register_backends(nb::module_ &m, nb::class_<Context> &context)
{
    m.def("version", []() { return std::string(topoml_version()); });
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
    context
        .def(nb::init<std::optional<std::string>, bool, bool>(), "plugin_path"_a = nb::none(),
             "no_plugins"_a = false, "no_env"_a = false)
        .def("backends", &Context::backends)
        .def("use_backend", &Context::use_backend, "name"_a.none())
        .def("find_backend", &Context::find_backend, "name"_a)
        .def("set_max_memory", &Context::set_max_memory, "bytes"_a)
        .def("max_memory", &Context::max_memory)
        .def("take_warnings", &Context::take_warnings);
}

} // namespace topoml_py
