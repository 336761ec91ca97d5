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

from hpnet.errors import HpnetError, InputError, UsageError
from hpnet.ncclog.model import NcclLog

__all__ = ["ProbePlan", "plan_probe", "run_probe"]

#: what NCCL must print for the transports to be proven (connection lines are INIT /
#: P2P / NET; the network choice and NICs are INIT / NET; GRAPH gives rings and trees)
PROBE_ENV = {
    "NCCL_DEBUG": "INFO",
    "NCCL_DEBUG_SUBSYS": "INIT,NET,GRAPH,ENV",
    "PYTHONUNBUFFERED": "1",
}
PROBE_TIMEOUT_SECONDS = 180.0
#: variables of the caller's environment the ranks must not see: NCCL_DEBUG_FILE would
#: send NCCL's lines to the user's file instead of the rank log the probe reads
PROBE_UNSET = ("NCCL_DEBUG_FILE",)


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
        if fake_hosts > 1:  # exactly K hosts, sizes differing by one at most
            env["NCCL_HOSTID"] = f"hpnet-fake-host{rank * fake_hosts // nproc}"
        envs.append(env)
    return ProbePlan(
        nproc=nproc,
        fake_hosts=fake_hosts,
        argv=(python, "-m", "hpnet.verify.probe_worker", str(size_bytes)),
        rank_env=tuple(envs),
    )


def _gpu_count(environ: Mapping[str, str]) -> int:
    """The GPUs the ranks can use: NVML's, narrowed by CUDA_VISIBLE_DEVICES."""
    from hpnet.node.gpus import read_gpus_nvml, visible_gpu_count  # noqa: PLC0415
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    return visible_gpu_count(read_gpus_nvml(FsRoot("/")).gpus, environ)


def run_probe(
    *,
    nproc: int | None,
    fake_hosts: int,
    environ: Mapping[str, str] | None = None,
    keep_dir: str | None = None,
) -> NcclLog:
    """Run the probe on this node's GPUs and parse what NCCL printed."""
    from hpnet.localrun import (  # noqa: PLC0415
        RankSpec,
        describe_exit,
        free_port,
        inheritable_env,
        run_ranks,
    )
    from hpnet.ncclog.read import collect_inputs, read_logs  # noqa: PLC0415

    # the caller's environment without its secrets: a local rank sees what a remote one would
    base = inheritable_env(os.environ if environ is None else environ)
    gpus = _gpu_count(base)
    if gpus == 0:
        hidden = " (CUDA_VISIBLE_DEVICES hides them)" if "CUDA_VISIBLE_DEVICES" in base else ""
        raise InputError(
            f"this node has no NVIDIA GPU that NVML can see{hidden}: there is no NCCL job to run",
            code="no-gpu",
            where="hpnet verify --run",
            fix="run it on a GPU node, or verify a log from one (hpnet verify FILE); "
            "`hpnet bench --device cpu` runs a collective over gloo here",
        )
    if nproc is not None and nproc > gpus:
        raise UsageError(
            f"{nproc} ranks for {gpus} GPU(s): NCCL needs a GPU of its own for every rank",
            code="usage",
            where=f"--nproc {nproc}",
            fix=f"--nproc {gpus} or fewer (CUDA_VISIBLE_DEVICES counts)",
        )
    count = nproc if nproc is not None else gpus
    plan = plan_probe(nproc=count, fake_hosts=fake_hosts, port=free_port(), python=sys.executable)
    # the debug settings are the probe's; anything else the user set stays
    for name in PROBE_UNSET:
        base.pop(name, None)
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
            notes.append(f"rank {result.rank} {describe_exit(result)}")
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
