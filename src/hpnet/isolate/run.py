"""``hpnet isolate`` in one rank of a launcher's job: gather the node's facts, run the
rounds in the rank's worker (:mod:`hpnet.isolate.worker`, started and ended as
:mod:`hpnet.cluster.spawn` says) under ``NCCL_DEBUG=INFO``, and on rank 0 read the
result back.

Files (:mod:`hpnet.cluster.folder`): a temporary directory, or with
``--logs DIR`` the job's own directory ``DIR/isolate-<rendezvous address>-<port>``
(every rank of one job names the same one, no other job at the same time can):
``nccl.rank<R>.log``, ``round<N>/rank<R>.log`` (what each round logged), ``result.json``;
each rank first removes its own files of an earlier job there. Without ``--logs`` the
temporary directory is removed when the rank ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hpnet.cluster.folder import job_directory, read_result
from hpnet.errors import HpnetError, InputError
from hpnet.isolate.drain import scheduler_of
from hpnet.isolate.facts import PER_NODE, closest_nics, node_facts

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = ["IsolateOptions", "run_isolate"]

TIMEOUT_SECONDS = 1800.0
#: how long the ranks wait for each other (the job's forming, every round's gather): a
#: rank that never came leaves the others waiting this long, not torch's 30 minutes;
#: longer than a test's own limit (hpnet.isolate.worker.GROUP_TIMEOUT)
INIT_TIMEOUT_SECONDS = 600


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class IsolateOptions:
    device: str = "auto"  # auto, cuda, cpu
    bytes: int | None = None  # per all_reduce; None: 64 MiB on GPUs, 1 MiB on CPUs
    iters: int = 20
    baseline: Mapping[str, Any] | None = None  # an earlier run's --json
    groups: Mapping[str, str] | None = None  # node -> rack / leaf switch
    keep_dir: str | None = None
    seed: int = 0


def _device(requested: str) -> str:
    if requested != "auto":
        return requested
    from hpnet.bench.run import local_defaults  # noqa: PLC0415

    return local_defaults(None, "auto")[1]


def run_isolate(
    options: IsolateOptions, environ: Mapping[str, str], ranks: Mapping[str, str]
) -> dict[str, Any] | None:
    """This rank's part; rank 0 returns the job's result (the worker's result.json),
    the other ranks None."""
    from hpnet.cluster.facts import RankPlace, node_inventory  # noqa: PLC0415

    device = _device(options.device)
    size = options.bytes or (64 << 20 if device == "cuda" else 1 << 20)
    if options.baseline is not None:  # only rank 0 reads it (hpnet.cli.isolate)
        check_baseline_shape(options.baseline, size, "nccl" if device == "cuda" else "gloo")
    # every rank sends its facts (fake hosts share a machine but not local rank 0);
    # rank 0 keeps each node's first rank's
    inventory = node_inventory(environ, gpus=device != "cpu")
    place = RankPlace.of(environ, ranks)
    spec = {
        "node": place.node,  # NCCL_HOSTID (fake hosts) or the host name
        "rail": place.local_rank,
        "facts": node_facts(inventory, environ),
        "nics": gpu_nics(inventory),
        "device": device,
        "bytes": size,
        "iters": options.iters,
        "baseline": options.baseline,
        "groups": options.groups,
        "seed": options.seed,
        "per_node_keys": sorted(PER_NODE),
        "scheduler": scheduler_of(environ),
        "timeout_s": INIT_TIMEOUT_SECONDS,
    }
    out = job_directory(options.keep_dir, ranks, "isolate")
    try:
        return _run_in(out, spec, environ, ranks, keep=options.keep_dir is not None)
    finally:
        if options.keep_dir is None:
            shutil.rmtree(out, ignore_errors=True)


def _forget_earlier_job(out: str, rank: str) -> None:
    """This rank's files from an earlier job in the same --logs directory (same
    rendezvous): its NCCL log (NCCL truncates it only when it starts, and a rank on
    CPUs never starts NCCL), its round logs; rank 0 also the result."""
    names = [f"nccl.rank{rank}.log", f"spec.rank{rank}.json"]
    names += [os.path.join(d, f"rank{rank}.log") for d in os.listdir(out) if d.startswith("round")]
    if rank == "0":
        names.append("result.json")
    for name in names:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(os.path.join(out, name))


def _run_in(
    out: str,
    spec: dict[str, Any],
    environ: Mapping[str, str],
    ranks: Mapping[str, str],
    *,
    keep: bool,
) -> dict[str, Any] | None:
    from hpnet.cluster.spawn import run_worker, worker_env  # noqa: PLC0415
    from hpnet.outputfile import write_file  # noqa: PLC0415

    rank = ranks["RANK"]
    _forget_earlier_job(out, rank)
    spec_path = os.path.join(out, f"spec.rank{rank}.json")
    write_file(spec_path, json.dumps(spec))
    # rank 0's worker says how far the rounds are: shown as it says it
    done = run_worker(
        [sys.executable, "-m", "hpnet.isolate.worker", spec_path, out],
        worker_env(environ, ranks, os.path.join(out, f"nccl.rank{rank}.log")),
        part="rounds",
        timeout_seconds=TIMEOUT_SECONDS,
        echo=rank == "0",
    )
    if not done.ok:
        raise HpnetError(
            done.failure(rank),
            code="isolate-failed",
            where=out if keep else "the rank's worker",
            fix="rerun with --logs DIR and read the NCCL logs there (nccl.rank<R>.log)",
        )
    if rank != "0":
        return None
    result = read_result(out)
    result["files"] = out if keep else None
    return result


def check_baseline_shape(baseline: Mapping[str, Any], size: int, backend: str) -> None:
    """A baseline measured with another size or backend says nothing about this run's
    bandwidth (bus bandwidth grows with the size): refused, with what to pass."""
    for key, value in (("bytes", size), ("backend", backend)):
        then = baseline.get(key)
        if then is not None and then != value:
            raise InputError(
                f"the baseline was measured with {key} {then}, this run uses {value}",
                code="bad-baseline",
                where="--baseline",
                fix=f"run with the baseline's {key} (--bytes / --device), or take a new baseline",
            )


def gpu_nics(inventory: NodeInventory) -> dict[str, str]:
    """Each GPU's closest RDMA device by the GPU's PCI address (``0000:3b:00.0``):
    a rank finds its own GPU by address, whatever CUDA_VISIBLE_DEVICES renumbered."""
    by_index = {gpu.index: gpu.pci_bus_id.lower() for gpu in inventory.gpus}
    return {by_index[i]: nic for i, nic in closest_nics(inventory).items() if i in by_index}
