"""Cold start of `hpnet detect --json` and `hpnet env` against a bare interpreter.

Each run is a new process, so imports, sysfs reads and (live) NVML and NCCL
loading are all counted. The commands are interleaved so that machine noise hits
them alike. Targets: detect under 8x `python3 -c pass` (issue 2); env as fast as
detect (issue 3).

    python benchmarks/detect_startup.py                   # largest fixture, 30 runs
    python benchmarks/detect_startup.py --live --runs 20  # this node's own /
    python benchmarks/detect_startup.py --env             # also `hpnet env --profile auto`

Prints a Markdown table for benchmarks/README.md and, with --json FILE, the raw
timings.
"""

from __future__ import annotations

import argparse
import json
import os
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


def time_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--live", action="store_true", help="detect this node instead of a tree")
    parser.add_argument("--env", action="store_true", help="also time `hpnet env`")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="compile every module at every start (PYTHONDONTWRITEBYTECODE=1 and no cache): "
        "the worst case; by default the children may write and use __pycache__ as an "
        "installed package does",
    )
    parser.add_argument("--json", type=Path, help="write raw timings here")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "src"))
    from hpnet.node.snapshot import materialize

    with tempfile.TemporaryDirectory() as tmp:
        root = []
        label = "live /"
        if not args.live:
            tree = largest_tree()
            materialize(tree.read_text(), Path(tmp), source=str(tree))
            root = ["--sysfs-root", tmp]
            label = f"--sysfs-root {tree.name} ({tree.stat().st_size // 1024} KiB tree)"
        commands = {
            "python3 -c pass": [sys.executable, "-c", "pass"],
            "hpnet detect --json": [sys.executable, "-m", "hpnet", "detect", "--json", *root],
        }
        if args.env:
            commands["hpnet env --profile auto"] = [
                sys.executable,
                "-m",
                "hpnet",
                "env",
                "--profile",
                "auto",
                *root,
            ]
        env = dict(os.environ)
        if args.no_bytecode_cache:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPYCACHEPREFIX"] = tmp + "/no-such-cache"  # ignore existing caches
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        for argv in commands.values():
            time_once(argv, env)  # warm the page cache and write the bytecode cache
        timings: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(args.runs):
            for name, argv in commands.items():
                timings[name].append(time_once(argv, env))
            print(f"\rrun {i + 1}/{args.runs}", end="", file=sys.stderr)
        print(file=sys.stderr)

    bare = statistics.median(timings["python3 -c pass"])
    cache = "no bytecode cache" if args.no_bytecode_cache else "bytecode cache"
    print(f"{label}, {cache}, {args.runs} interleaved runs, medians:")
    print("| command | median | ratio to `python3 -c pass` |")
    print("|---|---|---|")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"| `{name}` | {median * 1e3:.1f} ms | {median / bare:.2f}x |")
    if args.json:
        args.json.write_text(json.dumps({"label": label, "timings_s": timings}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
