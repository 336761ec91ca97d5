"""Which ranks ``hpnet bench`` runs: this process as one rank of a job a launcher
started (torchrun, mpirun, srun, ``hpnet launch``: :func:`launcher_ranks`), or local
ranks it starts itself, one per visible GPU or N CPU ranks (:func:`local_defaults`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hpnet.errors import InputError

__all__ = ["MAX_CPU_RANKS", "MAX_CPU_RANKS_PER_CORE", "launcher_ranks", "local_defaults"]

#: CPU ranks per CPU core at most: beyond that gloo's ranks only wait for the
#: scheduler (and --nproc 1000 would start a thousand Python processes)
MAX_CPU_RANKS_PER_CORE = 4
#: and this many in all, whatever the cores: each rank is a Python process with torch
#: loaded (a few hundred MB), and gloo's CPU collectives say nothing more at a larger size
MAX_CPU_RANKS = 128

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
            and environ.get(size, "").strip() in ("", "1")
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
        _check_numbers(environ, name, (rank, size, local, local_size))
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


def _check_numbers(environ: Mapping[str, str], launcher: str, names: tuple[str, ...]) -> None:
    """The launcher's rank variables are whole numbers, the rank below the size (a
    rank that is not one of the job's would wait for a peer that never comes).

    >>> _check_numbers({"RANK": "5", "WORLD_SIZE": "2"}, "torchrun",
    ...                ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"))
    Traceback (most recent call last):
    ...
    hpnet.errors.InputError: RANK=5 is not a rank of a job of WORLD_SIZE=2 ranks (0 to 1)
    """
    rank, size, local, local_size = names
    values: dict[str, int] = {}
    for name in names:
        text = environ.get(name)
        if text is None or (name == local_size and not text.strip().isdigit()):
            continue  # SLURM_NTASKS_PER_NODE may read "4(x2)": not used then
        if not text.strip().isdigit():
            raise InputError(
                f"{name}={text[:40]!r} is not a whole number",
                code="bad-rank-env",
                where="the environment",
                fix=f"start the job with {launcher} or hpnet launch, which set {name}; "
                "or unset it in this shell",
            )
        values[name] = int(text)
    checks = ((rank, size), (local, local_size))
    if values[size] < 1:
        raise InputError(
            f"{size}={values[size]}: a job has at least one rank",
            code="bad-rank-env",
            where="the environment",
            fix=f"start the job with {launcher} or hpnet launch",
        )
    for low, high in checks:
        if low in values and high in values and values[low] >= values[high]:
            raise InputError(
                f"{low}={values[low]} is not a rank of a job of {high}={values[high]} ranks "
                f"(0 to {values[high] - 1})",
                code="bad-rank-env",
                where="the environment",
                fix=f"start the job with {launcher} or hpnet launch, which set both",
            )


def local_defaults(nproc: int | None, device: str) -> tuple[int, str]:
    """How many local ranks on which device: one per visible GPU, else 2 CPU ranks.
    More ranks than GPUs, or than :data:`MAX_CPU_RANKS_PER_CORE` per CPU core (at most
    :data:`MAX_CPU_RANKS`) on CPU, is an InputError before anything starts."""
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
    if chosen == "cpu" and nproc is not None:
        cores = _cpu_count()
        most = min(MAX_CPU_RANKS_PER_CORE * cores, MAX_CPU_RANKS)
        if nproc > most:
            raise InputError(
                f"{nproc} CPU ranks on {cores} CPU core(s): at most {most} "
                f"({MAX_CPU_RANKS_PER_CORE} per core, {MAX_CPU_RANKS} in all); more only "
                "measure the scheduler",
                code="too-many-ranks",
                where=f"--nproc {nproc}",
                fix=f"--nproc {most} or fewer (2 is the default), or run on a host with more cores",
            )
    return (nproc if nproc is not None else (gpus or 2)), chosen


def _cpu_count() -> int:
    """The CPU cores this process may run on (its affinity: a container's cpuset)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
