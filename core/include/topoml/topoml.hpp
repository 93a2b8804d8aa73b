/*
 * topoml/topoml.hpp — a header-only C++17 wrapper over the C API of
 * libtopoml (topoml/topoml.h), for host applications written in C++.
 *
 *  - RAII handles, movable and not copyable: Context, Data, Barcode, and
 *    Array<T> for the arrays an op returns (distances, edge lists).
 *  - View<T>: a read-only (pointer, size) range over memory the library owns
 *    (C++17 has no std::span).
 *  - Errors are exceptions on the C++ side only: a failed call throws
 *    topoml::Error with the C status code and the context's message;
 *    topoml::Cancelled (an Error) also carries the dimensions a cancelled
 *    barcode finished. Callbacks handed to the library (log, progress) are
 *    wrapped so that nothing thrown in them crosses C code: the exception is
 *    caught, the op is cancelled, and the exception is rethrown from the call
 *    that was running, after whatever that call made is released (nothing
 *    leaks: test_cpp_wrapper's a_throwing_callback_leaks_nothing, under
 *    Valgrind as memcheck_test_cpp_wrapper).
 *
 *  - Progress callbacks answer the other way round from C: C's returns
 *    non-zero to cancel; Context::set_progress takes a callable returning
 *    topoml::Progress::Cancel / Continue, or bool where false cancels, and
 *    refuses one returning int at compile time.
 *
 * Lifetimes and threads: Data, Barcode and Array keep the C context alive,
 * so they may outlive their Context (its callbacks are taken off when it
 * goes). A Context is used by one thread at a time (different contexts may
 * be used concurrently). A moved-from object may be destroyed, assigned
 * to or tested with `if (x)`; other uses throw Error(TOPOML_E_INVALID).
 *
 * Not here: anything that is not in topoml.h. Link with libtopoml as a C
 * program would (pkg-config topoml, or CMake's topoml::topoml).
 */
#ifndef TOPOML_TOPOML_HPP
#define TOPOML_TOPOML_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "topoml/topoml.h"

namespace topoml
{

/* The C status codes (topoml_status), as a scoped enum. */
enum class Status : int {
    ok = TOPOML_OK,
    invalid = TOPOML_E_INVALID,
    nomem = TOPOML_E_NOMEM,
    unsupported = TOPOML_E_UNSUPPORTED,
    overflow = TOPOML_E_OVERFLOW,
    limit = TOPOML_E_LIMIT,
    cancelled = TOPOML_E_CANCELLED,
    io = TOPOML_E_IO,
    parse = TOPOML_E_PARSE,
    abi = TOPOML_E_ABI,
    plugin = TOPOML_E_PLUGIN,
    device = TOPOML_E_DEVICE,
    not_found = TOPOML_E_NOT_FOUND,
    config = TOPOML_E_CONFIG,
    gate = TOPOML_E_GATE,
    internal = TOPOML_E_INTERNAL
};

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
inline std::string version()
{
    return topoml_version();
}

/* A static English description of a status. */
inline const char *strerror(Status status) noexcept
{
    return topoml_strerror(static_cast<int>(status));
}

/* A failed call: the status and the message the library gave (what()). */
class Error : public std::runtime_error
{
  public:
    Error(int status, const std::string &message)
        : std::runtime_error(message.empty() ? topoml_strerror(status) : message),
          status_(static_cast<Status>(status))
    {
    }

    Status status() const noexcept
    {
        return status_;
    }
    /* The C status code, e.g. TOPOML_E_LIMIT. */
    int code() const noexcept
    {
        return static_cast<int>(status_);
    }

  private:
    Status status_;
};

/* A read-only range over `size` elements at `data` that someone else owns. */
template <class T> class View
{
  public:
    using value_type = T;
    using const_iterator = const T *;
    using iterator = const T *;

    constexpr View() noexcept = default;
    constexpr View(const T *data, std::size_t size) noexcept : data_(data), size_(size)
    {
    }

    constexpr const T *data() const noexcept
    {
        return data_;
    }
    constexpr std::size_t size() const noexcept
    {
        return size_;
    }
    constexpr bool empty() const noexcept
    {
        return size_ == 0;
    }
    constexpr const T *begin() const noexcept
    {
        return data_;
    }
    constexpr const T *end() const noexcept
    {
        return data_ + size_;
    }
    constexpr const T &operator[](std::size_t k) const noexcept
    {
        return data_[k];
    }
    const T &at(std::size_t k) const
    {
        if (k >= size_)
            throw std::out_of_range("topoml::View::at: index out of range");
        return data_[k];
    }
    const T &front() const noexcept
    {
        return data_[0];
    }
    const T &back() const noexcept
    {
        return data_[size_ - 1];
    }
    std::vector<T> to_vector() const
    {
        return std::vector<T>(begin(), end());
    }

  private:
    const T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* An array the library allocated (distances, edge lists), freed with
 * topoml_free when the Array goes. */
template <class T> class Array
{
  public:
    Array() noexcept = default;
    Array(topoml_context *ctx, T *data, std::size_t size) noexcept
        : ctx_(ctx), data_(data), size_(size)
    {
    }
    /* As Context makes them: the array keeps the C context alive. */
    Array(std::shared_ptr<topoml_context> keep, T *data, std::size_t size) noexcept
        : ctx_(keep.get()), data_(data), size_(size), keep_(std::move(keep))
    {
    }
    ~Array()
    {
        reset();
    }
    Array(Array &&o) noexcept
        : ctx_(o.ctx_), data_(o.data_), size_(o.size_), keep_(std::move(o.keep_))
    {
        o.data_ = nullptr;
        o.size_ = 0;
    }
    Array &operator=(Array &&o) noexcept
    {
        if (this != &o) {
            reset();
            ctx_ = o.ctx_;
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            keep_ = std::move(o.keep_);
        }
        return *this;
    }
    Array(const Array &) = delete;
    Array &operator=(const Array &) = delete;

    T *data() noexcept
    {
        return data_;
    }
    const T *data() const noexcept
    {
        return data_;
    }
    std::size_t size() const noexcept
    {
        return size_;
    }
    bool empty() const noexcept
    {
        return size_ == 0;
    }
    T *begin() noexcept
    {
        return data_;
    }
    T *end() noexcept
    {
        return data_ + size_;
    }
    const T *begin() const noexcept
    {
        return data_;
    }
    const T *end() const noexcept
    {
        return data_ + size_;
    }
    T &operator[](std::size_t k) noexcept
    {
        return data_[k];
    }
    const T &operator[](std::size_t k) const noexcept
    {
        return data_[k];
    }
    View<T> view() const noexcept
    {
        return View<T>(data_, size_);
    }
    operator View<T>() const noexcept
    {
        return view();
    }
    std::vector<T> to_vector() const
    {
        return std::vector<T>(begin(), end());
    }

  private:
    void reset() noexcept
    {
        if (data_)
            topoml_free(ctx_, data_);
        data_ = nullptr;
        size_ = 0;
    }

    topoml_context *ctx_ = nullptr;
    T *data_ = nullptr;
    std::size_t size_ = 0;
    std::shared_ptr<topoml_context> keep_; /* the context outlives the array */
};

class Context;

/* A data set: a point cloud, a distance matrix or a sparse edge list. */
class Data
{
  public:
    Data() noexcept = default;
    ~Data()
    {
        reset();
    }
    Data(Data &&o) noexcept
        : ctx_(o.ctx_), data_(std::exchange(o.data_, nullptr)), keep_(std::move(o.keep_))
    {
    }
    Data &operator=(Data &&o) noexcept
    {
        if (this != &o) {
            reset();
            ctx_ = o.ctx_;
            data_ = std::exchange(o.data_, nullptr);
            keep_ = std::move(o.keep_);
        }
        return *this;
    }
    Data(const Data &) = delete;
    Data &operator=(const Data &) = delete;

    explicit operator bool() const noexcept
    {
        return data_ != nullptr;
    }
    const topoml_data *get() const noexcept
    {
        return data_;
    }

    /* TOPOML_INPUT_POINTS, _CONDENSED or _SPARSE. */
    topoml_input_kind kind() const
    {
        return static_cast<topoml_input_kind>(topoml_data_kind(need()));
    }
    /* Points or vertices. */
    std::uint64_t count() const
    {
        return topoml_data_count(need());
    }
    /* Coordinates per point (point clouds). */
    std::uint64_t dim() const
    {
        return topoml_data_dim(need());
    }

  private:
    friend class Context;
    Data(std::shared_ptr<topoml_context> keep, topoml_data *data) noexcept
        : ctx_(keep.get()), data_(data), keep_(std::move(keep))
    {
    }

    const topoml_data *need() const
    {
        if (!data_)
            throw Error(TOPOML_E_INVALID, "topoml::Data: empty (moved from)");
        return data_;
    }
    void reset() noexcept
    {
        if (data_)
            topoml_data_free(ctx_, data_);
        data_ = nullptr;
    }

    topoml_context *ctx_ = nullptr;
    topoml_data *data_ = nullptr;
    /* The C context stays alive while a Data made from it does, even when
     * its Context goes first: freeing in the wrong order is harmless. */
    std::shared_ptr<topoml_context> keep_;
};

/* Vietoris–Rips barcodes: intervals grouped by dimension, ascending. */
class Barcode
{
  public:
    Barcode() noexcept = default;
    explicit Barcode(topoml_barcode *bc) noexcept : bc_(bc)
    {
    }
    /* As Context makes them: the barcode keeps the C context alive. */
    Barcode(topoml_barcode *bc, std::shared_ptr<topoml_context> keep) noexcept
        : bc_(bc), keep_(std::move(keep))
    {
    }
    ~Barcode()
    {
        topoml_barcode_free(bc_);
    }
    Barcode(Barcode &&o) noexcept
        : bc_(std::exchange(o.bc_, nullptr)), keep_(std::move(o.keep_))
    {
    }
    Barcode &operator=(Barcode &&o) noexcept
    {
        if (this != &o) {
            topoml_barcode_free(bc_);
            bc_ = std::exchange(o.bc_, nullptr);
            keep_ = std::move(o.keep_);
        }
        return *this;
    }
    Barcode(const Barcode &) = delete;
    Barcode &operator=(const Barcode &) = delete;

    explicit operator bool() const noexcept
    {
        return bc_ != nullptr;
    }
    const topoml_barcode *get() const noexcept
    {
        return bc_;
    }

    /* Dimensions 0 .. max_dim() were computed (all of them if complete()). */
    std::uint32_t max_dim() const
    {
        return topoml_barcode_max_dim(need());
    }
    bool complete() const
    {
        return topoml_barcode_complete(need()) != 0;
    }

    /* Every interval; death is +INFINITY for essential classes. */
    View<topoml_interval> intervals() const
    {
        std::uint64_t n = 0;
        const topoml_interval *v = topoml_barcode_intervals(need(), &n);
        return View<topoml_interval>(v, static_cast<std::size_t>(n));
    }

    /* The intervals of one dimension (a part of intervals()). */
    View<topoml_interval> dimension(std::uint32_t dim) const
    {
        View<topoml_interval> all = intervals();
        const topoml_interval *b = all.begin(), *e = all.end();
        while (b != e && b->dim < dim)
            ++b;
        const topoml_interval *f = b;
        while (f != e && f->dim == dim)
            ++f;
        return View<topoml_interval>(b, static_cast<std::size_t>(f - b));
    }

    /* Computed with RipsOptions::cocycles? (false for a barcode without
     * intervals, which has none to give) */
    bool has_cocycles() const
    {
        return topoml_barcode_cocycle(need(), 0, nullptr) != nullptr;
    }

    /* The representative cocycle of intervals()[k] (topoml_barcode_cocycle):
     * rows of dim + 2 words, the dim + 1 vertices of a simplex descending,
     * then the value in 1..p-1; rows() words / (dim + 2) rows. Empty in
     * dimension 0; throws if the barcode has no cocycles or k is out of
     * range. */
    View<std::uint32_t> cocycle(std::size_t k) const
    {
        std::uint64_t rows = 0;
        const std::uint32_t *c = topoml_barcode_cocycle(need(), k, &rows);
        if (!c)
            throw Error(TOPOML_E_INVALID,
                        "topoml::Barcode::cocycle: no cocycles, or interval out of range");
        const std::size_t w = intervals()[k].dim + 2u;
        return View<std::uint32_t>(c, static_cast<std::size_t>(rows) * w);
    }

  private:
    const topoml_barcode *need() const
    {
        if (!bc_)
            throw Error(TOPOML_E_INVALID, "topoml::Barcode: empty (moved from)");
        return bc_;
    }

    topoml_barcode *bc_ = nullptr;
    std::shared_ptr<topoml_context> keep_; /* the context outlives the barcode */
};

/* A barcode computation stopped by the progress callback. partial() has the
 * dimensions that were finished (0 .. partial()->max_dim()), or is null. */
class Cancelled : public Error
{
  public:
    Cancelled(const std::string &message, std::shared_ptr<const Barcode> partial)
        : Error(TOPOML_E_CANCELLED, message), partial_(std::move(partial))
    {
    }
    const Barcode *partial() const noexcept
    {
        return partial_.get();
    }

  private:
    std::shared_ptr<const Barcode> partial_; /* shared: exceptions are copied */
};

/* How a Context is made (topoml_context_options). */
struct ContextOptions {
    std::string config_path;     /* empty: $TOPOML_CONFIG if set, else none */
    std::string plugin_path;     /* extra colon-separated plugin folders */
    bool use_environment = true; /* false: ignore TOPOML_CONFIG, TOPOML_PLUGIN_PATH */
    bool load_plugins = true;    /* false: only the built-in scalar backend */
    const topoml_allocator *allocator = nullptr; /* null: malloc; must outlive the Context */
};

/* Parameters of Context::barcode (topoml_rips_options). */
struct RipsOptions {
    std::uint32_t max_dim = 1;                      /* H_0 .. H_max_dim */
    double threshold = INFINITY;                    /* INFINITY: none (the enclosing radius) */
    std::uint32_t modulus = 2;                      /* coefficients in Z/p, p prime */
    topoml_metric metric = TOPOML_METRIC_EUCLIDEAN; /* for point clouds */
    bool cocycles = false; /* TOPOML_RIPS_COCYCLES: Barcode::cocycle */
    /* A weighted Rips filtration (topoml.h, "Weighted Rips filtrations"):
     * TOPOML_WEIGHTS_GIVEN takes vertex_weights (one per vertex),
     * TOPOML_WEIGHTS_DTM computes them; weight_p is 1, 2 or INFINITY. */
    topoml_weights weights = TOPOML_WEIGHTS_NONE;
    std::vector<double> vertex_weights;
    double weight_p = 1;
    std::uint32_t dtm_neighbors = 3;
    double dtm_r = 2;
};

/* One backend as topoml_backend_get (Context::backends) or topoml_backend_find
 * (Context::find_backend) describes it. The capability records (and their
 * device/schedule strings) belong to the Context. */
struct BackendInfo {
    std::string name, version, vendor, description;
    std::string path; /* empty for the built-in scalar backend */
    std::uint32_t abi_version = 0;
    Status probe_status = Status::ok;
    std::string probe_message;
    topoml_gate_state gate_state = TOPOML_GATE_DISABLED;
    std::string gate_reason;
    View<topoml_capability_v1> capabilities;
    /* topoml_selection: TOPOML_SELECT_BY_NAME is never chosen unless named. */
    std::uint32_t selection = 0;
    /* Where its ops run: "host" (this process) or "process" (a
     * topoml-plugin-host helper); see topoml_backend_info.isolation. */
    std::string isolation;

    bool enabled() const noexcept
    {
        return gate_state == TOPOML_GATE_ENABLED;
    }
};

/* What a progress callback answers (Context::set_progress). Mind the
 * opposite of C: there the callback returns non-zero to cancel, here a
 * callback returning bool returns false to cancel (true: go on). Returning
 * Progress says it in words; a callback returning anything else (an int,
 * as in C) does not compile. */
enum class Progress { Continue, Cancel };

/* A topoml_context: configuration, plugins, limits, callbacks, and the ops. */
class Context
{
  public:
    using LogFn = std::function<void(int level, const char *message)>;
    /* Return true to go on, false to cancel the op: the opposite of the C
     * callback's int, which cancels when non-zero. */
    using ProgressFn =
        std::function<bool(const char *stage, std::uint64_t done, std::uint64_t total)>;

    Context() : Context(ContextOptions())
    {
    }

    explicit Context(const ContextOptions &o) : hooks_(new Hooks)
    {
        topoml_context_options c{};
        c.struct_size = sizeof c;
        c.flags = (o.use_environment ? 0u : TOPOML_CTX_NO_ENV) |
                  (o.load_plugins ? 0u : TOPOML_CTX_NO_PLUGINS);
        c.config_path = o.config_path.empty() ? nullptr : o.config_path.c_str();
        c.plugin_path = o.plugin_path.empty() ? nullptr : o.plugin_path.c_str();
        c.allocator = o.allocator;
        topoml_context *ctx = nullptr;
        const int rc = topoml_context_new(&ctx, &c);
        if (rc != TOPOML_OK) {
            /* The half-made context holds the reason (file:line:column). */
            const std::string why = ctx ? topoml_errmsg(ctx) : "";
            topoml_context_free(ctx);
            throw Error(rc, why);
        }
        ctx_ = ctx;
        own_ = std::shared_ptr<topoml_context>(ctx, [](topoml_context *c) {
            topoml_context_free(c);
        });
    }

    /* The C context is freed when the last of this Context and the Data,
     * Barcode and Array made from it goes. */
    ~Context()
    {
        release();
    }
    Context(Context &&o) noexcept
        : ctx_(std::exchange(o.ctx_, nullptr)), own_(std::move(o.own_)),
          hooks_(std::move(o.hooks_))
    {
    }
    Context &operator=(Context &&o) noexcept
    {
        if (this != &o) {
            release();
            ctx_ = std::exchange(o.ctx_, nullptr);
            own_ = std::move(o.own_);
            hooks_ = std::move(o.hooks_);
        }
        return *this;
    }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    explicit operator bool() const noexcept
    {
        return ctx_ != nullptr;
    }
    /* For calling the C API directly. */
    topoml_context *get() const noexcept
    {
        return ctx_;
    }

    /* Text of the last error ("" if none). */
    std::string errmsg() const
    {
        return ctx_ ? topoml_errmsg(ctx_) : "";
    }

    /* ---- settings ---- */

    /* Messages of level <= max_level (topoml_log_level) go to fn; an empty
     * fn turns logging off. */
    void set_log(LogFn fn, int max_level = TOPOML_LOG_WARN)
    {
        need();
        hooks_->log = std::move(fn);
        topoml_set_log(ctx_, hooks_->log ? &Context::log_trampoline : nullptr, hooks_.get(),
                       max_level);
    }

    /* Progress of long ops: fn(stage, done, total) returns
     * topoml::Progress::Cancel, or false, to cancel the op, which then throws
     * Cancelled; Progress::Continue, or true, to go on. NOT as in C, where
     * non-zero cancels: a callable that returns anything but bool or
     * Progress is refused at compile time. An empty fn (nullptr, an empty
     * std::function) removes the callback. */
    template <class F> void set_progress(F fn)
    {
        using R = std::invoke_result_t<F &, const char *, std::uint64_t, std::uint64_t>;
        static_assert(std::is_same_v<R, bool> || std::is_same_v<R, Progress>,
                      "a topoml progress callback returns topoml::Progress (Continue, Cancel) "
                      "or bool (false cancels) -- not C's int, where non-zero cancels");
        if constexpr (std::is_pointer_v<F> || std::is_same_v<F, ProgressFn> ||
                      std::is_same_v<F, std::function<Progress(const char *, std::uint64_t,
                                                               std::uint64_t)>>) {
            if (!static_cast<bool>(fn)) {
                set_progress(nullptr);
                return;
            }
        }
        if constexpr (std::is_same_v<R, Progress>)
            install_progress([f = std::move(fn)](const char *stage, std::uint64_t done,
                                                 std::uint64_t total) mutable {
                return f(stage, done, total) == Progress::Continue;
            });
        else
            install_progress(ProgressFn(std::move(fn)));
    }
    void set_progress(std::nullptr_t)
    {
        install_progress(ProgressFn());
    }

    /* Bytes one op may allocate (0: no limit). Work whose estimate exceeds
     * it throws Error with Status::limit before it starts. */
    void set_max_memory(std::uint64_t bytes)
    {
        topoml_set_max_memory(need(), bytes);
    }
    std::uint64_t max_memory() const
    {
        return topoml_get_max_memory(need());
    }

    /* Run the following ops on this backend only (it fails rather than run
     * elsewhere), or choose automatically again. */
    void use_backend(const std::string &name)
    {
        check(topoml_use_backend(need(), name.c_str()));
    }
    void use_any_backend()
    {
        check(topoml_use_backend(need(), nullptr));
    }

    /* Which backend ran the last op, and why it was chosen. */
    std::string last_backend() const
    {
        return str(topoml_last_backend(need()));
    }
    std::string last_selection_reason() const
    {
        return str(topoml_last_selection_reason(need()));
    }

    /* Every backend the context knows, the built-in scalar first. */
    std::vector<BackendInfo> backends() const
    {
        std::vector<BackendInfo> out;
        const std::uint32_t n = topoml_backend_count(need());
        for (std::uint32_t k = 0; k < n; k++) {
            topoml_backend_info b{};
            b.struct_size = sizeof b;
            if (topoml_backend_get(ctx_, k, &b) != TOPOML_OK)
                continue;
            out.push_back(info(b));
        }
        return out;
    }

    /* The backend that naming `name` (use_backend, a configuration's
     * `prefer`) would get, without listing every backend: only what naming
     * it probes is probed, the plugin file named for it
     * (topoml-backend-<name>.so) unless that file holds another backend
     * (topoml_backend_find; docs/architecture.md, "Loading a plugin"). A
     * backend that has the name but may not run (every plugin of that name
     * rejected, or not certified) is returned all the same: gate_state and
     * gate_reason say why. Throws Error with Status::not_found, its message
     * naming every backend found, when no backend has that name; with
     * Status::invalid for a name holding a NUL byte. */
    BackendInfo find_backend(const std::string &name)
    {
        topoml_context *ctx = need();
        if (name.find('\0') != std::string::npos)
            throw Error(TOPOML_E_INVALID, "find_backend: a backend name holds no NUL byte");
        topoml_backend_info b{};
        b.struct_size = sizeof b;
        check(topoml_backend_find(ctx, name.c_str(), &b));
        return info(b);
    }

    /* ---- data sets ---- */

    /* Read a file ("-": standard input); errors name the file, line and
     * reason. */
    Data read(const std::string &path, topoml_format format)
    {
        topoml_data *d = nullptr;
        const int rc = topoml_data_read(need(), &d, path.c_str(), format);
        Data out(own_, d); /* owned before check() may throw */
        check(rc);
        return out;
    }
    Data read(std::FILE *f, const std::string &name, topoml_format format)
    {
        topoml_data *d = nullptr;
        const int rc = topoml_data_read_stream(need(), &d, f, name.c_str(), format);
        Data out(own_, d); /* owned before check() may throw */
        check(rc);
        return out;
    }

    /* n points of dim coordinates, row-major (copied). */
    Data from_points(std::uint64_t n, std::uint64_t dim, const double *coords)
    {
        topoml_data *d = nullptr;
        const int rc = topoml_data_from_points(need(), &d, n, dim, coords);
        Data out(own_, d); /* owned before check() may throw */
        check(rc);
        return out;
    }
    Data from_points(const std::vector<double> &coords, std::uint64_t dim)
    {
        if (dim == 0 || coords.size() % dim != 0)
            throw Error(TOPOML_E_INVALID, "from_points: " + std::to_string(coords.size()) +
                                              " coordinates are not rows of " +
                                              std::to_string(dim));
        return from_points(coords.size() / dim, dim, coords.data());
    }

    /* A distance matrix in Ripser's lower-triangular order: d(1,0), d(2,0),
     * d(2,1), ... (n(n-1)/2 values, copied). */
    Data from_condensed(std::uint64_t n, const double *values)
    {
        topoml_data *d = nullptr;
        const int rc = topoml_data_from_condensed(need(), &d, n, values);
        Data out(own_, d); /* owned before check() may throw */
        check(rc);
        return out;
    }
    Data from_condensed(const std::vector<double> &values)
    {
        std::uint64_t n = 1;
        while (n * (n - 1) / 2 < values.size())
            n++;
        if (n * (n - 1) / 2 != values.size())
            throw Error(TOPOML_E_INVALID, "from_condensed: " + std::to_string(values.size()) +
                                              " values is not n(n-1)/2 for any n");
        return from_condensed(n, values.data());
    }

    /* A sparse distance matrix: edges (i < j) over n vertices (copied). */
    Data from_edges(std::uint64_t n, const std::vector<topoml_edge> &edges)
    {
        topoml_data *d = nullptr;
        const int rc = topoml_data_from_edges(need(), &d, n, edges.size(), edges.data());
        Data out(own_, d); /* owned before check() may throw */
        check(rc);
        return out;
    }

    /* Smallest and largest distance, enclosing radius, pairs within
     * `threshold` (as Ripser reports them). */
    topoml_stats stats(const Data &data, topoml_metric metric = TOPOML_METRIC_EUCLIDEAN,
                       double threshold = INFINITY)
    {
        topoml_stats s{};
        check(topoml_data_stats(need(), data.get(), metric, threshold, &s));
        return s;
    }

    /* ---- ops ---- */

    /* Pairwise distances of a point cloud in Ripser's lower-triangular
     * order, as float or double (with float the coordinates are rounded to
     * float first). */
    template <class T>
    Array<T> distances(const Data &points, topoml_metric metric = TOPOML_METRIC_EUCLIDEAN)
    {
        static_assert(std::is_same<T, float>::value || std::is_same<T, double>::value,
                      "distances are float or double");
        void *out = nullptr;
        std::uint64_t count = 0;
        const int rc =
            topoml_distances(need(), points.get(), metric,
                             std::is_same<T, float>::value ? TOPOML_F32 : TOPOML_F64, &out, &count);
        Array<T> a(own_, static_cast<T *>(out), static_cast<std::size_t>(count));
        check(rc);
        return a;
    }

    /* Every pair with d <= threshold, sorted by (d, i, j). */
    Array<topoml_edge> edges(const Data &data, double threshold,
                             topoml_metric metric = TOPOML_METRIC_EUCLIDEAN)
    {
        topoml_edge *out = nullptr;
        std::uint64_t n = 0;
        const int rc = topoml_edges(need(), data.get(), metric, threshold, &out, &n);
        Array<topoml_edge> a(own_, out, static_cast<std::size_t>(n));
        check(rc);
        return a;
    }

    /* Vietoris–Rips barcodes. Throws Cancelled (with the finished
     * dimensions) when the progress callback stops it. */
    Barcode barcode(const Data &data, const RipsOptions &o = RipsOptions())
    {
        topoml_rips_options c;
        topoml_rips_options_init(&c);
        c.max_dim = o.max_dim;
        c.threshold = o.threshold;
        c.modulus = o.modulus;
        c.metric = static_cast<std::uint32_t>(o.metric);
        if (o.cocycles)
            c.flags |= TOPOML_RIPS_COCYCLES;
        c.weights = static_cast<std::uint32_t>(o.weights);
        c.vertex_weights = o.vertex_weights.empty() ? nullptr : o.vertex_weights.data();
        c.weight_p = o.weight_p;
        c.dtm_neighbors = o.dtm_neighbors;
        c.dtm_r = o.dtm_r;
        topoml_barcode *out = nullptr;
        const int rc = topoml_barcode_compute(need(), &out, data.get(), &c);
        Barcode bc(out, own_);
        if (rc == TOPOML_E_CANCELLED) {
            rethrow_pending();
            throw Cancelled(errmsg(),
                            out ? std::make_shared<const Barcode>(std::move(bc)) : nullptr);
        }
        check(rc);
        return bc;
    }

    /* Write a barcode as Ripser's text, JSON or CSV; ratio > 1 keeps only
     * bars with death/birth > ratio (Ripser's --ratio). */
    void write(const Barcode &barcode, std::FILE *f, topoml_output style = TOPOML_OUTPUT_RIPSER,
               double ratio = 0) const
    {
        check(topoml_barcode_write(need(), barcode.get(), f, style, ratio));
    }

    /* The same, as a string (topoml_barcode_write_mem: no temporary file). */
    std::string format(const Barcode &barcode, topoml_output style = TOPOML_OUTPUT_RIPSER,
                       double ratio = 0) const
    {
        char *text = nullptr;
        std::size_t len = 0;
        const int rc = topoml_barcode_write_mem(need(), barcode.get(), style, ratio, &text, &len);
        struct Freer {
            topoml_context *ctx;
            void operator()(char *p) const noexcept { topoml_free(ctx, p); }
        };
        std::unique_ptr<char, Freer> owned(text, Freer{need()});
        check(rc);
        return std::string(text, len);
    }

  private:
    /* What the C callbacks reach through their `user` pointer; on the heap so
     * that it stays put when the Context moves. */
    struct Hooks {
        LogFn log;
        ProgressFn progress;
        std::exception_ptr pending; /* thrown by a callback, not yet rethrown */
    };

    static void log_trampoline(void *user, int level, const char *message) noexcept
    {
        Hooks *h = static_cast<Hooks *>(user);
        try {
            h->log(level, message);
        } catch (...) {
            if (!h->pending)
                h->pending = std::current_exception();
        }
    }

    void install_progress(ProgressFn fn)
    {
        need();
        hooks_->progress = std::move(fn);
        topoml_set_progress(ctx_, hooks_->progress ? &Context::progress_trampoline : nullptr,
                            hooks_.get());
    }

    static int progress_trampoline(void *user, const char *stage, std::uint64_t done,
                                   std::uint64_t total) noexcept
    {
        Hooks *h = static_cast<Hooks *>(user);
        try {
            return h->progress(stage, done, total) ? 0 : 1;
        } catch (...) {
            if (!h->pending)
                h->pending = std::current_exception();
            return 1; /* stop; the exception is rethrown when the op returns */
        }
    }

    topoml_context *need() const
    {
        if (!ctx_)
            throw Error(TOPOML_E_INVALID, "topoml::Context: empty (moved from)");
        return ctx_;
    }

    void rethrow_pending() const
    {
        if (hooks_ && hooks_->pending)
            std::rethrow_exception(std::exchange(hooks_->pending, nullptr));
    }

    /* An exception from a callback wins; then a failed status. */
    void check(int rc) const
    {
        rethrow_pending();
        if (rc != TOPOML_OK)
            throw Error(rc, errmsg());
    }

    static std::string str(const char *s)
    {
        return s ? s : "";
    }

    /* A BackendInfo of what topoml_backend_get / topoml_backend_find filled. */
    static BackendInfo info(const topoml_backend_info &b)
    {
        BackendInfo i;
        i.name = str(b.name);
        i.version = str(b.version);
        i.vendor = str(b.vendor);
        i.description = str(b.description);
        i.path = str(b.path);
        i.abi_version = b.abi_version;
        i.probe_status = static_cast<Status>(b.probe_status);
        i.probe_message = str(b.probe_message);
        i.gate_state = static_cast<topoml_gate_state>(b.gate_state);
        i.gate_reason = str(b.gate_reason);
        i.capabilities = View<topoml_capability_v1>(b.caps, b.n_caps);
        i.selection = b.selection;
        i.isolation = str(b.isolation);
        return i;
    }

    topoml_context *ctx_ = nullptr;
    /* The callbacks point into hooks_, which goes with this Context: they
     * are taken off the C context, which may live on in a Data. */
    void release() noexcept
    {
        if (ctx_) {
            topoml_set_log(ctx_, nullptr, nullptr, 0);
            topoml_set_progress(ctx_, nullptr, nullptr);
        }
        ctx_ = nullptr;
        own_.reset();
    }

    std::shared_ptr<topoml_context> own_;
    std::unique_ptr<Hooks> hooks_;
};

} // namespace topoml

#endif /* TOPOML_TOPOML_HPP */
