/*
 * topoml_plugin_host.c — topoml-plugin-host, the helper process in which
 * libtopoml runs plugin code it does not yet trust (core/src/gate/isolate*.c).
 * Not a command for people: libtopoml starts it with posix_spawn and hands
 * it descriptors.
 *
 *   topoml-plugin-host --probe --sandbox POLICY [CACHE_DIR]
 *                                descriptor 3: the plugin file, opened and
 *                                checked by the host; descriptor 4: the
 *                                report (identity, probe, capabilities).
 *                                The sandbox is entered before the plugin
 *                                is loaded, as for --serve.
 *   topoml-plugin-host --serve --sandbox POLICY [CACHE_DIR]
 *                                descriptor 3: the plugin file; 4: a socket
 *                                of requests (isolate_ops.c); 5: the pipe
 *                                that becomes its stdout; 6: the host's
 *                                lifeline (its closing ends the helper).
 *                                The sandbox (core/src/gate/sandbox.h) is
 *                                entered before the plugin is loaded.
 *                                CACHE_DIR: the host's configured cache
 *                                folder, which the sandbox keeps unreadable.
 *
 * It ends with _exit, so that nothing a plugin registered to run at exit
 * (destructors, atexit) can add to or spoil a finished report.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Internal (core/src/): this program is the gate's helper process, the
 * other end of isolate_probe.c and isolate_ops.c (tm_probe_serve,
 * tm_isolation_serve). */
#include "gate/gate_internal.h"

/* In an address-sanitized build the leak check at exit stops the world
 * through ptrace, which the helper's sandbox refuses (SIGSYS at every
 * exit): the helper leaves leak checking to the host's own tests. */
#if defined(__SANITIZE_ADDRESS__)
#define HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_ASAN 1
#endif
#endif
#ifdef HOST_ASAN
__attribute__((visibility("default"))) int __lsan_is_turned_off(void);
__attribute__((visibility("default"))) int __lsan_is_turned_off(void)
{
    return 1;
}
#endif

int main(int argc, char **argv)
{
    const bool sandbox = (argc == 4 || argc == 5) && strcmp(argv[2], "--sandbox") == 0;
    const char *cache = argc == 5 ? argv[4] : NULL;
    if (sandbox && strcmp(argv[1], "--probe") == 0)
        _exit(tm_probe_serve(3, 4, argv[3], cache));
    if (sandbox && strcmp(argv[1], "--serve") == 0)
        _exit(tm_isolation_serve(3, 4, 5, 6, argv[3], cache));
    fprintf(stderr,
            "topoml-plugin-host: a helper of libtopoml, started by the library itself\n"
            "usage: topoml-plugin-host --probe|--serve --sandbox POLICY [CACHE_DIR]\n");
    return 2;
}
