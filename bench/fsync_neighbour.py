#!/usr/bin/env python3
"""bench/fsync_neighbour.py [PAIRS]: does a neighbour that fsyncs slow CPU work on this machine?

No tracer anywhere. Fixed CPU work (two Python loops of 6e7 additions, one per vCPU) runs alone and
beside a process that appends 4 KiB to a file in /var/tmp and fsyncs it every 160 ms (about the
6 cache flushes per second the daemons add to a traced run, docs/benchmarks.md "The real
pipeline's overhead"), in PAIRS interleaved pairs (default 8), the order alternating. Prints each
pair's CPU time (wait4's rusage) and the ratios, then their medians. Used to tell the agent's disk
traffic from the VM's own drift in `make bench-real`.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

WORK = "x = 0\nfor i in range(60_000_000):\n    x += i\n"
FSYNCER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
while True:
    os.write(fd, b'x' * 4096)
    os.fsync(fd)
    time.sleep(0.16)
"""


def run(beside_fsyncs, path):
    fs = None
    if beside_fsyncs:
        fs = subprocess.Popen([sys.executable, "-c", FSYNCER, path])
        time.sleep(0.5)
    a = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    ps = [subprocess.Popen([sys.executable, "-c", WORK]) for _ in range(2)]
    for p in ps:
        p.wait()
    wall = time.monotonic() - t
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    if fs:
        fs.kill()
        fs.wait()
    return wall, (b.ru_utime + b.ru_stime) - (a.ru_utime + a.ru_stime)


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    cpu, wall = [], []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        path = os.path.join(d, "f")
        for i in range(pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            r = {f: run(f, path) for f in order}
            cpu.append(r[True][1] / r[False][1])
            wall.append(r[True][0] / r[False][0])
            print(f"pair {i}: alone {r[False][1]:.2f} s CPU, beside fsyncs {r[True][1]:.2f} s: "
                  f"cpu ratio {cpu[-1]:.3f}, wall ratio {wall[-1]:.3f}", flush=True)
    print(f"neighbour.cpu_ratio_median {statistics.median(cpu):.4f} ratio")
    print(f"neighbour.cpu_ratio_min {min(cpu):.4f} ratio")
    print(f"neighbour.cpu_ratio_max {max(cpu):.4f} ratio")
    print(f"neighbour.wall_ratio_median {statistics.median(wall):.4f} ratio")


if __name__ == "__main__":
    main()
