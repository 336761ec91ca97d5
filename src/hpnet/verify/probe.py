"""``hpnet verify --run``: a short all_reduce over this node's GPUs, logged and read.

The plan (argv and environment of every rank) is built first and can be printed;
:func:`run_probe` executes it through :mod:`hpnet.localrun` and parses the per-rank
logs with the same parser as ``hpnet verify FILE``. With ``fake_hosts`` K > 1 the
ranks are split into K groups with distinct ``NCCL_HOSTID`` values: NCCL then treats
them as K hosts and connects the groups through its network transport (IB where
RDMA works, else Socket), which exercises the inter-node path on one machine.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping

from hpnet.errors import HpnetError, InputError
from hpnet.nccl.logmodel import NcclLog

__all__ = ["ProbePlan", "plan_probe", "run_probe"]

#: what NCCL must print for the transports to be proven (connection lines are INIT /
#: P2P / NET; the network choice and NICs are INIT / NET; GRAPH gives rings and trees)
PROBE_ENV = {
    "NCCL_DEBUG": "INFO",
    "NCCL_DEBUG_SUBSYS": "INIT,NET,GRAPH,ENV",
    "PYTHONUNBUFFERED": "1",
}
PROBE_TIMEOUT_SECONDS = 180.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ProbePlan:
    nproc: int
    fake_hosts: int
    argv: tuple[str, ...]
    #: the environment of each rank (only what hpnet sets, over the caller's)
    rank_env: tuple[dict[str, str], ...]


def plan_probe(
    *, nproc: int, fake_hosts: int, port: int, python: str, size_bytes: int = 64 << 20
) -> ProbePlan:
    """Every rank's argv and environment (pure)."""
    if nproc < 1:
        raise InputError(
            "needs at least one rank", code="usage", where=f"--nproc {nproc}", fix="--nproc 2"
        )
    if fake_hosts < 1 or fake_hosts > nproc:
        raise InputError(
            f"cannot split {nproc} rank(s) into {fake_hosts} hosts",
            code="usage",
            where=f"--fake-hosts {fake_hosts}",
            fix=f"use 1 to {nproc} fake hosts",
        )
    per_host = -(-nproc // fake_hosts)
    envs = []
    for rank in range(nproc):
        env = dict(PROBE_ENV)
        env.update(
            RANK=str(rank),
            WORLD_SIZE=str(nproc),
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(nproc),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        if fake_hosts > 1:
            env["NCCL_HOSTID"] = f"hpnet-fake-host{rank // per_host}"
        envs.append(env)
    return ProbePlan(
        nproc=nproc,
        fake_hosts=fake_hosts,
        argv=(python, "-m", "hpnet.verify.probe_worker", str(size_bytes)),
        rank_env=tuple(envs),
    )


def _gpu_count() -> int:
    from hpnet.node.gpus import read_gpus_nvml  # noqa: PLC0415
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    report = read_gpus_nvml(FsRoot("/"))
    return len(report.gpus)


def run_probe(
    *,
    nproc: int | None,
    fake_hosts: int,
    environ: Mapping[str, str] | None = None,
    keep_dir: str | None = None,
) -> NcclLog:
    """Run the probe on this node's GPUs and parse what NCCL printed."""
    from hpnet.localrun import RankSpec, free_port, run_ranks  # noqa: PLC0415
    from hpnet.nccl.logread import collect_inputs, read_logs  # noqa: PLC0415

    gpus = _gpu_count()
    if gpus == 0:
        raise InputError(
            "this node has no NVIDIA GPU that NVML can see: there is no NCCL job to run",
            code="no-gpu",
            where="hpnet verify --run",
            fix="run it on a GPU node, or verify a log from one (hpnet verify FILE); "
            "`hpnet check` runs the CPU (gloo) path here",
        )
    count = nproc if nproc is not None else gpus
    plan = plan_probe(nproc=count, fake_hosts=fake_hosts, port=free_port(), python=sys.executable)
    base = dict(os.environ if environ is None else environ)
    # the debug settings are the probe's; anything else the user set stays
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
    directory = keep_dir or tempfile.mkdtemp(prefix="hpnet-probe-")
    specs = [
        RankSpec(
            rank=rank,
            argv=plan.argv,
            env={**base, **plan.rank_env[rank]},
            log_path=os.path.join(directory, f"rank{rank}.log"),
        )
        for rank in range(count)
    ]
    print(
        f"hpnet verify: running all_reduce on {count} rank(s)"
        + (f" as {fake_hosts} fake hosts" if fake_hosts > 1 else "")
        + f", logs in {directory}",
        file=sys.stderr,
    )
    try:
        results = run_ranks(specs, timeout_seconds=PROBE_TIMEOUT_SECONDS)
    except BaseException:  # Ctrl-C, SIGTERM / SIGHUP (Terminated): the ranks are ended
        if keep_dir is None:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    inputs, notes = collect_inputs([r.log_path for r in results])
    for result in results:
        if not result.ok:
            why = f" ({result.ended_by})" if result.ended_by else ""
            notes.append(f"rank {result.rank} exited with {result.returncode}{why}")
    if not inputs:
        raise HpnetError(
            "the probe wrote no log", code="probe-failed", where=directory, fix="see the logs"
        )
    log = read_logs(inputs, jobs=1, notes=notes)
    if keep_dir is None:
        if all(r.ok for r in results):
            shutil.rmtree(directory, ignore_errors=True)
        else:
            print(f"hpnet verify: the probe failed; its logs stay in {directory}", file=sys.stderr)
    return log
