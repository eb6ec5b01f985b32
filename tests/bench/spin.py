# SPDX-License-Identifier: MIT
"""spin.py getppid N: spin.c's protocol from Debian's python3.11, which is
built without frame pointers: N os.getppid() calls, timed in slices, and
what one call took (the median slice) printed.  SPIN_AT_END, if set, is a
shell command run after the calls, before exit (the tracer still attached).
Run it with /usr/bin/python3.11 itself: a pyenv shim on PATH is a script,
and the stack traced would be another python's."""
import os
import sys
import time

CHUNKS = 21


def run(calls):
    per = max(calls // CHUNKS, 1)
    getppid = os.getppid
    clock = time.perf_counter_ns
    slices = []
    for _ in range(CHUNKS):
        t0 = clock()
        for _ in range(per):
            getppid()
        slices.append((clock() - t0) / per)
    return sorted(slices)[CHUNKS // 2]


def main():
    if len(sys.argv) < 2 or sys.argv[1] != "getppid":
        sys.exit("usage: spin.py getppid [N]: only the getppid workload exists here")
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    print("%.1f" % run(calls), flush=True)
    hook = os.environ.get("SPIN_AT_END")
    if hook and os.system(hook):
        sys.exit(1)


main()
