"""Peak memory and time of ``hpnet bench import`` on a large nccl-tests output.

A real output (tests/data/nccl-tests, the GCP a3mega all_reduce) is repeated to a
target size, once as plain nccl-tests text and once with every line behind an NCCL
INFO-style launcher prefix (what a job's combined log looks like); each is imported in
a fresh Python (``load_result``), measuring tracemalloc's peak and the wall time.

    python benchmarks/bench_import_memory.py [--mb 20] [--src SRC]

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
import json, sys, time, tracemalloc
from hpnet.bench.load import load_result
tracemalloc.start()
started = time.perf_counter()
report = load_result(sys.argv[1])
seconds = time.perf_counter() - started
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": seconds, "peak_bytes": peak}))
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


def measure(path: Path, src: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                          text=True, env=env, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--src", help="another checkout's src directory (A/B)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for prefixed in (False, True):
            path = Path(tmp) / f"{'info' if prefixed else 'plain'}.txt"
            build(path, args.mb, prefixed=prefixed)
            size = path.stat().st_size
            result = measure(path, args.src)
            name = "INFO-prefixed" if prefixed else "plain"
            peak = result["peak_bytes"]
            print(
                f"{name:>13} {size / 2**20:6.1f} MiB: peak {peak / 2**20:7.1f} MiB "
                f"({peak / size:5.2f}x the file), {result['seconds']:.2f} s"
            )


if __name__ == "__main__":
    main()
