"""``hpnet isolate`` in one rank of a launcher's job: gather the node's facts, run the
rounds in a child process (:mod:`hpnet.isolate.worker`) under ``NCCL_DEBUG=INFO``, and
on rank 0 read the result back.

The child gets the rank's environment without its secrets
(:func:`hpnet.localrun.inheritable_env`). Files: a temporary directory, or with
``--logs DIR`` the job's own directory ``DIR/isolate-<rendezvous address>-<port>``
(every rank of one job names the same one, no other job at the same time can):
``nccl.rank<R>.log``, ``round<N>/rank<R>.log`` (what each round logged), ``result.json``;
each rank first removes its own files of an earlier job there. Without ``--logs`` the
temporary directory is removed when the rank ends.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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
TAIL_LINES = 40
#: how HpnetError.render starts a line (hpnet.errors): the worker's own error
ERROR_PREFIX = "error["


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
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415
    from hpnet.jobs import node_id  # noqa: PLC0415

    device = _device(options.device)
    size = options.bytes or (64 << 20 if device == "cuda" else 1 << 20)
    if options.baseline is not None:  # only rank 0 reads it (hpnet.cli.isolate)
        check_baseline_shape(options.baseline, size, "nccl" if device == "cuda" else "gloo")
    # every rank sends its facts (fake hosts share a machine but not local rank 0);
    # rank 0 keeps each node's first rank's
    inventory = detect(DetectOptions(gpus=device != "cpu"), env=dict(environ), python_path=sys.path)
    spec = {
        "node": node_id(environ),  # NCCL_HOSTID (fake hosts) or the host name
        "rail": int(ranks.get("LOCAL_RANK", "0")),
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
    from hpnet.jobs import job_directory  # noqa: PLC0415

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
    from hpnet.localrun import inheritable_env  # noqa: PLC0415

    rank = ranks["RANK"]
    _forget_earlier_job(out, rank)
    spec_path = os.path.join(out, f"spec.rank{rank}.json")
    with open(spec_path, "w") as handle:
        json.dump(spec, handle)
    child = {
        **inheritable_env(environ),
        **ranks,
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV",
        "NCCL_DEBUG_FILE": os.path.join(out, f"nccl.rank{rank}.log"),
    }
    returncode, tail = _run_worker(
        [sys.executable, "-m", "hpnet.isolate.worker", spec_path, out], child, echo=rank == "0"
    )
    if returncode != 0:
        _failed(rank, returncode, tail, out if keep else None)
    if rank != "0":
        return None
    with open(os.path.join(out, "result.json")) as handle:
        result: dict[str, Any] = json.load(handle)
    result["files"] = out if keep else None
    return result


def _run_worker(argv: list[str], env: Mapping[str, str], *, echo: bool) -> tuple[int, list[str]]:
    """Run the rank's worker; its standard error is echoed (rank 0: the progress) and
    its last lines kept for the error message. SIGTERM / SIGHUP (the launcher ending the
    job) raise :class:`~hpnet.errors.Terminated` here: the worker is killed on the way
    out, and it also asks for SIGTERM should this process die without that
    (:func:`hpnet.isolate.worker.die_with_parent`): a rank leaves nothing behind."""
    from hpnet.localrun import StopSignals  # noqa: PLC0415

    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    proc = subprocess.Popen(
        argv, env={**env, "HPNET_PARENT_PID": str(os.getpid())}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, errors="replace",
    )  # fmt: skip
    assert proc.stderr is not None  # noqa: S101 - stderr=PIPE
    deadline = time.monotonic() + TIMEOUT_SECONDS
    timer = threading.Timer(TIMEOUT_SECONDS, proc.kill)
    timer.start()
    try:
        with StopSignals():
            for line in proc.stderr:
                tail.append(line.rstrip("\n"))
                if echo:
                    sys.stderr.write(line)
                    sys.stderr.flush()
            returncode = proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if time.monotonic() >= deadline:
        tail.append(f"the rounds did not end within {TIMEOUT_SECONDS:.0f} s")
    return returncode, list(tail)


def _failed(rank: str, returncode: int, tail: list[str], out: str | None) -> None:
    from hpnet.localrun import RankResult, describe_exit  # noqa: PLC0415

    # the worker prints an hpnet error as "error[code]: ..." and exits 2: that line is
    # the cause; else the last line that is not the launcher's or torch's noise
    said = [line for line in tail if line.startswith(ERROR_PREFIX)]
    lines = said or [line for line in tail if line.strip()]
    cause = lines[-1][:400] if lines else ""
    how = describe_exit(RankResult(rank=int(rank), returncode=returncode, log_path=out or ""))
    raise HpnetError(
        f"rank {rank}'s rounds {how}: {cause}",
        code="isolate-failed",
        where=out or "the rank's worker",
        fix="rerun with --logs DIR and read the NCCL logs there (nccl.rank<R>.log)",
    )


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
