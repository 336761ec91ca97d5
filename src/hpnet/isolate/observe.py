"""What each rank's NCCL log shows for one round of ``hpnet isolate``, and the
configuration faults it proves.

Every rank writes its NCCL debug output (``NCCL_DEBUG=INFO``) to its own file; after
each round the worker cuts the part that round wrote into ``round<N>/rank<R>.log`` and
reads it with hpnet's log pipeline (:func:`hpnet.ncclog.report.analyse`), so a quoted
line is a line of that file. A rank's :class:`Observation` is what its process chose:
the network module (``IB``, ``Socket``, a plugin), the NICs, GPUDirect RDMA on its
inter-node connections.

A configuration fault is a rank that differs from what the other ranks of the job did
in the same round (:func:`config_issues`): sockets where most ranks used an RDMA
network, no GPUDirect RDMA where most had it, another NIC than the other nodes' ranks of
the same local GPU. The majority is the reference because the job's ranks were started
with one intent; a job where every rank fell back to sockets is the node check's
business (``hpnet check --all`` judges the transport against the profile).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, TypeVar

from hpnet.isolate.model import ConfigIssue

__all__ = ["Observation", "config_issues", "observe_log"]

SOCKET = "Socket"

T = TypeVar("T", bound=Hashable)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Observation:
    """One rank's process in one round, as its log shows it."""

    rank: int
    node: str
    rail: int  # the local rank: GPU ``rail`` of the node
    network: tuple[str, ...] = ()  # NCCL's network module(s): IB, Socket, a plugin's
    nics: tuple[str, ...] = ()  # the NICs it used for the network
    inter_node: tuple[str, ...] = ()  # transports towards other nodes: NET/IB/GDRDMA ...
    gdr: str | None = None  # "yes", "no", "receive only", "send only", "partial"
    evidence: tuple[str, ...] = ()  # ``file:line: text`` of what it chose

    def to_data(self) -> dict[str, object]:
        """JSON-ready (tuples as lists), as ranks send it to rank 0."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Observation:
        """Back from :meth:`to_data` (lists become tuples again: the majority rules
        compare them as values)."""
        fields: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items()
        }
        return cls(**fields)

    @property
    def seen(self) -> bool:
        """The log shows a connection to another node (else there is nothing to judge)."""
        return bool(self.inter_node)


def _plain(value: object) -> object:
    return list(value) if isinstance(value, tuple) else value


def observe_log(path: str, *, rank: int, node: str, rail: int) -> Observation:
    """The rank's observation from its round file (an empty or unreadable file: nothing
    seen, never an error: the round's numbers stand without it)."""
    from hpnet.ncclog.facts import parse_nccl_log  # noqa: PLC0415
    from hpnet.ncclog.report import analyse  # noqa: PLC0415

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            report = analyse(parse_nccl_log(handle, source=path))
    except OSError:
        return Observation(rank=rank, node=node, rail=rail)
    rows = [row for row in report.ranks if row.inter_node or row.network]
    if not rows:
        return Observation(rank=rank, node=node, rail=rail)
    row = rows[0]
    return Observation(
        rank=rank,
        node=node,
        rail=rail,
        network=row.network,
        nics=row.nics,
        inter_node=row.inter_node,
        gdr=row.gdr,
        evidence=row.chose_evidence[:3],
    )


def _majority(values: Iterable[T]) -> T | None:
    """The value more than half of ``values`` share; None without one."""
    counts = Counter(values)
    total = sum(counts.values())
    if not counts:
        return None
    value, count = counts.most_common(1)[0]
    return value if count * 2 > total else None


def config_issues(observations: Sequence[Observation]) -> tuple[ConfigIssue, ...]:
    """The ranks whose choices differ from the job's majority, one issue per rank and
    kind, in rank order."""
    seen = [o for o in observations if o.seen]
    network = _majority(o.network for o in seen)
    gdr = _majority(o.gdr == "yes" for o in seen if o.gdr is not None)
    # NCCL names its NICs once per process (NET/IB : Using [0]mlx5_0:1/IB ...), at the
    # first communicator: a rank whose first test is in a later round shows names where
    # the other ranks' round files show only NET/<net>/<index> ("NIC 0"). Names are
    # compared with names, indexes with indexes, never one with the other.
    rails: dict[tuple[int, bool], tuple[str, ...] | None] = {}
    for rail, named in {(o.rail, _named(o.nics)) for o in seen}:
        rails[(rail, named)] = _majority(
            o.nics for o in seen if o.rail == rail and o.nics and _named(o.nics) == named
        )
    issues: list[ConfigIssue] = []
    for o in sorted(seen, key=lambda o: o.rank):
        if network is not None and o.network != network:
            issues.append(_network_issue(o, network))
        elif gdr is True and o.gdr == "no":
            issues.append(_gdr_issue(o))
        expected = rails.get((o.rail, _named(o.nics)))
        if expected is not None and o.nics and o.nics != expected and o.network == network:
            issues.append(_nic_issue(o, expected))
    return tuple(issues)


def _named(nics: tuple[str, ...]) -> bool:
    """The NICs by name (``mlx5_0:1``, ``eth0``), not by NCCL's index alone (``NIC 0``,
    hpnet.ncclog.transports.nic_names: the process's log did not name them)."""
    return not all(n.startswith("NIC ") for n in nics)


def _issue(o: Observation, code: str, what: str, fix: str) -> ConfigIssue:
    """A configuration issue on ``o``'s rank: its node and rail, its log's lines."""
    return ConfigIssue(node=o.node, rail=o.rail, code=code, what=what, evidence=o.evidence, fix=fix)


def _network_issue(o: Observation, network: tuple[str, ...]) -> ConfigIssue:
    mine, usual = "/".join(o.network) or "none", "/".join(network)
    if SOCKET in o.network and SOCKET not in network:
        return _issue(
            o,
            "socket-fallback",
            f"rank {o.rank} went over NET/Socket where the job's other ranks used NET/{usual}",
            f"on {o.node}: hpnet doctor (the RDMA devices in the container, "
            "NCCL_IB_HCA / NCCL_IB_DISABLE / NCCL_NET as on the other nodes), then rerun",
        )
    return _issue(
        o,
        "unexpected-network",
        f"rank {o.rank} used NET/{mine} where the job's other ranks used NET/{usual}",
        f"on {o.node}: give NCCL the same network as the other nodes (NCCL_NET, "
        "NCCL_NET_PLUGIN and the plugin's library: hpnet env on both and compare)",
    )


def _gdr_issue(o: Observation) -> ConfigIssue:
    return _issue(
        o,
        "no-gdr",
        f"rank {o.rank}'s inter-node connections ran without GPUDirect RDMA "
        f"({', '.join(o.inter_node)}) where the job's other ranks had it",
        f"on {o.node}: load nvidia-peermem (or use DMA-BUF) and check "
        "NCCL_NET_GDR_LEVEL / NCCL_NET_GDR_READ; hpnet doctor there names which",
    )


def _nic_issue(o: Observation, expected: tuple[str, ...]) -> ConfigIssue:
    return _issue(
        o,
        "unexpected-nic",
        f"rank {o.rank} (GPU {o.rail}) used {', '.join(o.nics)} where GPU {o.rail} "
        f"of the other nodes used {', '.join(expected)}",
        f"on {o.node}: NCCL_IB_HCA as on the other nodes, and the GPU-NIC affinity "
        "(hpnet detect) the same",
    )
