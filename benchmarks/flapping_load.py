"""A load that comes and goes: busy loops on every core, each on for 0.5-3 s, then off
for 0.5-3 s, for SECONDS. CPU ranks (gloo) measure the host's load as much as the
network, so a load that changes between `hpnet isolate`'s rounds is the test of its
rule that a node is named only against good nodes measured beside it.

    python benchmarks/flapping_load.py 900 &
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import time


def _busy(seed: int, until: float) -> None:
    rng = random.Random(seed)
    while time.time() < until:
        on = time.time() + rng.uniform(0.5, 3)
        while time.time() < on:
            pass
        time.sleep(rng.uniform(0.5, 3))


def main() -> int:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print("usage: python benchmarks/flapping_load.py SECONDS", file=sys.stderr)
        return 2
    until = time.time() + int(sys.argv[1])
    procs = [
        multiprocessing.Process(target=_busy, args=(i, until)) for i in range(os.cpu_count() or 1)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
