"""What each communicator of a log used: its hosts, transports inside and between
hosts, NICs, GPUDirect RDMA, and whether every member completed its init (the
``communicators`` of ``hpnet verify``'s report)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hpnet.ncclog.model import Connection, ProcessLog
from hpnet.ncclog.placement import Alike, Placement
from hpnet.ncclog.transports import gdr_state, natural_sorted, nic_names, transport_label, uniq

__all__ = ["CommSummary", "comm_summaries"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CommSummary:
    """One communicator as far as the log shows it."""

    id: str  # commId / commHash, or "nranks=N #k" when the release prints none
    nranks: int
    ranks_seen: int
    hosts: tuple[str, ...]
    intra_node: tuple[str, ...]
    inter_node: tuple[str, ...]
    nics: tuple[str, ...]
    gdr: str | None
    init_complete: bool
    aborted: bool
    num_connections: int


def comm_summaries(place: Placement, machines: Mapping[str, str]) -> list[CommSummary]:
    """One summary per communicator: its hosts, transports, NICs, GPUDirect RDMA and
    whether every member completed its init. What follows from its members and
    connections is found once for the communicators that share them
    (:class:`~hpnet.ncclog.placement.Alike`: a long job's groups, created again and
    again)."""
    # a long job's communicators hold the same processes' connections again and again:
    # a NIC's name and a transport's label are found once each
    names_of: dict[tuple[str, str], list[str]] = {}
    label_of: dict[tuple[str, bool], str] = {}
    shared: dict[int, _Shared] = {}
    summaries = []
    for comm in place.comms.values():
        alike = comm.alike
        found = shared.get(id(alike))
        if found is None:
            found = shared[id(alike)] = _shared(alike, machines, names_of, label_of)
        summaries.append(
            CommSummary(
                id=comm.key,
                nranks=comm.nranks,
                ranks_seen=len(comm.members),
                hosts=found.hosts,
                intra_node=found.intra_node,
                inter_node=found.inter_node,
                nics=found.nics,
                gdr=found.gdr,
                init_complete=all(m.completed for m in comm.memberships),
                aborted=any(m.aborted for m in comm.memberships),
                num_connections=len(alike.connections),
            )
        )
    return summaries


@dataclasses.dataclass(frozen=True, slots=True)
class _Shared:
    """What alike communicators' summaries share."""

    hosts: tuple[str, ...]
    intra_node: tuple[str, ...]
    inter_node: tuple[str, ...]
    nics: tuple[str, ...]
    gdr: str | None


def _shared(
    alike: Alike,
    machines: Mapping[str, str],
    names_of: dict[tuple[str, str], list[str]],
    label_of: dict[tuple[str, bool], str],
) -> _Shared:
    # one pass over the connections, keeping what the summary depends on: each
    # process's transports between hosts (their NICs), each transport inside and
    # between hosts (their labels), in the order they first appear, and each
    # transport and direction between hosts (GPUDirect RDMA: all, none or which way)
    inter: dict[tuple[str, str], tuple[ProcessLog, Connection]] = {}
    raws: tuple[dict[str, Connection], dict[str, Connection]] = ({}, {})
    ways: dict[tuple[str, str | None], Connection] = {}
    for p, c, is_inter in alike.connections:
        raw = c.transport.raw
        raws[is_inter].setdefault(raw, c)
        if is_inter:
            inter.setdefault((p.key, raw), (p, c))
            ways.setdefault((raw, c.direction), c)
    nics: dict[str, None] = {}
    for key, (p, c) in inter.items():
        names = names_of.get(key)
        if names is None:
            names = names_of[key] = nic_names(p, [c])
        nics.update(dict.fromkeys(names))
    labels = {}
    for between, seen in ((False, raws[False]), (True, raws[True])):
        found: dict[str, None] = {}
        for raw, c in seen.items():
            label = label_of.get((raw, between))
            if label is None:
                label = label_of[raw, between] = transport_label(c, between)
            found[label] = None
        labels[between] = uniq(found)
    return _Shared(
        hosts=uniq(machines[p.key] for p in alike.members.values()),
        intra_node=labels[False],
        inter_node=labels[True],
        nics=natural_sorted(nics),
        # a label, NICs and GPUDirect RDMA follow from a connection's transport (and
        # direction): one connection of each says what all of them do
        gdr=gdr_state(list(ways.values())),
    )
