"""`hpnet verify` on a multi-gigabyte log against grep on the same file, same run.

    python benchmarks/gen_nccl_log.py /tmp/big.log --size-gb 5
    python benchmarks/verify_speed.py /tmp/big.log [--jobs 1 2 ...] [--runs 2]
        [--base OLD/src] [--no-naive]

grep counts the lines a person greps for the same answers
(``grep -E -c 'via |NET/|WARN|NCCL version|Init START|Using network'``); a naive
Python loop does the same count line by line (the floor of any line-at-a-time
parser); ``hpnet verify --json`` parses and analyses everything. The file is read
once first so that all three read it from the page cache. ``--base`` also times an older
hpnet's source tree on the same file, alternated with this one in each run (this one
first in odd runs, the base first in even ones): on the lent machines the first of two
runs is often the slower. Peak memory comes from
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


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *argv],
        env=env,
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
    parser.add_argument("--base", help="an older hpnet's src folder, timed alternately")
    parser.add_argument("--no-naive", action="store_true", help="leave the naive loop out")
    args = parser.parse_args()
    size = os.path.getsize(args.log)
    with open(args.log, "rb") as handle:  # into the page cache
        while handle.read(64 << 20):
            pass
    rows = []
    trees = [("", None)] + ([(" (base)", args.base)] if args.base else [])
    for run in range(args.runs):
        rows.append(("grep -E -c", *timed([*GREP, args.log])))
        if not args.no_naive:
            rows.append(("naive Python loop", *timed([sys.executable, "-c", NAIVE, args.log])))
        for jobs in args.jobs:
            argv = [sys.executable, "-m", "hpnet.cli.main", "verify", "--json", "--jobs", str(jobs)]
            for label, tree in trees[:: -1 if run % 2 else 1]:
                env = dict(os.environ, PYTHONPATH=tree) if tree else None
                rows.append((f"hpnet verify --jobs {jobs}{label}", *timed([*argv, args.log], env)))
    best: dict[str, tuple[float, int]] = {}
    every: dict[str, list[float]] = {}
    for name, seconds, rss in rows:
        every.setdefault(name, []).append(seconds)
        if name not in best or seconds < best[name][0]:
            best[name] = (seconds, rss)
    grep_seconds = best["grep -E -c"][0]
    print(f"{size / 1e9:.2f} GB, {os.cpu_count()} CPUs, best of {args.runs}")
    print(f"{'':35} {'seconds':>8} {'MB/s':>7} {'x grep':>7} {'peak RSS':>9}  every run")
    for name, (seconds, rss) in best.items():
        runs = " ".join(f"{s:.2f}" for s in every[name])
        print(
            f"{name:35} {seconds:8.2f} {size / 1e6 / seconds:7.0f} "
            f"{grep_seconds / seconds:7.3f} {rss / 1024:7.0f} MB  {runs}"
        )


if __name__ == "__main__":
    main()
