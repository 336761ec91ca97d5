"""Peak memory and time of ``hpnet bench import`` on a large nccl-tests output.

A real output (tests/data/nccl-tests, the GCP a3mega all_reduce) is repeated to a
target size, once as plain nccl-tests text and once with every line behind an NCCL
INFO-style launcher prefix (what a job's combined log looks like); each is imported in
a fresh Python (``load_result``), measuring tracemalloc's peak and the wall time.
With ``--json`` the child runs the whole ``hpnet bench import FILE --json`` instead
(standard output to /dev/null), and the peak resident memory (``ru_maxrss``) is
printed too: the JSON rendering's memory is what issue 23 is about.

    python benchmarks/bench_import_memory.py [--mb 20] [--src SRC] [--json]

``--src`` puts another hpnet checkout's ``src`` first on the path (an A/B run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = (
    ROOT
    / "tests/data/nccl-tests"
    / ("all_reduce-gcp-a3mega-2node-16xh100-ncclTests2.14.1-2.16.6.txt")
)

CHILD = """
import contextlib, json, os, resource, sys, time, tracemalloc
from hpnet.bench.load import load_result
from hpnet.cli.main import main
tracemalloc.start()
started = time.perf_counter()
if sys.argv[2] == "json":
    with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
        main(["bench", "import", sys.argv[1], "--json"])
else:
    report = load_result(sys.argv[1])
seconds = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1]
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "peak_bytes": peak, "rss_bytes": rss}), file=sys.stderr)
"""


def build(path: Path, megabytes: int, *, prefixed: bool) -> None:
    text = SOURCE.read_text()
    if prefixed:
        text = "".join(f"gpu-node-1:2048:2048 [0] NCCL INFO {line}\n" for line in text.splitlines())
        # the nccl-tests table stays readable between the INFO lines
        text += SOURCE.read_text()
    target = megabytes << 20
    with path.open("w") as handle:
        written = 0
        while written < target:
            handle.write(text)
            written += len(text)


def measure(path: Path, src: str | None, *, as_json: bool = False) -> dict[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    mode = "json" if as_json else "load"
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), mode], capture_output=True,
                          text=True, env=env, check=True)  # fmt: skip
    return json.loads(done.stderr.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--src", help="another checkout's src directory (A/B)")
    parser.add_argument("--json", action="store_true", help="the whole `bench import --json`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for prefixed in (False, True):
            path = Path(tmp) / f"{'info' if prefixed else 'plain'}.txt"
            build(path, args.mb, prefixed=prefixed)
            size = path.stat().st_size
            result = measure(path, args.src, as_json=args.json)
            name = "INFO-prefixed" if prefixed else "plain"
            peak, rss = result["peak_bytes"], result["rss_bytes"]
            print(
                f"{name:>13} {size / 2**20:6.1f} MiB: peak {peak / 2**20:7.1f} MiB "
                f"({peak / size:5.2f}x the file), max RSS {rss / 2**20:7.1f} MiB "
                f"({rss / size:5.2f}x), {result['seconds']:.2f} s"
            )


if __name__ == "__main__":
    main()
