/*
 * call.hpp — what one op of the cpp-compat backend needs from its
 * topoml_call_v1: failures as C++ exceptions that stop at the ABI boundary,
 * an allocator that routes every byte through call->alloc and enforces
 * call->max_memory, and rate-limited progress/cancellation.
 *
 * Not here: the boundary itself (entry.cpp turns a Failure into a status
 * and a message) and anything about the ops.
 */
#ifndef TOPOML_CPP_COMPAT_CALL_HPP
#define TOPOML_CPP_COMPAT_CALL_HPP

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "topoml/plugin.h"

namespace cppcompat
{

/* The one exception type the ops throw on purpose. entry.cpp catches it (and
 * everything else) before control returns to the host. The message lives in
 * the object so that throwing never allocates. */
struct Failure {
    int status;
    char message[512];
};

[[noreturn]] void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "12.3 MiB" etc., for messages about memory. */
const char *format_bytes(uint64_t bytes, char *buf, size_t size);

/* Overflow-checked arithmetic; on overflow they throw TOPOML_E_OVERFLOW
 * naming `what`. */
uint64_t checked_mul(uint64_t a, uint64_t b, const char *what);
uint64_t checked_add(uint64_t a, uint64_t b, const char *what);

class Call
{
  public:
    explicit Call(const topoml_call_v1 *call);

    /* Scratch or result memory through call->alloc, counted against
     * max_memory; throws TOPOML_E_LIMIT or TOPOML_E_NOMEM. */
    void *allocate(size_t bytes);
    void deallocate(void *p, size_t bytes) noexcept;

    /* Memory handed to the caller (edge lists, intervals): it leaves the
     * accounting but still came through call->alloc. */
    void release_to_caller(size_t bytes) noexcept
    {
        live_ -= bytes;
    }

    /* Refuse work whose estimate, on top of what is live now, would exceed
     * max_memory; `what` says what the estimate is of. */
    void check_estimate(uint64_t bytes, const char *what) const;

    /* Tell the host how far `stage` has come (total 0: unknown); throws
     * TOPOML_E_CANCELLED when it asks to stop. tick() is the cheap form for
     * inner loops: it only calls out after roughly `interval` units of work. */
    void progress(const char *stage, uint64_t done, uint64_t total);
    void tick(const char *stage, uint64_t done, uint64_t total, uint64_t work = 1)
    {
        work_ += work;
        if (work_ >= next_report_)
            report(stage, done, total);
    }

    uint64_t max_memory() const
    {
        return limit_;
    }
    uint64_t live() const
    {
        return live_;
    }
    const topoml_call_v1 *raw() const
    {
        return call_;
    }

  private:
    void report(const char *stage, uint64_t done, uint64_t total);

    const topoml_call_v1 *call_;
    uint64_t limit_;
    uint64_t live_ = 0;
    uint64_t work_ = 0;
    uint64_t next_report_;
};

/* std::allocator-compatible adaptor over Call, so that std::vector's memory
 * is the host's memory. */
template <class T> struct CallAllocator {
    using value_type = T;
    Call *call;

    explicit CallAllocator(Call &c) noexcept : call(&c)
    {
    }
    template <class U> CallAllocator(const CallAllocator<U> &o) noexcept : call(o.call)
    {
    }

    T *allocate(size_t n)
    {
        if (n > SIZE_MAX / sizeof(T))
            fail(TOPOML_E_OVERFLOW, "array of %zu elements of %zu bytes overflows size_t", n,
                 sizeof(T));
        return static_cast<T *>(call->allocate(n * sizeof(T)));
    }
    void deallocate(T *p, size_t n) noexcept
    {
        call->deallocate(p, n * sizeof(T));
    }

    template <class U> bool operator==(const CallAllocator<U> &o) const noexcept
    {
        return call == o.call;
    }
    template <class U> bool operator!=(const CallAllocator<U> &o) const noexcept
    {
        return call != o.call;
    }
};

template <class T> using Vec = std::vector<T, CallAllocator<T>>;

template <class T> Vec<T> make_vec(Call &c)
{
    return Vec<T>(CallAllocator<T>(c));
}

/* An array from call->alloc that becomes the caller's on success (release)
 * and is freed if the op fails first. */
template <class T> class Result
{
  public:
    Result(Call &c, uint64_t count) : call_(c)
    {
        uint64_t bytes = checked_mul(count ? count : 1, sizeof(T), "result size");
        if (bytes > SIZE_MAX)
            fail(TOPOML_E_OVERFLOW, "result of %llu bytes does not fit in memory",
                 (unsigned long long)bytes);
        bytes_ = static_cast<size_t>(bytes);
        p_ = static_cast<T *>(call_.allocate(bytes_));
    }
    ~Result()
    {
        if (p_)
            call_.deallocate(p_, bytes_);
    }
    Result(const Result &) = delete;
    Result &operator=(const Result &) = delete;

    T *get()
    {
        return p_;
    }
    T &operator[](uint64_t k)
    {
        return p_[k];
    }
    T *release() noexcept
    {
        T *p = p_;
        p_ = nullptr;
        call_.release_to_caller(bytes_);
        return p;
    }

  private:
    Call &call_;
    T *p_ = nullptr;
    size_t bytes_ = 0;
};

} // namespace cppcompat

#endif
