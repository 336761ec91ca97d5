"""Where `hpnet verify --json`'s time goes in its main process (issue 28).

    python benchmarks/verify_phases.py LOG --jobs 16 [--profile OUT.txt]

Seconds of reading (the workers' scan, and in the main process the ranges' folders
merged and the result frozen; with workers, from the last range scanned to the
records merged and frozen in shards by the workers, hpnet.ncclog.shards), the analysis
and the JSON, as the command runs them
(cycle collection off, as `hpnet verify`). ``--profile`` writes the main process's
cProfile (by own time and by cumulative time): with many workers it is the serial tail.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

from hpnet.jsonout import dump_envelope
from hpnet.ncclog import read
from hpnet.ncclog.facts import LogFolder
from hpnet.ncclog.report import analyse
from hpnet.ncclog.shards import ShardedMerge


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--profile")
    args = parser.parse_args()
    spent = {"merge": 0.0, "result": 0.0, "shards": 0.0}

    def timed(name, method):  # type: ignore[no-untyped-def]
        def wrapper(*a, **k):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return method(*a, **k)
            finally:
                spent[name] += time.perf_counter() - start

        return wrapper

    LogFolder.merge = timed("merge", LogFolder.merge)  # type: ignore[method-assign]
    LogFolder.result = timed("result", LogFolder.result)  # type: ignore[method-assign]
    ShardedMerge.result = timed("shards", ShardedMerge.result)  # type: ignore[method-assign]
    profile = cProfile.Profile() if args.profile else None
    inputs, notes = read.collect_inputs([args.log])
    if profile:
        profile.enable()
    with read.no_cycle_collection():
        start = time.perf_counter()
        log = read.read_logs(inputs, jobs=args.jobs, notes=notes)
        read_done = time.perf_counter()
        report = analyse(log, None)
        analysed = time.perf_counter()
        text = dump_envelope(report, schema_version=1)
        written = time.perf_counter()
    if profile:
        profile.disable()
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("tottime").print_stats(40)
        stats.sort_stats("cumulative").print_stats(60)
        with open(args.profile, "w") as handle:
            handle.write(out.getvalue())
    print(
        f"jobs {args.jobs}: read {read_done - start:.2f} s (of which merging the ranges "
        f"{spent['merge']:.2f}, the result {spent['result']:.2f}, the shards "
        f"{spent['shards']:.2f}), analysis "
        f"{analysed - read_done:.2f}, JSON {written - analysed:.2f} ({len(text) / 1e6:.1f} MB); "
        f"total {written - start:.2f} s"
    )


if __name__ == "__main__":
    main()
