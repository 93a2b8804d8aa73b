/*
 * cpp_progress_int.cpp — a C++ progress callback written with C's
 * convention (an int, non-zero cancels) must not compile: with the C++
 * wrapper's bool, `return 1` would mean "go on". CTest compiles it twice:
 * as it is (cpp_progress_int_refused, expected to fail) and with
 * -DRETURN_PROGRESS (cpp_progress_int_enum_compiles, which must pass, so that
 * the first fails for the callback and nothing else).
 */
#include <cstdint>
#include <topoml/topoml.hpp>

void install(topoml::Context &ctx)
{
#ifdef RETURN_PROGRESS
    ctx.set_progress([](const char *, std::uint64_t done, std::uint64_t) {
        return done > 10 ? topoml::Progress::Cancel : topoml::Progress::Continue;
    });
#else
    ctx.set_progress([](const char *, std::uint64_t done, std::uint64_t) { return done > 10 ? 1 : 0; });
#endif
}
