"""Peak resident memory of each ``hpnet bench`` gloo CPU rank at a given largest size.

Runs ``hpnet bench OP --device cpu --nproc N -b SIZE -e SIZE -n 2 -w 1`` (one size, so
the peak is that size's) in a fresh process and reads the ranks' peak RSS: the ranks
are hpnet's children's children, so ``RUSAGE_CHILDREN`` of this script's child (the
largest peak among them, ``ru_maxrss``) is the largest rank's, or hpnet's own if larger
(it is ~60 MB). The idle rank (torch and gloo loaded, a 4 KiB sweep) is measured too,
and the table gives (peak - idle) / size: how many buffers of the largest size a rank
holds.

    python benchmarks/bench_rank_memory.py [--sizes 64M 128M 256M] [--ops all_reduce]
    python benchmarks/bench_rank_memory.py --src /tmp/other-checkout/src   # A/B
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from hpnet.bench.formulas import parse_size

CHILD = """
import json, resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": done.returncode, "peak_kib": peak_kib, "err": done.stderr[-400:]}))
"""


def measure(op: str, size: str, nproc: int, src: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    argv = [sys.executable, "-m", "hpnet", "bench", op, "--device", "cpu", "--nproc",
            str(nproc), "-b", size, "-e", size, "-n", "2", "-w", "1", "--json"]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True,
                          text=True, env=env, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["64M", "128M", "256M"])
    parser.add_argument("--ops", nargs="+", default=["all_reduce"])
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--src", help="another checkout's src directory (A/B)")
    args = parser.parse_args()
    for op in args.ops:
        idle = measure(op, "4K", args.nproc, args.src)
        idle_mib = int(idle["peak_kib"]) / 1024  # type: ignore[call-overload]
        print(f"{op:>14} {'4K':>5}: peak {idle_mib:7.0f} MiB (idle rank)", flush=True)
        for size in args.sizes:
            got = measure(op, size, args.nproc, args.src)
            peak_mib = int(got["peak_kib"]) / 1024  # type: ignore[call-overload]
            buffers = (peak_mib - idle_mib) / (parse_size(size) / 2**20)
            status = "" if got["rc"] == 0 else f"  (exit {got['rc']}: {got['err']!r})"
            print(
                f"{op:>14} {size:>5}: peak {peak_mib:7.0f} MiB, "
                f"{buffers:5.2f}x the size above idle{status}",
                flush=True,
            )


if __name__ == "__main__":
    main()
