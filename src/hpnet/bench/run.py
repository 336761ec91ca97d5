"""Plan and run ``hpnet bench``: local ranks (one per GPU, or N CPU ranks), or this
process as one rank of a job another launcher started.

The plan (:class:`BenchPlan`: the spec every rank gets, their argv and environment) is
built first and has no side effects; :func:`run_plan` executes it through
:mod:`hpnet.localrun` and reads rank 0's results. Under torchrun, mpirun + ``hpnet
launch``, or srun (RANK and WORLD_SIZE set), :func:`run_in_launcher` runs the worker
in this process instead.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hpnet.bench.model import BenchReport, BenchSpec, average_busbw, report_from_data
from hpnet.bench.train import TrainSpec
from hpnet.bench.worker import PROGRESS  # the worker module imports torch only in a rank
from hpnet.errors import HpnetError, InputError

__all__ = ["BenchPlan", "launcher_ranks", "plan_local", "run_in_launcher", "run_plan"]

#: what a bench rank needs beyond the caller's environment
RANK_ENV = {"PYTHONUNBUFFERED": "1"}
TIMEOUT_SECONDS = 3600.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BenchPlan:
    nproc: int
    device: str  # cuda or cpu
    fake_hosts: int
    spec: BenchSpec | TrainSpec
    argv: tuple[str, ...]  # the worker's argv, without the spec and result paths
    rank_env: tuple[dict[str, str], ...]  # only what hpnet sets


#: (rank, size, local rank) variables of each launcher, in the order they are tried:
#: torchrun / hpnet launch, Open MPI's mpirun, MPICH / Intel MPI, an srun step
_LAUNCHERS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("mpirun", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)  # fmt: skip


def launcher_ranks(environ: Mapping[str, str]) -> dict[str, str] | None:
    """RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT when this process is
    one rank of a job a launcher started; None when it is not (hpnet starts its own).

    A bare ``salloc`` shell sets SLURM_NTASKS but is no job step: only a step
    (SLURM_STEP_ID) counts. The rendezvous address is the user's to give (torchrun
    and ``hpnet launch`` set it); without it this is an error, not a guess.

    >>> launcher_ranks({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8",
    ...                 "OMPI_COMM_WORLD_LOCAL_RANK": "3", "MASTER_ADDR": "10.0.0.1"})["RANK"]
    '3'
    >>> launcher_ranks({"SLURM_NTASKS": "8"}) is None
    True
    """
    for name, rank, size, local, local_size in _LAUNCHERS:
        if rank not in environ or size not in environ:
            continue
        if name == "srun" and "SLURM_STEP_ID" not in environ:
            continue
        if (
            size == "WORLD_SIZE"
            and int(environ.get(size) or 1) == 1
            and "MASTER_ADDR" not in environ
        ):
            continue  # a stray RANK / WORLD_SIZE=1 in a shell is not a job
        if "MASTER_ADDR" not in environ:
            raise InputError(
                f"started by {name} ({rank}={environ[rank]}) but MASTER_ADDR is not set: "
                "the ranks have no address to meet at",
                code="no-master-addr",
                where="the environment",
                fix="export MASTER_ADDR=<first node's address> MASTER_PORT=29500 on every rank, "
                "or start the job with torchrun or hpnet launch",
            )
        found = {
            "RANK": environ[rank],
            "WORLD_SIZE": environ[size],
            "LOCAL_RANK": environ.get(local, environ[rank]),
            "MASTER_ADDR": environ["MASTER_ADDR"],
            "MASTER_PORT": environ.get("MASTER_PORT", "29500"),
        }
        # SLURM_NTASKS_PER_NODE may read "4(x2)" or be unset: only a plain number counts
        if environ.get(local_size, "").isdigit():
            found["LOCAL_WORLD_SIZE"] = environ[local_size]
        return found
    return None


def plan_local(
    spec: BenchSpec | TrainSpec,
    *,
    nproc: int,
    device: str,
    port: int,
    python: str,
    fake_hosts: int = 1,
    worker: str = "hpnet.bench.worker",
) -> BenchPlan:
    """Every local rank's environment (pure). ``fake_hosts`` > 1 gives groups of ranks
    different NCCL_HOSTID values: NCCL then uses its network transport between them."""
    if nproc < 1:
        raise InputError(
            "needs at least one rank", code="usage", where=f"--nproc {nproc}", fix="--nproc 2"
        )
    if fake_hosts < 1 or fake_hosts > nproc:
        raise InputError(
            f"cannot split {nproc} rank(s) into {fake_hosts} hosts",
            code="usage",
            where=f"--fake-hosts {fake_hosts}",
            fix=f"use 1 to {nproc}",
        )
    envs = []
    for rank in range(nproc):
        env = dict(RANK_ENV)
        env.update(
            RANK=str(rank),
            WORLD_SIZE=str(nproc),
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(nproc),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        if fake_hosts > 1:
            # exactly K hosts, as even as the ranks allow (4 ranks, K=3: 0 1 | 2 | 3)
            env["NCCL_HOSTID"] = f"hpnet-fake-host{rank * fake_hosts // nproc}"
        envs.append(env)
    return BenchPlan(
        nproc=nproc,
        device=device,
        fake_hosts=fake_hosts,
        spec=spec,
        argv=(python, "-m", worker),
        rank_env=tuple(envs),
    )


def _report(
    data: Mapping[str, Any], metadata: Mapping[str, Any], *, incomplete: str | None = None
) -> BenchReport:
    runs = []
    for run in data["runs"]:
        rows = run["rows"]
        failed = sum(
            1
            for row in rows
            for placement in ("out_of_place", "in_place")
            if row.get(placement) and (row[placement].get("wrong") or 0) > 0
        )
        runs.append(dict(run, out_of_bounds=failed))
    report = report_from_data(
        {
            "runs": runs,
            "metadata": {**(data.get("metadata") or {}), **metadata},
            "incomplete": incomplete,
        },
        source="hpnet bench",
    )
    return dataclasses.replace(
        report,
        runs=tuple(
            dataclasses.replace(run, avg_busbw_gbps=average_busbw(run.rows)) for run in report.runs
        ),
    )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RanksOutcome:
    """What the local ranks left: rank 0's result file (None if none was written, or
    not complete when ``failure`` says why) and where their logs are."""

    data: dict[str, Any] | None
    failure: str | None
    directory: str


def execute(
    plan: BenchPlan,
    *,
    environ: Mapping[str, str],
    keep_dir: str | None = None,
    progress: bool = True,
) -> RanksOutcome:
    """Start the plan's ranks, echo rank 0's progress, wait, read rank 0's result."""
    from hpnet.localrun import RankSpec, run_ranks  # noqa: PLC0415

    directory = keep_dir or tempfile.mkdtemp(prefix="hpnet-bench-")
    os.makedirs(directory, exist_ok=True)
    spec_path = os.path.join(directory, "spec.json")
    result_path = os.path.join(directory, "result.json")
    with open(spec_path, "w") as handle:
        json.dump(dataclasses.asdict(plan.spec), handle)
    base = dict(environ)
    specs = [
        RankSpec(
            rank=rank,
            argv=(*plan.argv, spec_path, result_path),
            env={**base, **plan.rank_env[rank]},
            log_path=os.path.join(directory, f"rank{rank}.log"),
        )
        for rank in range(plan.nproc)
    ]
    echo = _ProgressEcho(specs[0].log_path) if progress else None
    started = time.monotonic()
    results = run_ranks(specs, timeout_seconds=TIMEOUT_SECONDS, on_tick=echo)
    if echo is not None:
        echo(time.monotonic() - started, final=True)
    failed = [r for r in results if not r.ok]
    data = _read_result(result_path)
    if failed or data is None or not data.get("complete"):
        first = failed[0] if failed else results[0]
        tail = _tail(first.log_path)
        what = (
            f"rank {first.rank} exited with {first.returncode}"
            + (f" ({first.ended_by})" if first.ended_by else "")
            + (f": {tail}" if tail else "")
        )
        return RanksOutcome(data=data, failure=what, directory=directory)
    if keep_dir is None:
        shutil.rmtree(directory, ignore_errors=True)
    return RanksOutcome(data=data, failure=None, directory=directory)


def run_plan(
    plan: BenchPlan | Callable[[int], BenchPlan],
    *,
    environ: Mapping[str, str],
    metadata: Mapping[str, Any],
    keep_dir: str | None = None,
    progress: bool = True,
) -> BenchReport:
    """Run a collective sweep's ranks (``plan``, or a function of the rendezvous port
    that makes it: then a port taken meanwhile is retried on another); the report
    holds every row measured, also when a rank failed part-way (``incomplete`` says
    why); HpnetError when none was."""
    if callable(plan):
        outcome = execute_with_port(plan, environ=environ, keep_dir=keep_dir, progress=progress)
    else:
        outcome = execute(plan, environ=environ, keep_dir=keep_dir, progress=progress)
    data = outcome.data
    if outcome.failure is None and data is not None:
        return _report(data, metadata)
    failure = outcome.failure or "no result"
    if data is None or not any(run["rows"] for run in data.get("runs", ())):
        raise HpnetError(
            failure,
            code="bench-failed",
            where=os.path.join(outcome.directory, "rank0.log"),
            fix="read the rank logs in " + outcome.directory,
        )
    # the rows measured before the failure are results too: keep them
    return _report(data, metadata, incomplete=f"{failure} (rank logs: {outcome.directory})")


_PORT_TAKEN = ("EADDRINUSE", "address already in use")


def port_taken(failure: str | None) -> bool:
    """The rendezvous port was taken between choosing it and binding it (another
    process got the same free port): worth one more try with another."""
    return failure is not None and any(mark in failure for mark in _PORT_TAKEN)


def execute_with_port(
    build: Callable[[int], BenchPlan],
    *,
    environ: Mapping[str, str],
    keep_dir: str | None = None,
    progress: bool = True,
    attempts: int = 3,
) -> RanksOutcome:
    """:func:`execute` the plan ``build(port)`` makes, on a new free port when the
    last one was taken before rank 0 could bind it."""
    from hpnet.localrun import free_port  # noqa: PLC0415

    outcome = execute(build(free_port()), environ=environ, keep_dir=keep_dir, progress=progress)
    for _ in range(attempts - 1):
        if not (port_taken(outcome.failure) and outcome.data is None):
            break
        outcome = execute(build(free_port()), environ=environ, keep_dir=keep_dir, progress=progress)
    return outcome


def _read_result(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_in_launcher(
    spec: BenchSpec,
    *,
    ranks: Mapping[str, str],
    metadata: Mapping[str, Any],
    checkpoint_path: str | None = None,
) -> BenchReport | None:
    """Run as one rank of a launcher's job; rank 0 returns the report, the others None.
    With ``checkpoint_path`` rank 0 keeps the rows measured so far there."""
    from hpnet.bench import worker  # noqa: PLC0415

    def checkpoint(data: dict[str, Any]) -> None:
        if checkpoint_path:
            worker.write_json(checkpoint_path, data)

    data = worker.run(dataclasses.asdict(spec), ranks, checkpoint=checkpoint)
    return None if data is None else _report(data, metadata)


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 2000))
            lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    useful = [line for line in lines if line.strip() and not line.startswith(PROGRESS)]
    return useful[-1][:300] if useful else ""


class _ProgressEcho:
    """Echo rank 0's latest progress line to standard error, once a second at most,
    and once more at the end (``final``) so that the last step is always shown."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.last = 0.0
        self.line = ""

    def __call__(self, elapsed: float, *, final: bool = False) -> None:
        if elapsed - self.last < 1.0 and not final:
            return
        self.last = elapsed
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        cut = data.rfind(b"\n")
        if cut < 0:
            return
        self.offset += cut + 1
        for line in data[:cut].decode("utf-8", "replace").splitlines():
            if line.startswith(PROGRESS):
                self.line = line
        if self.line:
            print(self.line, file=sys.stderr, flush=True)
            self.line = ""


def local_defaults(nproc: int | None, device: str) -> tuple[int, str]:
    """How many local ranks on which device: one per visible GPU, else 2 CPU ranks."""
    from hpnet.node.gpus import read_gpus_nvml, visible_gpu_count  # noqa: PLC0415
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    gpus = 0 if device == "cpu" else visible_gpu_count(read_gpus_nvml(FsRoot("/")).gpus, os.environ)
    if device == "cuda" and gpus == 0:
        raise InputError(
            "no NVIDIA GPU that NVML can see (and CUDA_VISIBLE_DEVICES allows)",
            code="no-gpu",
            where="--device cuda",
            fix="run on a GPU node, or use --device cpu (gloo)",
        )
    if device != "cpu" and gpus and nproc is not None and nproc > gpus:
        raise InputError(
            f"{nproc} ranks for {gpus} GPUs: NCCL needs one GPU per rank",
            code="usage",
            where=f"--nproc {nproc}",
            fix=f"--nproc {gpus} or fewer, or --device cpu for gloo ranks",
        )
    chosen = "cuda" if gpus else "cpu"
    return (nproc if nproc is not None else (gpus or 2)), chosen


def metadata(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """What makes two results comparable: the command, NCCL_* settings, this node."""
    import platform  # noqa: PLC0415

    from hpnet import __version__  # noqa: PLC0415

    return {
        "hpnet": __version__,
        "command": list(argv),
        "nccl_env": {k: v for k, v in sorted(environ.items()) if k.startswith("NCCL_")},
        "node": platform.node(),
        "python": platform.python_version(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
