"""What a rank of a job says about itself and its node, gathered one way for every
command run as the job's ranks (``hpnet check --all``, ``hpnet isolate``): where it
runs (:class:`RankPlace`), the node's inventory, the NCCL variables it received, the
NCCL its node's ranks load; and the cluster's GPUs, each machine counted once.

A node is what NCCL takes for one: ``NCCL_HOSTID`` when set (fake hosts: several
"nodes" on one machine), else the host name (NCCL's getHostHash, src/misc/utils.cc).
"""

from __future__ import annotations

import dataclasses
import socket
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.node.versions import Versions

__all__ = [
    "PER_RANK",
    "RankPlace",
    "installed_nccl",
    "job_nccl",
    "nccl_environment",
    "node_id",
    "node_inventory",
    "physical_gpus",
]

#: NCCL variables whose value differs between the ranks of a job by design (each fake
#: host its own NCCL_HOSTID, each rank its own debug file): never a disagreement
PER_RANK = frozenset({"NCCL_HOSTID", "NCCL_DEBUG_FILE"})


def node_id(environ: Mapping[str, str]) -> str:
    """The node a rank is on: its ``NCCL_HOSTID`` (fake hosts), else the host name."""
    return environ.get("NCCL_HOSTID") or socket.gethostname()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankPlace:
    """Where one rank of a job runs."""

    rank: int
    node: str  # :func:`node_id`
    host: str  # the machine's own name (fake hosts share it)
    local_rank: int  # its place among its node's ranks (a rail, in isolate's words)

    @classmethod
    def of(cls, environ: Mapping[str, str], ranks: Mapping[str, str]) -> RankPlace:
        """This rank's place from its environment and the launcher's rank variables
        (:func:`hpnet.bench.ranks.launcher_ranks`; no ``LOCAL_RANK``: 0).

        >>> place = RankPlace.of({"NCCL_HOSTID": "h1"}, {"RANK": "3", "LOCAL_RANK": "1"})
        >>> place.rank, place.node, place.local_rank
        (3, 'h1', 1)
        """
        return cls(
            rank=int(ranks["RANK"]),
            node=node_id(environ),
            host=socket.gethostname(),
            local_rank=int(ranks.get("LOCAL_RANK", "0")),
        )


def node_inventory(environ: Mapping[str, str], *, gpus: bool = True) -> NodeInventory:
    """This node as ``hpnet detect`` sees it from a rank (its environment, this
    Python's import path); ``gpus=False`` skips NVML (ranks on CPUs)."""
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415

    return detect(DetectOptions(gpus=gpus), env=dict(environ), python_path=sys.path)


def nccl_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The NCCL variables a rank received, by name, as they may be shown: secrets
    ``<redacted>`` (:func:`hpnet.secrets.redact`), a name no shell or NCCL can spell
    left out (:func:`hpnet.nccl.rules.is_variable_name`), and :data:`PER_RANK` too.

    >>> nccl_environment({"NCCL_IB_HCA": "mlx5", "NCCL_HOSTID": "h1", "NCCL_RAS_TOKEN": "x",
    ...                   "NCCL_X$(id)": "1", "PATH": "/bin"})
    {'NCCL_IB_HCA': 'mlx5', 'NCCL_RAS_TOKEN': '<redacted>'}
    """
    from hpnet.nccl.rules import is_variable_name  # noqa: PLC0415
    from hpnet.secrets import redact  # noqa: PLC0415

    return {
        name: redact(name, value)
        for name, value in sorted(environ.items())
        if name.startswith("NCCL_") and name not in PER_RANK and is_variable_name(name)
    }


def installed_nccl(versions: Versions | None) -> str | None:
    """Every NCCL library version installed on the node, joined (``2.28.3, 2.28.9``);
    None where none was found."""
    if versions is None:
        return None
    return ", ".join(sorted({str(n.version) for n in versions.nccl if n.version})) or None


def job_nccl(versions: Versions | None) -> str | None:
    """The NCCL version a node's ranks load: torch's own NCCL where torch names it (the
    wheel it pins), else every NCCL library installed on the node
    (:func:`installed_nccl`). An image can hold a system libnccl2 beside the wheel torch
    loads (NVIDIA's CUDA images: 2.28.3 from apt beside torch's 2.28.9); listing both
    made one node look like two versions.

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
    if versions is not None and versions.torch is not None and versions.torch.nccl:
        return versions.torch.nccl
    return installed_nccl(versions)


class _NodeGpus(Protocol):
    """A node's first rank's report, as far as :func:`physical_gpus` reads it."""

    @property
    def node(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def gpus(self) -> int | None: ...


def physical_gpus(leaders: Iterable[_NodeGpus]) -> int:
    """GPUs of the cluster, each machine counted once: fake hosts (NCCL_HOSTID) on one
    machine each see all of its GPUs.

    >>> from types import SimpleNamespace as Leader
    >>> physical_gpus([Leader(node="h0", host="m", gpus=4), Leader(node="h1", host="m", gpus=4),
    ...                Leader(node="h2", host="n", gpus=8)])
    12
    """
    by_host: dict[str, int] = {}
    for fact in leaders:
        by_host[fact.host or fact.node] = max(
            by_host.get(fact.host or fact.node, 0), int(fact.gpus or 0)
        )
    return sum(by_host.values())
