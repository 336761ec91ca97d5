"""hpnet isolate on healthy fake hosts: never a culprit, and well under the group timeout.

Runs ``hpnet isolate`` under torchrun with one rank per fake NCCL host
(``NCCL_HOSTID=host<local rank>``) on this machine, for every node count in
``--nodes`` (default 2 to 9), ``--runs`` times each, and prints one row per run: the
verdict's status, what it named, its wall time. ``--slow-host K`` gives host K slower
NCCL socket settings (NCCL only: on GPUs it must come out as that host's configuration
fault, and nothing else). Exit 1 when a clean run names anything or ends without a
verdict, when a slowed run does not name exactly the slowed host, or when a run takes
longer than ``--limit`` seconds. A clean run that ends *inconclusive* (a node slow
against round 1 but not against good nodes measured beside it: the machine's load
changed between rounds) names nobody: it is counted apart, not wrong.

    python benchmarks/isolate_healthy.py                       # CPU, gloo, 2..9 nodes
    python benchmarks/isolate_healthy.py --device cuda --runs 2 --slow-host 1
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SLOW = "NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1 NCCL_MAX_NCHANNELS=1 NCCL_BUFFSIZE=65536"
FAST = "NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_once(nodes: int, device: str, slow: int | None, work: Path) -> dict[str, object]:
    torchrun = Path(sys.executable).parent / "torchrun"
    settings = ""
    if slow is not None:
        settings = f'if [ "$LOCAL_RANK" = "{slow}" ]; then export {SLOW}; else export {FAST}; fi\n'
    size = "64M" if device == "cuda" else "64K"
    script = work / "rank.sh"
    script.write_text(
        "#!/bin/sh\nexport NCCL_HOSTID=host$LOCAL_RANK NCCL_NVLS_ENABLE=0\n"
        f"{settings}exec {sys.executable} -m hpnet isolate --device {device} "
        f"--bytes {size} --iters 5 --json\n"
    )
    script.chmod(0o755)
    start = time.monotonic()
    done = subprocess.run(
        [str(torchrun), "--nproc-per-node", str(nodes), "--master-port", str(_port()),
         "--no-python", str(script)],
        capture_output=True, text=True, timeout=900, check=False, cwd=work,
        env={**os.environ, "NCCL_NVLS_ENABLE": "0", "TMPDIR": str(work)},
    )  # fmt: skip
    seconds = time.monotonic() - start
    row: dict[str, object] = {"nodes": nodes, "rc": done.returncode, "seconds": round(seconds, 1)}
    text = done.stdout
    try:
        data = json.loads(text[text.index("{") : text.rindex("}") + 1])
    except ValueError:
        row.update(status="no verdict", named=[], tail=done.stderr.strip().splitlines()[-3:])
        return row
    row["status"] = data["status"]
    row["named"] = [f"{o['kind']} {o.get('node')} {o['fault']}" for o in data["outliers"]]
    row["inconclusive"] = [f"{i['node']}: {i['cause'][:80]}" for i in data["inconclusive"]]
    row["collectives"] = data["collectives"]
    row["verdict"] = data
    if data["outliers"] or data["inconclusive"]:  # what it measured, to read why
        row["pairs"] = [
            (p["round"], p["a"], p["b"], p["rail"], p["median_gbps"] and round(p["median_gbps"], 3))
            for p in data["pairs"]
        ]
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", default="2-9", help="a range A-B or one count")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--slow-host", type=int, default=None, metavar="K")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds a run may take")
    parser.add_argument("--save", metavar="DIR", help="write each wrong run's verdict there")
    ns = parser.parse_args()
    low, _, high = ns.nodes.partition("-")
    counts = range(int(low), int(high or low) + 1)
    bad = unjudged = 0
    for nodes in counts:
        for _ in range(ns.runs):
            with tempfile.TemporaryDirectory(prefix="isolate-healthy-") as work:
                row = run_once(nodes, ns.device, ns.slow_host, Path(work))
            if ns.slow_host is None or ns.slow_host >= nodes:
                ok = row["status"] in ("no-outlier", "inconclusive") and not row["named"]
                unjudged += row["status"] == "inconclusive"
            else:
                ok = row["named"] == [f"node host{ns.slow_host} configuration"]
            ok = ok and float(row["seconds"]) <= ns.limit  # type: ignore[arg-type]
            bad += not ok
            verdict = row.pop("verdict", None)
            if not ok and ns.save and verdict is not None:
                os.makedirs(ns.save, exist_ok=True)
                name = f"wrong-{nodes}-{bad}.json"
                Path(ns.save, name).write_text(json.dumps(verdict, indent=1))
            word = "FAIL " if not ok else "ok?  " if row["status"] == "inconclusive" else "ok   "
            print(word + json.dumps(row), flush=True)
    print(f"{bad} of {len(counts) * ns.runs} runs wrong, {unjudged} inconclusive")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
