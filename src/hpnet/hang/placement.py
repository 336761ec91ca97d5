"""Where each rank of a stuck job ran, by NCCL's own debug log (``NCCL_DEBUG=INFO``, one
file per process as ``hpnet launch --hang-capture`` writes them): its host and NCCL host
id, process, GPU and bus id, the network and NICs NCCL chose, the transports it
connected its peers with, and its WARN lines.

The logs are read by the pipeline ``hpnet verify`` uses (:mod:`hpnet.ncclog`). A
process's rank in the job is its rank in its largest communicator — the default group's,
whose NCCL rank is the global rank — or in the one of the job's size where the dumps
tell it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hpnet.ncclog.model import Membership, NcclLog, ProcessLog

__all__ = ["Place", "logged_world", "places"]

#: WARN lines quoted per rank
MAX_WARNINGS = 3


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Place:
    rank: int
    host: str | None
    host_id: str | None  # NCCL_HOSTID, where the job set it
    pid: int | None
    gpu: int | None  # the CUDA device index NCCL printed (cudaDev)
    bus_id: str | None
    network: str | None  # "IB", "Socket", a plugin's name
    nics: tuple[str, ...]  # "mlx5_0:1/RoCE", "eth0 192.0.2.2"
    transports: tuple[str, ...]  # each "via" value the process printed: "NET/IB/0/GDRDMA"
    warnings: tuple[str, ...]  # "file:line: the WARN line"
    source: str  # the log file

    def describe(self) -> str:
        """``host vm (NCCL host plant-host-1), pid 661, GPU 1 (bus 70), Socket via eth0
        192.0.2.2, transports NET/Socket/0``."""
        parts = [
            f"host {self.host or '?'}" + (f" (NCCL host {self.host_id})" if self.host_id else "")
        ]
        if self.pid is not None:
            parts.append(f"pid {self.pid}")
        if self.gpu is not None:
            parts.append(f"GPU {self.gpu}" + (f" (bus {self.bus_id})" if self.bus_id else ""))
        if self.network:
            parts.append(self.network + (f" via {', '.join(self.nics)}" if self.nics else ""))
        if self.transports:
            parts.append("transports " + ", ".join(self.transports))
        return ", ".join(parts)


def _world(process: ProcessLog, world: int | None) -> Membership | None:
    members = list(process.memberships)
    if world is not None and any(m.nranks == world for m in members):
        members = [m for m in members if m.nranks == world]
    return max(members, key=lambda m: m.nranks, default=None)


def _nics(process: ProcessLog) -> tuple[str, ...]:
    if process.nics:
        return tuple(
            f"{n.name}:{n.port}/{n.link}" if n.port is not None and n.link else n.name
            for n in process.nics
        )
    return tuple(
        f"{n.name} {n.address.split('<')[0]}" if n.address else n.name
        for n in process.socket_interfaces
    )


def places(logs: Sequence[NcclLog], world: int | None = None) -> dict[int, Place]:
    """Global rank -> where it ran, for every process whose log shows its communicator's
    init (the first process of a rank wins)."""
    found: dict[int, Place] = {}
    for log in logs:
        for process in log.processes:
            member = _world(process, world)
            if member is None or member.rank in found:
                continue
            found[member.rank] = Place(
                rank=member.rank,
                host=process.host,
                host_id=process.host_id,
                pid=process.pid,
                gpu=member.cuda_dev,
                bus_id=member.bus_id,
                network=process.networks[0] if process.networks else None,
                nics=_nics(process),
                transports=tuple(sorted({c.transport.raw for c in process.connections})),
                warnings=tuple(w.quote() for w in process.warnings[:MAX_WARNINGS]),
                source=process.sources[0] if process.sources else log.sources[0],
            )
    return dict(sorted(found.items()))


def logged_world(logs: Sequence[NcclLog]) -> int | None:
    """The job's size by NCCL's logs: that of their largest communicator, where one
    communicator of that size (its commId, 2.19+) shows every rank 0..N-1 in these logs
    (the default group's, whose size is the job's); None where none does (part of the
    job, groups of that size that are not the job, or no commId to tell them apart)."""
    members: dict[tuple[str, int], set[int]] = {}
    for log in logs:
        for process in log.processes:
            for m in process.memberships:
                if m.comm_id is not None:
                    members.setdefault((m.comm_id, m.nranks), set()).add(m.rank)
    world = max((n for _, n in members), default=0)
    whole = any(n == world and ranks == set(range(n)) for (_, n), ranks in members.items())
    return world if world and whole else None
