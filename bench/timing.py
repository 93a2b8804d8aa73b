"""How the benchmark scripts time a command on a shared machine: wall seconds
and CPU seconds (user + system of the command and of every child it waited
for, e.g. a plugin's helper process), the settings being compared taken in
turn inside one run (A B B A A B ...) so that a change of load falls on all
of them alike, and the median of the runs. On a loaded machine the CPU time
is the steadier figure; both are kept.

Not here: tables or artifacts (bench/artifact.py writes those)."""
import resource
import subprocess
import sys
import time


def run(cmd, env=None, timeout=None, status=0):
    """(wall s, CPU s, CompletedProcess) of one run of cmd; None when it ran
    past timeout. A command whose exit status is not `status` ends the
    script with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != status:
        sys.exit("FAILED (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, r


def alternate(settings, repeat):
    """Runs each setting ({name: function returning (wall, cpu, result)})
    repeat times, in turn, the order reversed every other round. Returns
    {name: {"wall": [...], "cpu": [...], "last": the last result}}."""
    names = list(settings)
    out = {n: {"wall": [], "cpu": [], "last": None} for n in names}
    for k in range(repeat):
        for n in (names if k % 2 == 0 else names[::-1]):
            wall, cpu, result = settings[n]()
            out[n]["wall"].append(wall)
            out[n]["cpu"].append(cpu)
            out[n]["last"] = result
    return out
