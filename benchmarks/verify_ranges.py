"""`hpnet verify`'s read with more, smaller ranges than workers (issue 28).

    python benchmarks/verify_ranges.py LOG --jobs 16 --split 1:32 2:16 4:8 --runs 2

Each ``PER:MIB`` sets hpnet.ncclog.read's RANGES_PER_WORKER and RANGE_BYTES (MiB) for
one reading of LOG with ``--jobs`` workers (read and analysis, cycle collection off, as
the command runs them); the runs alternate between the settings. A range starts cold
(every process it meets is new to its worker), so more ranges cost more reading; on a
log whose lines differ in cost by region they even the workers out.
"""

from __future__ import annotations

import argparse
import hashlib
import time

from hpnet.jsonout import dump_envelope
from hpnet.ncclog import read
from hpnet.ncclog.report import analyse


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--split", nargs="+", default=["1:32"])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    splits = [tuple(int(x) for x in s.split(":")) for s in args.split]
    seen: dict[tuple[int, ...], list[float]] = {s: [] for s in splits}
    digests: dict[tuple[int, ...], str] = {}
    for _ in range(args.runs):
        for per, mib in splits:
            read.RANGES_PER_WORKER, read.RANGE_BYTES = per, mib << 20
            inputs, notes = read.collect_inputs([args.log])
            with read.no_cycle_collection():
                start = time.perf_counter()
                report = analyse(read.read_logs(inputs, jobs=args.jobs, notes=notes), None)
                seen[(per, mib)].append(time.perf_counter() - start)
            text = dump_envelope(report, schema_version=1)
            digests[(per, mib)] = hashlib.sha256(text.encode()).hexdigest()[:12]
    for (per, mib), times in seen.items():
        runs = " ".join(f"{t:.2f}" for t in times)
        digest = digests[(per, mib)]
        print(f"{per} range(s) per worker, at least {mib} MiB: {runs} s  json {digest}")


if __name__ == "__main__":
    main()
