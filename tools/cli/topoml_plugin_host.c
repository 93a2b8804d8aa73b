/*
 * topoml_plugin_host.c — topoml-plugin-host, the helper process in which
 * libtopoml runs plugin code it does not yet trust (core/src/gate/isolate*.c).
 * Not a command for people: libtopoml starts it with posix_spawn and hands
 * it descriptors.
 *
 *   topoml-plugin-host --probe   descriptor 3: the plugin file, opened and
 *                                checked by the host; descriptor 4: the
 *                                report (identity, probe, capabilities).
 *   topoml-plugin-host --serve --sandbox POLICY
 *                                descriptor 3: the plugin file; 4: a socket
 *                                of requests (isolate_ops.c); 5: the pipe
 *                                that becomes its stdout; 6: the host's
 *                                lifeline (its closing ends the helper).
 *                                The sandbox (core/src/sandbox.h) is
 *                                entered before the plugin is loaded.
 *
 * It ends with _exit, so that nothing a plugin registered to run at exit
 * (destructors, atexit) can add to or spoil a finished report.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Internal (core/src/): this program is the gate's helper process, the
 * other end of isolate_probe.c and isolate_ops.c (tm_probe_serve,
 * tm_isolation_serve). */
#include "gate/gate_internal.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--probe") == 0)
        _exit(tm_probe_serve(3, 4));
    if (argc == 4 && strcmp(argv[1], "--serve") == 0 && strcmp(argv[2], "--sandbox") == 0)
        _exit(tm_isolation_serve(3, 4, 5, 6, argv[3]));
    fprintf(stderr,
            "topoml-plugin-host: a helper of libtopoml, started by the library itself\n"
            "usage: topoml-plugin-host --probe | --serve --sandbox POLICY\n");
    return 2;
}
