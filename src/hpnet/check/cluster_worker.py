"""One rank of ``hpnet check --all``: the job-wide all_reduce, then, with the groups
still up, each node's own all_reduce, each node-to-node link of a ring of the nodes'
first ranks, and the gathering of every rank's facts and NCCL log on rank 0.

    python -m hpnet.check.cluster_worker FACTS.json OUTDIR

Started by ``hpnet check --all`` in every rank of a launcher's job as the rank's worker
(:mod:`hpnet.cluster.spawn`: the rank's variables, NCCL_DEBUG=INFO, NCCL_DEBUG_FILE);
rank 0 writes OUTDIR/result.json and OUTDIR/logs/rankN.log. Imports torch (through the
bench worker).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Any

from hpnet.bench import worker
from hpnet.cluster.folder import write_result
from hpnet.cluster.gather import gather_json, nccl_debug_file, ranks_by_node
from hpnet.cluster.spawn import die_with_parent

#: bytes per node-local all_reduce and per ring hop: large enough for the plateau on
#: NVLink and RDMA, small enough for seconds on gloo
GPU_BYTES = 64 << 20
CPU_BYTES = 1 << 20
ITERS = 10
LOG_LIMIT = 1 << 20  # bytes of NCCL log per rank sent to rank 0


def _nccl_log() -> bytes:
    """This rank's NCCL debug log (:func:`hpnet.cluster.gather.nccl_debug_file`), its
    first :data:`LOG_LIMIT` bytes."""
    path = nccl_debug_file(os.environ, os.getpid())
    if path is None:
        return b""
    try:
        with open(path, "rb") as handle:
            return handle.read(LOG_LIMIT)
    except OSError:
        return b""


def _timed(ctx: Any, work: Any, sync: Any) -> float:
    for _ in range(2):
        work()
    sync()
    start = time.perf_counter()
    for _ in range(ITERS):
        work()
    sync()
    return (time.perf_counter() - start) / ITERS


def measure(ctx: Any, facts: dict[str, Any]) -> dict[str, Any] | None:
    """Run on every rank after the sweep; rank 0 gets the cluster's numbers."""
    torch, dist = ctx.torch, ctx.dist
    every = gather_json(ctx, facts)
    nodes = ranks_by_node(every)
    backend = "nccl" if ctx.cuda else "gloo"
    size = GPU_BYTES if ctx.cuda else CPU_BYTES
    buf = torch.ones(size // 4, dtype=torch.float32, device=ctx.device)

    def sync() -> None:
        ctx.sync()

    # each node's own all_reduce: every rank creates every group, in the same order
    groups = {name: dist.new_group(ranks, backend=backend) for name, ranks in nodes.items()}
    mine = next(name for name, ranks in nodes.items() if ctx.rank in ranks)
    local = len(nodes[mine])
    seconds = -1.0
    if local > 1:
        seconds = _timed(ctx, lambda: dist.all_reduce(buf, group=groups[mine]), sync)
    times = ctx.gather([seconds])
    intra: dict[str, float | None] = {}
    for name, ranks in nodes.items():
        slowest = max(times[r][0] for r in ranks)
        n = len(ranks)
        intra[name] = size / 1e9 / slowest * 2 * (n - 1) / n if n > 1 and slowest > 0 else None
    # a ring over the nodes' first ranks, one hop at a time
    ring: list[dict[str, Any]] = []
    leaders = [ranks[0] for ranks in nodes.values()]
    names = list(nodes)
    everyone = dist.new_group(list(range(ctx.world)), backend=backend)
    if len(leaders) > 1:
        for hop, source in enumerate(leaders):
            target = leaders[(hop + 1) % len(leaders)]
            elapsed = -1.0
            if ctx.rank == source:
                elapsed = _timed(
                    ctx, lambda peer=target: dist.send(buf, peer, group=everyone), sync
                )
            elif ctx.rank == target:
                elapsed = _timed(
                    ctx, lambda peer=source: dist.recv(buf, peer, group=everyone), sync
                )
            hop_times = ctx.gather([elapsed])
            slowest = max(hop_times[source][0], hop_times[target][0])
            ring.append(
                {
                    "from": names[hop],
                    "to": names[(hop + 1) % len(names)],
                    "gbps": size / 1e9 / slowest if slowest > 0 else None,
                }
            )
            ctx.barrier()
    logs = ctx.gather_bytes(_nccl_log())
    if ctx.rank != 0:
        return None
    return {
        "facts": every,
        "nodes": nodes,
        "intra": intra,
        "ring": ring,
        "bytes": size,
        "logs": [log.decode("utf-8", "replace") for log in logs],
    }


def main(argv: list[str]) -> int:
    die_with_parent()
    with open(argv[1]) as handle:
        facts = json.load(handle)
    out = argv[2]
    spec = facts.pop("spec")
    result = worker.run(spec, os.environ, after=lambda ctx: measure(ctx, facts))
    if result is not None:
        after = result.pop("after")
        # an earlier job's logs in this directory (more ranks than this one) must not be
        # read as this job's
        shutil.rmtree(os.path.join(out, "logs"), ignore_errors=True)
        os.makedirs(os.path.join(out, "logs"), exist_ok=True)
        for rank, text in enumerate(after.pop("logs")):
            with open(os.path.join(out, "logs", f"rank{rank}.log"), "w") as handle:
                handle.write(text)
        write_result(out, {**result, "cluster": after})
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
