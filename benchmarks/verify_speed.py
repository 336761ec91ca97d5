"""`hpnet verify` on a multi-gigabyte log against grep on the same file, same run.

    python benchmarks/gen_nccl_log.py /tmp/big.log --size-gb 5
    python benchmarks/verify_speed.py /tmp/big.log [--jobs 1 2 ...] [--runs 2]

grep counts the lines a person greps for the same answers
(``grep -E -c 'via |NET/|WARN|NCCL version|Init START|Using network'``); a naive
Python loop does the same count line by line (the floor of any line-at-a-time
parser); ``hpnet verify --json`` parses and analyses everything. The file is read
once first so that all three read it from the page cache. Peak memory comes from
``/usr/bin/time -f %M`` (max resident set of the process and, for hpnet, its largest
worker is not included: a worker reads its range in 8 MiB blocks).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

GREP = ["grep", "-E", "-c", "via |NET/|WARN|NCCL version|Init START|Using network"]
NAIVE = (
    "import sys\n"
    "keys = (b'via ', b'NET/', b'WARN', b'NCCL version', b'Init START', b'Using network')\n"
    "n = 0\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n"
    "        if any(k in line for k in keys):\n"
    "            n += 1\n"
    "print(n)\n"
)


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *argv],
        # a pipe, not /dev/null: GNU grep stops at once when its output is /dev/null
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    rss = int(done.stderr.strip().splitlines()[-1])
    return elapsed, rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, len(os.sched_getaffinity(0))])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    size = os.path.getsize(args.log)
    with open(args.log, "rb") as handle:  # into the page cache
        while handle.read(64 << 20):
            pass
    rows = []
    for _ in range(args.runs):
        rows.append(("grep -E -c", *timed([*GREP, args.log])))
        rows.append(("naive Python loop", *timed([sys.executable, "-c", NAIVE, args.log])))
        for jobs in args.jobs:
            argv = [sys.executable, "-m", "hpnet.cli.main", "verify", "--json", "--jobs", str(jobs)]
            rows.append((f"hpnet verify --jobs {jobs}", *timed([*argv, args.log])))
    best: dict[str, tuple[float, int]] = {}
    for name, seconds, rss in rows:
        if name not in best or seconds < best[name][0]:
            best[name] = (seconds, rss)
    grep_seconds = best["grep -E -c"][0]
    print(f"{size / 1e9:.2f} GB, {os.cpu_count()} CPUs, best of {args.runs}")
    print(f"{'':28} {'seconds':>8} {'MB/s':>7} {'x grep':>7} {'peak RSS':>9}")
    for name, (seconds, rss) in best.items():
        print(
            f"{name:28} {seconds:8.2f} {size / 1e6 / seconds:7.0f} "
            f"{grep_seconds / seconds:7.3f} {rss / 1024:7.0f} MB"
        )


if __name__ == "__main__":
    main()
