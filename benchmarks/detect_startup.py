"""Cold start of `hpnet detect --json` against a bare interpreter start.

Each run is a new process, so imports, sysfs reads and (live) NVML and NCCL
loading are all counted. The two commands are interleaved so that machine noise
hits both alike. Target (issue 2): median under 8x `python3 -c pass`.

    python benchmarks/detect_startup.py                   # largest fixture, 30 runs
    python benchmarks/detect_startup.py --live --runs 20  # this node's own /

Prints a Markdown table for benchmarks/README.md and, with --json FILE, the raw
timings.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREES = REPO / "tests" / "data" / "sysfs"


def largest_tree() -> Path:
    return max(TREES.glob("*.tree"), key=lambda p: p.stat().st_size)


def time_once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--live", action="store_true", help="detect this node instead of a tree")
    parser.add_argument("--json", type=Path, help="write raw timings here")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "src"))
    from hpnet.node.snapshot import materialize

    with tempfile.TemporaryDirectory() as tmp:
        detect = [sys.executable, "-m", "hpnet", "detect", "--json"]
        label = "live /"
        if not args.live:
            tree = largest_tree()
            materialize(tree.read_text(), Path(tmp), source=str(tree))
            detect += ["--sysfs-root", tmp]
            label = f"--sysfs-root {tree.name} ({tree.stat().st_size // 1024} KiB tree)"
        bare = [sys.executable, "-c", "pass"]
        time_once(bare), time_once(detect)  # warm the page cache
        bare_s, detect_s = [], []
        for i in range(args.runs):
            bare_s.append(time_once(bare))
            detect_s.append(time_once(detect))
            print(f"\rrun {i + 1}/{args.runs}", end="", file=sys.stderr)
        print(file=sys.stderr)

    bare_med = statistics.median(bare_s)
    detect_med = statistics.median(detect_s)
    print("| target | runs | `python3 -c pass` median | `hpnet detect --json` median | ratio |")
    print("|---|---|---|---|---|")
    print(
        f"| {label} | {args.runs} | {bare_med * 1e3:.1f} ms | {detect_med * 1e3:.1f} ms "
        f"| {detect_med / bare_med:.2f}x |"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"label": label, "bare_s": bare_s, "detect_s": detect_s}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
