"""What each communicator of a log used: its hosts, transports inside and between
hosts, NICs, GPUDirect RDMA, and whether every member completed its init (the
``communicators`` of ``hpnet verify``'s report)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hpnet.ncclog.placement import Placement
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
    whether every member completed its init."""
    summaries = []
    # a long job's communicators hold the same processes' connections again and again:
    # a NIC's name and a transport's label are found once each
    names_of: dict[tuple[str, str], list[str]] = {}
    label_of: dict[tuple[str, bool], str] = {}
    for comm in place.comms.values():
        inter_c = [(p, c) for p, c, is_inter in comm.connections if is_inter]
        intra_c = [(p, c) for p, c, is_inter in comm.connections if not is_inter]
        # a connection's raw text is its transport: its NICs and label are found once
        # per process and text, in the order they first appear
        nics: dict[str, None] = {}
        for key, (p, c) in {(p.key, c.transport.raw): (p, c) for p, c in inter_c}.items():
            names = names_of.get(key)
            if names is None:
                names = names_of[key] = nic_names(p, [c])
            nics.update(dict.fromkeys(names))
        labels = {}
        for inter, chosen in ((False, intra_c), (True, inter_c)):
            found: dict[str, None] = {}
            for raw, c in {c.transport.raw: c for _, c in chosen}.items():
                label = label_of.get((raw, inter))
                if label is None:
                    label = label_of[raw, inter] = transport_label(c, inter)
                found[label] = None
            labels[inter] = uniq(found)
        summaries.append(
            CommSummary(
                id=comm.key,
                nranks=comm.nranks,
                ranks_seen=len(comm.members),
                hosts=uniq(machines[p.key] for p in comm.members.values()),
                intra_node=labels[False],
                inter_node=labels[True],
                nics=natural_sorted(nics),
                gdr=gdr_state([c for _, c in inter_c]),
                init_complete=all(m.completed for m in comm.memberships),
                aborted=any(m.aborted for m in comm.memberships),
                num_connections=len(comm.connections),
            )
        )

    return summaries
