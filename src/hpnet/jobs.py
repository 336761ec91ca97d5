"""What every command run as the ranks of one job shares (``hpnet check --all``,
``hpnet isolate``; ``hpnet hang`` reads what they leave): which node a rank is on, the
job's own folder for the ranks' files, the NCCL a node's ranks load, the machine's GPUs
counted once."""

from __future__ import annotations

import os
import re
import socket
import tempfile
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hpnet.errors import InputError

if TYPE_CHECKING:
    from hpnet.check.model import RankFacts
    from hpnet.node.versions import Versions

__all__ = ["job_directory", "job_name", "job_nccl", "node_id", "physical_gpus"]


def node_id(environ: Mapping[str, str]) -> str:
    """The node a rank is on: its ``NCCL_HOSTID`` (fake hosts), else the host name."""
    return environ.get("NCCL_HOSTID") or socket.gethostname()


def job_nccl(versions: Versions | None) -> str | None:
    """The NCCL version a node's ranks load: torch's own NCCL where torch names it (the
    wheel it pins), else every NCCL library installed on the node. An image can hold a
    system libnccl2 beside the wheel torch loads (NVIDIA's CUDA images: 2.28.3 from apt
    beside torch's 2.28.9); listing both made one node look like two versions.

    >>> import dataclasses
    >>> from hpnet.node.versions import LibraryInfo, NcclInfo, TorchInfo, Versions
    >>> lib = LibraryInfo(name="libibverbs", path=None)
    >>> apt = NcclInfo(version="2.28.3", path="/usr/lib/libnccl.so.2", source="loader")
    >>> pip = NcclInfo(version="2.28.9", path="/venv/libnccl.so.2", source="wheel")
    >>> v = Versions(nvidia_driver=None, cuda_driver=None, nccl=(apt, pip), torch=None,
    ...     rdma_core=None, libibverbs=lib, librdmacm=lib, providers=(), kernel=None)
    >>> job_nccl(v)
    '2.28.3, 2.28.9'
    >>> torch = TorchInfo(version="2.11.0", cuda="13.0", nccl="2.28.9")
    >>> job_nccl(dataclasses.replace(v, torch=torch))
    '2.28.9'
    """
    if versions is None:
        return None
    if versions.torch is not None and versions.torch.nccl:
        return versions.torch.nccl
    return ", ".join(sorted({str(n.version) for n in versions.nccl if n.version})) or None


def physical_gpus(leaders: Iterable[RankFacts]) -> int:
    """GPUs of the cluster, each machine counted once: fake hosts (NCCL_HOSTID) on one
    machine each see all of its GPUs.

    >>> from hpnet.check.model import RankFacts
    >>> a = RankFacts(rank=0, node="h0", host="m", local_rank=0, nccl_env={}, gpus=4)
    >>> b = RankFacts(rank=2, node="h1", host="m", local_rank=0, nccl_env={}, gpus=4)
    >>> c = RankFacts(rank=4, node="h2", host="n", local_rank=0, nccl_env={}, gpus=8)
    >>> physical_gpus([a, b, c])
    12
    """
    by_host: dict[str, int] = {}
    for fact in leaders:
        by_host[fact.host or fact.node] = max(
            by_host.get(fact.host or fact.node, 0), int(fact.gpus or 0)
        )
    return sum(by_host.values())


def job_directory(keep_dir: str | None, ranks: Mapping[str, str], kind: str = "check-all") -> str:
    """Where this job's ranks keep their files: a new temporary directory, or with
    ``--logs DIR`` the job's own directory in DIR (:func:`job_name`), made if need be.
    ``kind`` names the command (``check-all``, ``isolate``)."""
    if keep_dir is None:
        return tempfile.mkdtemp(prefix=f"hpnet-{kind}-")
    out = os.path.join(keep_dir, job_name(ranks, kind))
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot keep the job's files there: {exc.strerror or exc}",
            code="unwritable",
            where=f"--logs {keep_dir}",
            fix="--logs a directory you own",
        ) from None
    return out


def job_name(ranks: Mapping[str, str], kind: str = "check-all") -> str:
    """The name of a job's directory: after its rendezvous, which every rank of the job
    knows and no other job running at the same time has.

    >>> job_name({"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"})
    'check-all-10.0.0.1-29500'
    >>> job_name({"MASTER_ADDR": "fe80::1%eth0", "MASTER_PORT": "29500"})
    'check-all-fe80_1_eth0-29500'
    """
    return f"{kind}-" + re.sub(
        r"[^A-Za-z0-9_.-]+", "_", f"{ranks['MASTER_ADDR']}-{ranks['MASTER_PORT']}"
    )
