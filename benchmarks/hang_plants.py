"""Every planted hang, many times, with random world sizes and culprits: is the rank and
the kind named every time, and nobody on a clean run? (issue 27)

Each run is one real gloo job of tests/hang_plant.py (``--backend nccl``: NCCL on the
GPUs, a fake host per rank, torch's own dump on its watchdog's timeout; world 2 to 8
ranks, the culprit a random rank; the subgroup plants' culprit a random member of the
subgroup), then ``hpnet hang --json`` on what it left. A run is right when the first cause has the
plant's kind and names the culprit alone, or, for a mismatch without a majority (2
ranks, or a third rank that aborted on it), among the sides it names; and a clean
run names nobody (status no-hang). A job whose every rank failed inside
init_process_group (a loaded machine: the ranks did not meet within the timeout) never
reached its plant: it is right when nobody is named (status unknown, exit 1), and counted
apart ("not started"). Prints one line per run and a table per plant.

    python benchmarks/hang_plants.py --runs 20 --parallel 8
    python benchmarks/hang_plants.py --backend nccl --runs 6 --parallel 8 --max-world 4
    python benchmarks/hang_plants.py --backend nccl --plants net --parallel 1
    python benchmarks/hang_plants.py --backend nccl --min-world 8 --plants skip,op,kill
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from tests.hang_plant import ANSWER, NET_PLANTS, PLANTS  # noqa: E402


def one(
    plant: str, world: int, culprit: int, seed: int, opts: argparse.Namespace
) -> dict[str, object]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": f"{ROOT}/src:{ROOT}"}
    timeout = "15" if opts.backend == "nccl" else "3"  # NCCL's first collective connects
    keep = opts.keep or opts.wrong  # a wrong run's files always stay, for reading
    kept = os.path.join(keep, f"{plant}-w{world}-c{culprit}-{seed}")
    with tempfile.TemporaryDirectory(
        prefix=f"hang-{plant}-", dir=keep, ignore_cleanup_errors=True
    ) as out:
        start = time.monotonic()
        job_run = subprocess.run(
            [sys.executable, "-m", "tests.hang_plant", "run", "--plant", plant,
             "--world", str(world), "--culprit", str(culprit), "--at", "1", "--steps", "3",
             "--timeout", timeout, "--out", out, "--backend", opts.backend],
            cwd=ROOT, env=env, capture_output=True, timeout=300, check=False,
        )  # fmt: skip
        job = time.monotonic() - start
        done = subprocess.run(
            [sys.executable, "-m", "hpnet", "hang", "--json", out],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        # the run's files stay for reading (the folder's name says what it was), until
        # the run is known right without --keep
        Path(out, "harness.log").write_bytes(job_run.stdout + job_run.stderr)
        Path(out, "hang.out").write_text(done.stdout + done.stderr)
        # a job whose every rank failed inside init_process_group never reached the plant
        started = not all(
            "in init_process_group" in Path(out, f"rank{r}.stderr").read_text(errors="replace")
            for r in range(world)
            if Path(out, f"rank{r}.stderr").exists()
        )
        os.rename(out, kept)
    row: dict[str, object] = {"plant": plant, "world": world, "culprit": culprit, "seed": seed,
                              "job_s": round(job, 1)}  # fmt: skip
    try:
        data = json.loads(done.stdout)
    except ValueError:
        row.update(ok=False, got=f"no JSON (exit {done.returncode}): {done.stderr[-200:]}")
        row["kept"] = kept
        return row
    want = ANSWER[plant]
    causes = data["causes"]
    if not started:  # the plant never happened: right when nobody is named, exit 1
        row["started"] = False
        ok = not causes and data["status"] == "unknown" and done.returncode == 1
        got = f"not started: {data['status']}, {len(causes)} cause(s)"
    elif want is None:
        ok = data["status"] == "no-hang" and not causes
        got = data["status"]
    elif not causes:
        ok, got = False, f"{data['status']}: {data['headline']}"
    else:
        first = causes[0]
        named = first["ranks"]
        alone = named == [culprit]
        # a mismatch with no majority (2 ranks; or the rank that would break the tie
        # aborted, as gloo does on a size mismatch) names every side: the culprit among them
        either = first["kind"] == "mismatch" and not first["majority"] and culprit in named
        ok = first["kind"] == want and (alone or either)
        if plant == "net":  # the network stalls under every rank: all are named, none alone
            ok = first["kind"] == want and named == list(range(world))
        got = f"{first['kind']} {named} group {first['pg']} #{first['seq']}"
        row["sides"] = either and not alone
    row.update(ok=ok, got=got)
    if ok and not opts.keep:
        shutil.rmtree(kept, ignore_errors=True)
    elif not ok:
        row["kept"] = kept
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="per plant")
    parser.add_argument("--parallel", type=int, default=2, help="jobs at once")
    parser.add_argument(
        "--plants",
        default=",".join(PLANTS),
        help=f"any of {', '.join(PLANTS + NET_PLANTS)} (net: NCCL only)",
    )
    parser.add_argument("--min-world", type=int, default=2)
    parser.add_argument("--max-world", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--backend",
        choices=("gloo", "nccl"),
        default="gloo",
        help="nccl: on GPUs, a fake host per rank, torch's own dump on timeout",
    )
    parser.add_argument("--keep", help="keep each run's files in this folder")
    parser.add_argument(
        "--wrong", help="keep a wrong run's files in this folder (default: a new temporary one)"
    )
    ns = parser.parse_args()
    ns.wrong = ns.wrong or tempfile.mkdtemp(prefix="hang-plants-wrong-")
    os.makedirs(ns.keep or ns.wrong, exist_ok=True)
    rng = random.Random(ns.seed)
    jobs = []
    for plant in ns.plants.split(","):
        for _ in range(ns.runs):
            world = rng.randint(ns.min_world, ns.max_world)
            half = max(2, world // 2)  # the harness's subgroup: ranks 0 .. half-1
            culprit = rng.randrange(half if plant in ("subgroup", "cascade") else world)
            jobs.append((plant, world, culprit, rng.randrange(1 << 30)))
    results = []
    with concurrent.futures.ThreadPoolExecutor(ns.parallel) as pool:
        for row in pool.map(lambda j: one(*j, ns), jobs):
            results.append(row)
            print(("ok   " if row["ok"] else "FAIL ") + json.dumps(row), flush=True)
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in results:
        table[str(row["plant"])]["ok" if row["ok"] else "wrong"] += 1
        table[str(row["plant"])]["sides"] += bool(row.get("sides"))
        table[str(row["plant"])]["unstarted"] += row.get("started") is False
    print(
        f"\n{'plant':<10}{'runs':>6}{'right':>7}{'of them: sides':>16}"
        f"{'not started':>13}{'wrong':>7}"
    )
    for plant, counts in table.items():
        total = counts["ok"] + counts["wrong"]
        print(
            f"{plant:<10}{total:>6}{counts['ok']:>7}{counts['sides']:>16}"
            f"{counts['unstarted']:>13}{counts['wrong']:>7}"
        )
    wrong = sum(c["wrong"] for c in table.values())
    print(f"{wrong} of {len(results)} runs wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
