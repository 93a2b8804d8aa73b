/*
 * call.cpp — failures, memory accounting and progress for one op (call.hpp).
 */
#include "call.hpp"

#include <cstdarg>
#include <cstdio>

namespace cppcompat
{

/* Units of work (roughly: inner-loop steps) between two progress calls; at
 * about a nanosecond a unit that is a few hundred calls a second at most. */
static const uint64_t progress_interval = uint64_t(1) << 22;

void fail(int status, const char *fmt, ...)
{
    Failure f;
    f.status = status;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(f.message, sizeof f.message, fmt, ap);
    va_end(ap);
    throw f;
}

const char *format_bytes(uint64_t bytes, char *buf, size_t size)
{
    if (bytes < 1024)
        std::snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
    else if (bytes < (uint64_t(1) << 20))
        std::snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
    else if (bytes < (uint64_t(1) << 30))
        std::snprintf(buf, size, "%.1f MiB", bytes / 1048576.0);
    else
        std::snprintf(buf, size, "%.2f GiB", bytes / 1073741824.0);
    return buf;
}

uint64_t checked_mul(uint64_t a, uint64_t b, const char *what)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        fail(TOPOML_E_OVERFLOW, "%s overflows 64 bits (%llu x %llu)", what, (unsigned long long)a,
             (unsigned long long)b);
    return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const char *what)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        fail(TOPOML_E_OVERFLOW, "%s overflows 64 bits", what);
    return r;
}

Call::Call(const topoml_call_v1 *call)
    : call_(call), limit_(call->max_memory), next_report_(progress_interval)
{
}

void *Call::allocate(size_t bytes)
{
    if (limit_ && (bytes > limit_ || live_ > limit_ - bytes)) {
        char a[32], b[32], c[32];
        fail(TOPOML_E_LIMIT, "allocating %s on top of %s would exceed max_memory (%s)",
             format_bytes(bytes, a, sizeof a), format_bytes(live_, b, sizeof b),
             format_bytes(limit_, c, sizeof c));
    }
    void *p = call_->alloc(call_->host_data, bytes ? bytes : 1);
    if (!p) {
        char a[32];
        fail(TOPOML_E_NOMEM, "out of memory allocating %s", format_bytes(bytes, a, sizeof a));
    }
    live_ += bytes;
    return p;
}

void Call::deallocate(void *p, size_t bytes) noexcept
{
    if (!p)
        return;
    call_->free(call_->host_data, p);
    live_ -= bytes;
}

void Call::check_estimate(uint64_t bytes, const char *what) const
{
    if (!limit_)
        return;
    if (bytes > limit_ || live_ > limit_ - bytes) {
        char a[32], b[32];
        fail(TOPOML_E_LIMIT, "%s: estimated %s exceeds max_memory (%s)", what,
             format_bytes(bytes + live_, a, sizeof a), format_bytes(limit_, b, sizeof b));
    }
}

void Call::progress(const char *stage, uint64_t done, uint64_t total)
{
    report(stage, done, total);
}

void Call::report(const char *stage, uint64_t done, uint64_t total)
{
    next_report_ = work_ + progress_interval;
    if (call_->progress && call_->progress(call_->host_data, stage, done, total) != 0)
        fail(TOPOML_E_CANCELLED, "cancelled during %s (%llu of %llu)", stage,
             (unsigned long long)done, (unsigned long long)total);
}

} // namespace cppcompat
