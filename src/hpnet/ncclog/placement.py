"""Where each rank of an NCCL log runs: machines, NCCL hosts, communicators.

Pure functions over :class:`~hpnet.ncclog.model.ProcessLog` values, for
:mod:`hpnet.ncclog.report`. A machine is a host name, told apart by address when two
machines share one; an NCCL host is a machine and its ``NCCL_HOSTID``. Ranks are
placed through the communicators' init lines (keyed by commId, or by a split's parent
and color), or, when a log has none, through which process printed which rank.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from hpnet.ncclog.model import Connection, Membership, ProcessLog, TransportKind

__all__ = [
    "INTRA_KINDS",
    "Alike",
    "Comm",
    "Placement",
    "by_host",
    "crowded_hosts",
    "machine_labels",
    "peer_rank",
    "shared_gpus",
]

#: transports that stay inside an NCCL host (p2p.cc / shm.cc refuse other hosts' peers)
INTRA_KINDS = frozenset({TransportKind.P2P, TransportKind.SHM, TransportKind.NVLS})


def _address(bootstrap: str) -> str | None:
    """``eth0:10.0.0.5<0>`` -> ``10.0.0.5``."""
    found = re.match(r"[^:]+:(.+?)(?:<\d+>)?(?: \(OOB\))?$", bootstrap)
    return found.group(1) if found else None


def machine_labels(processes: Sequence[ProcessLog]) -> dict[str, str]:
    """process key -> machine label; a host name that two machines share is told apart
    by address: processes of one name whose addresses (bootstrap, socket interfaces)
    overlap are one machine, disjoint addresses are two (``host@address``)."""
    named: dict[str, list[tuple[str, set[str]]]] = {}
    labels = {}
    for p in processes:
        labels[p.key] = p.host or p.key
        if p.host:
            found = {a for a in (_address(b) for b in p.bootstrap) if a}
            found |= {n.address.split("<")[0] for n in p.socket_interfaces if n.address}
            found.discard("127.0.0.1")
            named.setdefault(p.host, []).append((p.key, found))
    for host, members in named.items():
        machines = _overlapping([found for _, found in members if found])
        if len(machines) <= 1:
            continue
        label = {address: f"{host}@{min(m)}" for m in machines for address in m}
        for key, found in members:
            if found:  # a process that shows no address stays under the bare name
                labels[key] = label[next(iter(found))]
    return labels


def _overlapping(sets: Iterable[set[str]]) -> list[set[str]]:
    """Merge the sets that share an element (connected components, by union-find).

    >>> sorted(map(sorted, _overlapping([{"a", "b"}, {"c"}, {"b", "d"}])))
    [['a', 'b', 'd'], ['c']]
    """
    parent: dict[str, str] = {}

    def root(item: str) -> str:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for found in sets:
        items = sorted(found)
        for item in items:
            parent.setdefault(item, item)
        for item in items[1:]:
            parent[root(item)] = root(items[0])
    groups: dict[str, set[str]] = {}
    for item in parent:
        groups.setdefault(root(item), set()).add(item)
    return list(groups.values())


class Placement:
    """Where each rank runs: through communicator membership, else through the
    processes that printed it."""

    def __init__(
        self,
        processes: Sequence[ProcessLog],
        machines: dict[str, str],
        placements: Sequence[tuple[int, str, int, int]] = (),
    ) -> None:
        self.machines = machines
        #: nccl-tests' "# Rank N ... Pid P on HOST" table: rank -> "host:pid"
        self.tested = {rank: f"{host}:{pid}" for rank, host, pid, _ in placements}
        self.comms: dict[str, Comm] = {}
        #: process key -> rank -> the communicators in which that process holds it
        holds: dict[str, dict[int, dict[Comm, None]]] = {}
        for process in processes:
            for membership, key in _comm_keys(process):
                comm = self.comms.get(key)
                if comm is None:
                    comm = self.comms[key] = Comm(key, membership.nranks)
                if comm.members.setdefault(membership.rank, process) is process:
                    mine = holds.setdefault(process.key, {}).setdefault(membership.rank, {})
                    mine[comm] = None
                comm.by_rank.setdefault(membership.rank, membership)
                comm.memberships.append(membership)
        #: communicators that no connection line tells apart, each set once
        self.alike: dict[tuple[object, ...], Alike] = {}
        for comm in self.comms.values():
            shape = (comm.nranks, *_members_shape(comm))
            found = self.alike.get(shape)
            if found is None:
                found = self.alike[shape] = Alike(comm)
            comm.alike = found
            found.comms.append(comm)
        #: process key -> rank -> the sets of alike communicators in which it holds it
        self._by_rank = {
            key: {rank: list(dict.fromkeys(c.alike for c in held)) for rank, held in ranks.items()}
            for key, ranks in holds.items()
        }
        # without init lines: the processes that printed each rank's lines
        self.printers: dict[int, set[str]] = {}
        for process in processes:
            for connection in process.connections:
                self.printers.setdefault(connection.printing_rank, set()).add(process.key)
        self.by_key = {p.key: p for p in processes}
        self._hosts: dict[str, str] = {}
        self._comms_of: dict[tuple[object, ...], tuple[Alike, ...]] = {}

    def nccl_host(self, process: ProcessLog) -> str:
        host = self._hosts.get(process.key)
        if host is None:  # asked for once per connection and communicator: kept
            machine = self.machines[process.key]
            host = f"{machine}/{process.host_id}" if process.host_id else machine
            self._hosts[process.key] = host
        return host

    def comms_of(self, process: ProcessLog, connection: Connection) -> Sequence[Alike]:
        """The communicators a connection line of ``process`` can belong to, as sets of
        alike ones (the same answer for every line that shares what it is judged by:
        kept)."""
        top = max(connection.src, connection.dst)
        wanted = peer_rank(connection)
        asked = (
            process.key, connection.printing_rank, wanted, top, _peer_device(connection),
            _fixed_side(connection),
        )  # fmt: skip
        known = self._comms_of.get(asked)
        if known is None:
            known = self._comms_of[asked] = tuple(self._fitting(process, connection))
        return known

    def _fitting(self, process: ProcessLog, connection: Connection) -> list[Alike]:
        top = max(connection.src, connection.dst)
        by_rank = self._by_rank.get(process.key, {})
        wanted = peer_rank(connection)
        # the line prints the peer's GPU ([nvmlDev] 2.18.3+, [busId] before): a
        # communicator whose member of that rank holds another GPU is not this line's
        fitting = [
            alike
            for alike in by_rank.get(connection.printing_rank, ())
            if alike.nranks > top and _same_gpu(alike.by_rank.get(wanted), _peer_device(connection))
        ]
        intra = _fixed_side(connection)
        if intra is None or sum(len(alike.comms) for alike in fitting) <= 1:
            return fitting
        # several communicators give this process that rank: keep those where the
        # peer sits where the transport says (P2P/SHM: the same NCCL host). When none
        # does, the line belongs to a communicator whose init lines the log lacks: its
        # peer is unknown (a NET line then counts as inter-node, as without init lines),
        # never borrowed from a communicator that contradicts the transport
        plausible = []
        here = self.nccl_host(process)
        for alike in fitting:
            peer = alike.members.get(wanted)
            if peer is None or intra == (self.nccl_host(peer) == here):
                plausible.append(alike)
        return plausible

    def peer(
        self, process: ProcessLog, connection: Connection, comms: Sequence[Alike]
    ) -> ProcessLog | None:
        rank = peer_rank(connection)
        if rank < 0:
            return None
        for alike in comms:
            found = alike.members.get(rank)
            if found is not None:
                return found
        tested = self.by_key.get(self.tested.get(rank, ""))
        if tested is not None:
            return tested
        if not self.comms:
            printers = self.printers.get(rank, set())
            if len(printers) == 1:
                return self.by_key[next(iter(printers))]
        return None


def _comm_keys(process: ProcessLog) -> list[tuple[Membership, str]]:
    """Each membership of ``process`` with the key that names its communicator in
    every member process: the commId, else the split's parent and color, else the
    how-many-th communicator of that size (releases that print no commId)."""
    ordinal: dict[tuple[object, ...], int] = {}
    #: this process's communicator addresses -> their keys (a split's parent)
    keys: dict[str, str] = {}
    found = []
    for membership in process.memberships:
        if membership.nranks <= 0 or membership.rank < 0:
            continue
        if membership.comm_id:
            key = membership.comm_id
        elif membership.parent is not None and membership.color is not None:
            # ncclCommSplit children print no usable commId (log.ZERO_ID_HASH, none
            # from 2.23.4): the parent, the color and the how-many-th such split name
            # them the same in every member process
            parent = keys.get(membership.parent)
            what = (parent or "?", membership.color, membership.nranks)
            count = ordinal[what] = ordinal.get(what, 0) + 1
            key = (
                f"{parent} color {membership.color}"
                if parent
                else f"split color {membership.color} nranks={membership.nranks}"
            ) + (f" #{count}" if count > 1 or not parent else "")
        else:
            count = ordinal[(membership.nranks,)] = ordinal.get((membership.nranks,), 0) + 1
            key = f"nranks={membership.nranks} #{count}"
        keys[membership.comm] = key
        found.append((membership, key))
    return found


class Comm:
    def __init__(self, key: str, nranks: int) -> None:
        self.key = key
        self.nranks = nranks
        self.members: dict[int, ProcessLog] = {}
        self.by_rank: dict[int, Membership] = {}
        self.memberships: list[Membership] = []
        #: the communicators no connection line tells apart from this one
        self.alike: Alike


class Alike:
    """Communicators that no connection line can tell apart: of one size, each rank the
    same process on the same GPU (a long job re-creates its groups again and again). A
    line fits all of them or none (:meth:`Placement.comms_of` judges a line by a
    communicator's size and the process and GPU of each rank), so they hold the same
    connections: placed once for all of them; what their members say (shared GPUs,
    hosts crowded beyond NCCL's count) is found once too."""

    __slots__ = ("by_rank", "comms", "connections", "members", "nranks")

    def __init__(self, comm: Comm) -> None:
        self.nranks = comm.nranks
        self.members = comm.members
        self.by_rank = comm.by_rank
        self.comms: list[Comm] = []
        #: (process, connection, between hosts) in the order of the processes
        self.connections: list[tuple[ProcessLog, Connection, bool]] = []


def _members_shape(comm: Comm) -> Iterable[tuple[object, ...]]:
    """Each rank of ``comm``, in the order it was placed: the process that holds it, the
    GPU its init line names (what :func:`_same_gpu` compares) and the ranks NCCL counted
    on its host (what :func:`crowded_hosts` compares)."""
    for rank, process in comm.members.items():
        member = comm.by_rank[rank]
        yield (
            rank, process.key, member.bus_id, member.nvml_dev, member.cuda_dev,
            member.local_ranks,
        )  # fmt: skip


def peer_rank(connection: Connection) -> int:
    return connection.dst if connection.printing_rank == connection.src else connection.src


def _peer_device(connection: Connection) -> str:
    if connection.printing_rank == connection.src:
        return connection.dst_device
    return connection.src_device


def _same_gpu(member: Membership | None, printed: str) -> bool:
    """Can ``printed`` (a connection line's ``[...]``) name ``member``'s GPU?

    Only judged where the init line names the GPU by bus id (2.6+): the brackets then
    hold that bus id (up to 2.18.1) or the nvmlDev (2.18.3+); older init lines print
    neither, and their brackets cannot be compared.
    """
    if member is None or not printed or not member.bus_id:
        return True
    return _names_gpu(member.bus_id, member.nvml_dev, member.cuda_dev, printed)


@functools.lru_cache(maxsize=16_384)
def _names_gpu(bus_id: str, nvml_dev: int | None, cuda_dev: int | None, printed: str) -> bool:
    # a few GPUs per host, asked about once per connection line: cached
    ids = {str(v) for v in (nvml_dev, cuda_dev) if v is not None}
    ids.add(bus_id.lower().lstrip("0") or "0")
    return printed in ids or (printed.lower().lstrip("0") or "0") in ids


def _fixed_side(connection: Connection) -> bool | None:
    """True: a transport that stays inside an NCCL host (P2P, SHM, NVLS); False: one
    that usually leaves it (NET); None: either (``P2P/MNNVL``, multi-node NVLink)."""
    transport = connection.transport
    if transport.kind is TransportKind.P2P and transport.name == "MNNVL":
        return None
    return transport.kind in INTRA_KINDS


def by_host(connection: Connection) -> bool:
    """Whether the side of a connection is decided by where its peer runs."""
    transport = connection.transport
    return transport.kind is TransportKind.NET or _fixed_side(connection) is None


def crowded_hosts(place: Placement) -> dict[str, str]:
    """NCCL hosts (labels) that hold more ranks of a communicator than NCCL counted on
    one of its hosts: several machines under one name, or an NCCL_HOSTID the log does
    not show. -> why, in a sentence.

    NCCL's ``nNodes`` / ``localRanks`` (init.cc:1095-1171 @2.28.9) count the islands of
    its ring graph, not hostHash values: ranks of one host that P2P and SHM cannot join
    are islands of their own (``localRanks 1`` with NCCL_P2P_DISABLE and
    NCCL_SHM_DISABLE). An island of two or more ranks proves that P2P or SHM worked on
    that host; with SHM allowed NCCL joins every rank of one host that way, so more
    ranks under the name than in the island means more than one NCCL host.
    """
    crowded: dict[str, str] = {}
    # what a communicator's members say is said alike by each of its alike ones
    islands: dict[int, list[tuple[str, int, int]]] = {}
    for comm in place.comms.values():
        found = islands.get(id(comm.alike))
        if found is None:
            found = islands[id(comm.alike)] = _islands_exceeded(place, comm.alike)
        for host, num_ranks, local in found:
            if host not in crowded:
                nnodes = max((m.nnodes or 0 for m in comm.memberships), default=0)
                crowded[host] = (
                    f"{num_ranks} ranks of comm {comm.key} under {host}, where NCCL "
                    f"counted {local} ranks per host ({nnodes or '?'} hosts)"
                )
    return crowded


def _islands_exceeded(place: Placement, alike: Alike) -> list[tuple[str, int, int]]:
    """The NCCL hosts that hold more of a communicator's ranks than its largest island
    there (with SHM allowed): (host, ranks there, ranks per island)."""
    on_host: dict[str, list[int]] = {}
    for rank, process in alike.members.items():
        on_host.setdefault(place.nccl_host(process), []).append(rank)
    exceeded = []
    for host, ranks in on_host.items():
        local = max((alike.by_rank[r].local_ranks or 0 for r in ranks), default=0)
        if local < 2 or len(ranks) <= local:
            continue
        shm_off = any(
            dict(alike.members[r].env).get("NCCL_SHM_DISABLE", "0") not in ("", "0") for r in ranks
        )
        if not shm_off:
            exceeded.append((host, len(ranks), local))
    return exceeded


def shared_gpus(place: Placement) -> list[tuple[str, tuple[ProcessLog, ...]]]:
    """Ranks of one communicator on the same GPU of one NCCL host (the same ``busId`` in
    their init lines, 2.6+): NCCL refuses that ("Duplicate GPU detected", init.cc), so
    the communicator cannot come up. One sentence per GPU so shared, with the processes
    of its ranks."""
    found = []
    shared: dict[int, list[tuple[str, str, list[int]]]] = {}
    for comm in place.comms.values():
        gpus = shared.get(id(comm.alike))
        if gpus is None:
            gpus = shared[id(comm.alike)] = _gpus_shared(place, comm.alike)
        for host, bus_id, ranks in gpus:
            found.append(
                (
                    f"ranks {', '.join(map(str, sorted(ranks)))} of communicator {comm.key} "
                    f"are all on GPU busId {bus_id} of {host}",
                    tuple(comm.alike.members[r] for r in sorted(ranks)),
                )
            )
    return found


def _gpus_shared(place: Placement, alike: Alike) -> list[tuple[str, str, list[int]]]:
    """The GPUs that more than one rank of a communicator holds: (host, busId, ranks)."""
    by_gpu: dict[tuple[str, str], list[int]] = {}
    for rank, member in alike.by_rank.items():
        process = alike.members.get(rank)
        # a line without its host:pid prefix does not say where it ran: processes of
        # several hosts read as one
        if process is None or not member.bus_id or process.host is None:
            continue
        gpu = (place.nccl_host(process), member.bus_id.lower().lstrip("0") or "0")
        by_gpu.setdefault(gpu, []).append(rank)
    return [
        (host, bus_id, ranks)
        for (host, bus_id), ranks in by_gpu.items()
        if len(ranks) > 1 and not _passed_duplicate_check(alike, ranks)
    ]


def _passed_duplicate_check(alike: Alike, ranks: Sequence[int]) -> bool:
    """Did NCCL accept these ranks on one GPU? It refuses two ranks of one hostHash on one
    busId ("Duplicate GPU detected", init.cc) before it prints a rank's ``nNodes`` line or
    completes its init: ranks that got that far were different NCCL hosts (NCCL_HOSTID
    the log does not echo), which crowded hosts and fake hosts say."""
    return any(
        member is not None and (member.completed or member.nnodes is not None)
        for comm in alike.comms
        for member in (comm.by_rank.get(rank) for rank in ranks)
    )
