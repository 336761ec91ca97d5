"""What a parsed NCCL log proves: the transport of every connection, per host and
per communicator, the failures it shows, and a verdict.

Pure functions over :class:`~hpnet.ncclog.model.NcclLog`.

Intra- or inter-node is decided per connection. P2P, SHM and NVLS only connect ranks
NCCL sees on one host (``src/transport/p2p.cc`` and ``shm.cc`` refuse peers whose
``hostHash`` differs) — except with multi-node NVLink (MNNVL), where P2P reaches other
hosts (p2p.cc:143-146 @2.28.9 lets a non-local peer through) and prints ``P2P/MNNVL``,
and NVLS spans the NVLink domain. NET usually connects hosts, but also carries traffic
inside a machine when P2P and SHM are unusable. So a NET or ``P2P/MNNVL`` connection
counts as inter-node unless the log places both ranks on the same NCCL host: the same
machine (host name, told apart by address when two machines share a name) and the
same ``NCCL_HOSTID``. Ranks are placed through the communicators' init lines, or, when
a log has none, through which process printed which rank. Where NCCL counted more
ranks on one host than the log's names tell apart (``localRanks``), the peer's host is
not known either.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from hpnet.ncclog.choice import Choice, choice_of, summarize
from hpnet.ncclog.conclusions import (
    env_findings,
    gdr_findings,
    network_findings,
    placement_findings,
)
from hpnet.ncclog.findings import (
    Finding,
    comm_states,
    match_signatures,
    mixed_versions,
    quotes,
    trail_findings,
)
from hpnet.ncclog.model import Connection, NcclLog, ProcessLog, TransportKind
from hpnet.ncclog.placement import (
    INTRA_KINDS,
    Placement,
    by_host,
    crowded_hosts,
    machine_labels,
    shared_gpus,
)

__all__ = [
    "CommSummary",
    "Expectation",
    "ExpectationResult",
    "Finding",
    "HostRow",
    "ProcessRow",
    "VerifyReport",
    "analyse",
    "parse_expectation",
]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ProcessRow:
    """One process: the ranks it held, what it chose, which transports it used."""

    process: str
    host: str | None  # the machine (host name, or name@address when names collide)
    nccl_host: str | None  # NCCL_HOSTID when set
    pid: int | None
    ranks: tuple[str, ...]  # "rank/nranks"
    devices: tuple[int, ...]
    nccl_version: str | None
    version_range: str | None
    network: tuple[str, ...]
    nics: tuple[str, ...]
    bootstrap: tuple[str, ...]
    intra_node: tuple[str, ...]
    inter_node: tuple[str, ...]
    #: GPUDirect RDMA on its inter-node RDMA connections: "yes", "no", "receive only",
    #: "send only", "partial"; None without such connections
    gdr: str | None
    #: what NCCL chose here: ``NET/IB over mlx5_4:1 (RoCE)``; None when its lines do not say
    chose: str | None = None
    #: the NICs NCCL listed for the chosen network (``mlx5_4:1 (RoCE)``), used or not
    nic_list: tuple[str, ...] = ()
    #: the lines that say what it chose (``file:line: text``)
    chose_evidence: tuple[str, ...] = ()
    #: every ``NCCL_X set by environment to Y`` it echoed, as ``NCCL_X=Y``
    env: tuple[str, ...] = ()
    #: in-network reduction (CollNet) devices it set up: ``SHARP on mlx5_5:1``
    collnet: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HostRow:
    host: str
    num_processes: int
    nccl_versions: tuple[str, ...]
    network: tuple[str, ...]
    nics: tuple[str, ...]
    intra_node: tuple[str, ...]
    inter_node: tuple[str, ...]
    gdr: str | None
    #: what NCCL chose on this host (one entry per distinct choice of its processes)
    chose: tuple[str, ...] = ()
    nic_list: tuple[str, ...] = ()
    chose_evidence: tuple[str, ...] = ()


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


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Expectation:
    """``--expect net=ib,gdr``: what the inter-node traffic must have used."""

    net: str | None = None
    gdr: bool | None = None

    def describe(self) -> str:
        parts = [f"net={self.net}"] if self.net else []
        if self.gdr is not None:
            parts.append("gdr" if self.gdr else "no-gdr")
        return ",".join(parts)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ExpectationResult:
    expectation: str
    met: bool
    detail: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class VerifyReport:
    status: str  # PASS, WARN, FAIL, UNKNOWN
    verdict: str
    sources: tuple[str, ...]
    nccl_versions: tuple[str, ...]
    network: tuple[str, ...]
    nics: tuple[str, ...]
    transports: dict[str, tuple[str, ...]]  # intra_node / inter_node -> labels
    ranks: tuple[ProcessRow, ...]
    hosts: tuple[HostRow, ...]
    communicators: tuple[CommSummary, ...]
    findings: tuple[Finding, ...]
    expectations: tuple[ExpectationResult, ...]
    unknowns: tuple[str, ...]  # what this log cannot show, one sentence each
    #: ``NCCL_X=Y`` for every variable NCCL echoed (``set by environment to``), with
    #: how many processes echoed that value
    environment: tuple[str, ...] = ()
    #: the log shows NCCL or the job failing (a failure line, not a costly choice): the
    #: status is then FAIL whatever else the log proves
    fatal: bool = False
    num_lines: int
    num_nccl_lines: int
    num_bytes: int


#: what NCCL and its plugins call networks: IB, Socket, IBext_v8, AWS Libfabric, ...
_NET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.+-]*")


def parse_expectation(text: str) -> Expectation:
    """``net=ib,gdr`` / ``net=socket`` / ``net=AWS Libfabric,no-gdr``.

    >>> parse_expectation("net=ib,gdr")
    Expectation(net='ib', gdr=True)
    """
    net: str | None = None
    gdr: bool | None = None
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if sep and key.strip().lower() == "net" and value.strip():
            if net is not None:
                raise ValueError(f"net= given twice ({net!r} and {value.strip()!r})")
            net = value.strip()
            if not _NET_NAME.fullmatch(net):  # 'net=ib;gdr': a separator, not a name
                raise ValueError(f"{net!r} is not a network name")
        elif not sep and part.lower() in {"gdr", "gdrdma", "no-gdr", "nogdr"}:
            wanted = part.lower() in {"gdr", "gdrdma"}
            if gdr is not None and gdr != wanted:
                raise ValueError("gdr and no-gdr both given")
            gdr = wanted
        else:
            raise ValueError(f"unknown expectation {part!r}")
    if net is None and gdr is None:
        raise ValueError("empty expectation")
    return Expectation(net=net, gdr=gdr)


def net_matches(wanted: str, label: str) -> bool:
    """Does a transport label (``NET/IBext_v8/GDRDMA``) name the network ``wanted``?

    ``ib`` also matches the IBext plugins (NCCL's IB code in a plugin), ``mnnvl`` the
    NVLink transports that cross hosts; comparison ignores case, spaces and punctuation
    (``aws-libfabric``).

    >>> net_matches("ib", "NET/IBext_v8/GDRDMA"), net_matches("socket", "NET/IB")
    (True, False)
    """
    name = label.split("/", 1)[1] if "/" in label else label
    name = name.removesuffix("/GDRDMA")

    def simple(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    if simple(wanted) == "ib":
        return simple(name) == "ib" or simple(name).startswith("ibext")
    if simple(wanted) == "mnnvl":  # multi-node NVLink: P2P/MNNVL, and NVLS across hosts
        return simple(label) in {"p2pmnnvl", "nvls"}
    return simple(name) == simple(wanted)


# ---------------------------------------------------------------- transports


def _label(connection: Connection, inter: bool) -> str:
    label = connection.transport.label
    if inter and connection.transport.gdr:
        label += "/GDRDMA"
    return label


def rdma(label: str) -> bool:
    """A network transport that can do GPUDirect RDMA (everything but TCP sockets)."""
    return label.startswith(("NET/", "CollNet")) and not label.startswith("NET/Socket")


def _nic_names(process: ProcessLog, connections: Iterable[Connection]) -> list[str]:
    names: list[str] = []
    for connection in connections:
        nic = connection.transport.nic
        if connection.transport.kind is not TransportKind.NET or nic is None:
            continue
        listed = (
            process.socket_interfaces if connection.transport.name == "Socket" else process.nics
        )
        match = next((n for n in listed if n.index == nic), None)
        if match is None:
            name = f"NIC {nic}"
        else:
            name = f"{match.name}:{match.port}" if match.port else match.name
        if name not in names:
            names.append(name)
    return names


def _gdr(connections: Sequence[Connection]) -> str | None:
    """GPUDirect RDMA over RDMA network connections, per direction (a NIC may write
    into GPU memory but not read from it: ``GPU Direct RDMA ... read 0``)."""
    net = [
        c
        for c in connections
        if c.transport.kind in (TransportKind.NET, TransportKind.COLLNET)
        and c.transport.name != "Socket"
    ]
    if not net:
        return None
    if all(c.transport.gdr for c in net):
        return "yes"
    if not any(c.transport.gdr for c in net):
        return "no"
    sends = [c.transport.gdr for c in net if c.direction == "send"]
    receives = [c.transport.gdr for c in net if c.direction == "receive"]
    if sends and receives and all(receives) and not any(sends):
        return "receive only"
    if sends and receives and all(sends) and not any(receives):
        return "send only"
    return "partial"


def _uniq(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def _natural(names: Iterable[str]) -> tuple[str, ...]:
    """``mlx5_2:1`` before ``mlx5_10:1``; ``NIC 3`` before ``NIC 12``."""
    return tuple(
        sorted(
            dict.fromkeys(n for n in names if n),
            key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)],
        )
    )


def _range_text(names: Sequence[str]) -> str:
    """``mlx5_0:1, mlx5_1:1, mlx5_2:1`` -> ``mlx5_0..2:1`` when they run in order."""
    if len(names) < 3:
        return ", ".join(names)
    parts = [re.fullmatch(r"(.*?)(\d+)(:\d+)?", n) for n in names]
    matches = [p for p in parts if p]
    if len(matches) == len(names):
        stems = {(p.group(1), p.group(3)) for p in matches}
        numbers = sorted(int(p.group(2)) for p in matches)
        if len(stems) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            stem, port = stems.pop()
            return f"{stem}{numbers[0]}..{numbers[-1]}{port or ''}"
    return ", ".join(names)


# ---------------------------------------------------------------- the report


def analyse(log: NcclLog, expectation: Expectation | None = None) -> VerifyReport:
    """Judge everything :func:`hpnet.ncclog.facts.parse_nccl_log` found."""
    processes = log.processes
    machines = machine_labels(processes)
    place = Placement(processes, machines, log.placements)

    crowded = crowded_hosts(place)
    choices: dict[str, Choice | None] = {p.key: choice_of(p) for p in processes}

    rows = []
    same_host_net: list[tuple[ProcessLog, str]] = []
    split_by_hostid: list[tuple[ProcessLog, str]] = []
    indistinct: list[tuple[ProcessLog, str]] = []
    for process in processes:
        intra: list[Connection] = []
        inter: list[Connection] = []
        for connection in process.connections:
            kind = connection.transport.kind
            comms = place.comms_of(process, connection)
            if by_host(connection):
                # inter-node unless the log places the peer on this NCCL host
                is_inter = True
                peer = place.peer(process, connection, comms)
                if peer is not None and machines[peer.key] == machines[process.key]:
                    said = (
                        f"rank {connection.src} -> {connection.dst} via "
                        f"{connection.transport.raw}: both on {machines[process.key]} "
                        f"(process {process.key})"
                    )
                    host = place.nccl_host(process)
                    if place.nccl_host(peer) != host:
                        if kind is TransportKind.NET:
                            split_by_hostid.append((process, said))
                    elif host in crowded:
                        indistinct.append((process, f"{said}: {crowded[host]}"))
                    else:
                        is_inter = False
                        if kind is TransportKind.NET:
                            same_host_net.append((process, said))
            else:
                is_inter = kind not in INTRA_KINDS
            (inter if is_inter else intra).append(connection)
            for comm in comms:
                comm.connections.append((process, connection, is_inter))
        # NVLS under MNNVL: the multicast group spans the NVLink domain's hosts
        nvls_across = any(m.mnnvl and (m.nnodes or 0) > 1 for m in process.memberships)
        choice = choices[process.key]
        rows.append(
            ProcessRow(
                process=process.key,
                host=machines[process.key] if process.host else None,
                nccl_host=process.host_id,
                pid=process.pid,
                ranks=tuple(f"{m.rank}/{m.nranks}" for m in process.memberships),
                devices=process.devices,
                nccl_version=process.nccl_version,
                version_range=process.version_range,
                network=process.networks or ((choice.network,) if choice else ()),
                nics=_natural(_nic_names(process, inter)),
                bootstrap=process.bootstrap,
                intra_node=_uniq(
                    [_label(c, False) for c in intra]
                    + (["NVLS"] if process.nvls and not nvls_across else [])
                ),
                inter_node=_uniq(
                    [_label(c, True) for c in inter]
                    + (["NVLS"] if process.nvls and nvls_across else [])
                ),
                gdr=_gdr(inter),
                chose=choice.sentence() if choice else None,
                nic_list=choice.nics if choice else (),
                chose_evidence=quotes(choice.lines) if choice else (),
                env=tuple(f"{name}={value}" for name, value in process.env),
                collnet=process.collnet,
            )
        )

    # nccl-tests' device table names processes that wrote no NCCL line of their own
    known = {p.key for p in processes}
    tabled: dict[str, list[tuple[int, str, int, int]]] = {}
    for entry in log.placements:
        _, host, pid, _ = entry
        if f"{host}:{pid}" not in known:
            tabled.setdefault(f"{host}:{pid}", []).append(entry)
    for key, entries in tabled.items():
        rows.append(
            ProcessRow(
                process=key,
                host=entries[0][1],
                nccl_host=None,
                pid=entries[0][2],
                ranks=tuple(str(rank) for rank, _, _, _ in entries),
                devices=tuple(sorted({device for _, _, _, device in entries})),
                nccl_version=None,
                version_range=None,
                network=(),
                nics=(),
                bootstrap=(),
                intra_node=(),
                inter_node=(),
                gdr=None,
            )
        )

    summaries = []
    for comm in place.comms.values():
        inter_c = [(p, c) for p, c, is_inter in comm.connections if is_inter]
        intra_c = [(p, c) for p, c, is_inter in comm.connections if not is_inter]
        nics: list[str] = []
        for p, c in inter_c:
            nics.extend(n for n in _nic_names(p, [c]) if n not in nics)
        summaries.append(
            CommSummary(
                id=comm.key,
                nranks=comm.nranks,
                ranks_seen=len(comm.members),
                hosts=_uniq(machines[p.key] for p in comm.members.values()),
                intra_node=_uniq(_label(c, False) for _, c in intra_c),
                inter_node=_uniq(_label(c, True) for _, c in inter_c),
                nics=_natural(nics),
                gdr=_gdr([c for _, c in inter_c]),
                init_complete=all(m.completed for m in comm.memberships),
                aborted=any(m.aborted for m in comm.memberships),
                num_connections=len(comm.connections),
            )
        )

    hosts: dict[str, list[ProcessRow]] = {}
    for row in rows:
        hosts.setdefault(row.host or "(no host prefix)", []).append(row)
    host_rows = tuple(
        HostRow(
            host=host,
            num_processes=len(members),
            nccl_versions=_uniq(m.nccl_version or "" for m in members),
            network=_uniq(n for m in members for n in m.network),
            nics=_natural(n for m in members for n in m.nics),
            intra_node=_uniq(t for m in members for t in m.intra_node),
            inter_node=_uniq(t for m in members for t in m.inter_node),
            gdr=_combine_gdr([m.gdr for m in members]),
            chose=_uniq(m.chose or "" for m in members),
            nic_list=_uniq(n for m in members for n in m.nic_list),
            chose_evidence=next((m.chose_evidence for m in members if m.chose_evidence), ()),
        )
        for host, members in hosts.items()
    )

    versions = _uniq([r.nccl_version or "" for r in rows] + list(log.bare_versions))
    findings = match_signatures(log)
    mixed = mixed_versions(log, versions)
    if mixed is not None:
        findings.append(mixed)
    findings += network_findings(
        log,
        rows,
        choices,
        socket_expected=bool(
            expectation and expectation.net and net_matches(expectation.net, "NET/Socket")
        ),
    )
    findings += gdr_findings(log, rows)
    findings += env_findings(log, rows)
    findings += placement_findings(
        log,
        same_host_net=same_host_net,
        split_by_hostid=split_by_hostid,
        indistinct=indistinct,
        shared=shared_gpus(place),
    )
    findings += comm_states(
        log,
        [
            (c.id, c.nranks, c.ranks_seen, c.init_complete, c.aborted, c.num_connections)
            for c in summaries
        ],
    )
    named = {key for f in findings if f.severity == "error" for key in f.processes}
    findings += trail_findings(log, named)
    findings.sort(
        key=lambda f: (("error", "warning", "info").index(f.severity), not f.fatal, f.consequence)
    )
    intra_all = _uniq(t for r in rows for t in r.intra_node)
    inter_all = _uniq(t for r in rows for t in r.inter_node)
    results = _check_expectation(expectation, rows) if expectation else ()
    chose = summarize([choices[p.key] for p in processes], len(processes))
    status, verdict = _verdict(rows, findings, results, inter_all, intra_all, chose=chose)
    return VerifyReport(
        status=status,
        verdict=verdict,
        sources=log.sources,
        nccl_versions=versions,
        network=_uniq(n for r in rows for n in r.network),
        nics=_natural(n for r in rows for n in r.nics),
        transports={"intra_node": intra_all, "inter_node": inter_all},
        ranks=tuple(rows),
        hosts=host_rows,
        communicators=tuple(summaries),
        findings=tuple(findings),
        expectations=results,
        unknowns=_unknowns(log, rows, summaries),
        num_lines=log.num_lines,
        num_nccl_lines=log.num_nccl_lines,
        num_bytes=log.num_bytes,
        environment=_environment(processes),
        fatal=any(f.fatal for f in findings),
    )


def _environment(processes: Sequence[ProcessLog]) -> tuple[str, ...]:
    """``NCCL_IB_HCA=mlx5 (8 processes)``: every echoed value, most common first."""
    counts: dict[str, int] = {}
    for process in processes:
        for name, value in process.env:
            counts[f"{name}={value}"] = counts.get(f"{name}={value}", 0) + 1
    total = len(processes)
    return tuple(
        text if count == total else f"{text} ({count} of {total} processes)"
        for text, count in sorted(counts.items())
    )


def _combine_gdr(values: Sequence[str | None]) -> str | None:
    known = {v for v in values if v is not None}
    if not known:
        return None
    return known.pop() if len(known) == 1 else "partial"


def _unknowns(
    log: NcclLog, rows: Sequence[ProcessRow], comms: Sequence[CommSummary]
) -> tuple[str, ...]:
    notes = list(log.input_notes)
    if rows and not any(r.intra_node or r.inter_node for r in rows):
        notes.append(
            "no connection lines: which transport carried traffic cannot be proven "
            "(NCCL prints them at INFO with the INIT subsystem; since 2.22 only once the "
            "first collective runs)"
        )
    if rows and not any(r.chose or r.network for r in rows):
        notes.append(
            "no line says which network module NCCL chose ('Using network X' or a "
            "'NET/<module> : Using [0]...' device list): NCCL prints them at INFO with the "
            "INIT and NET subsystems"
        )
    if any(r.inter_node for r in rows) and any(n.startswith("NIC ") for r in rows for n in r.nics):
        notes.append(
            "the NIC list (NET/IB : Using [0]...) is not in the log: NICs are shown by index"
        )
    partial = [c for c in comms if c.ranks_seen < c.nranks]
    if partial:
        seen = sum(c.ranks_seen for c in partial)
        total = sum(c.nranks for c in partial)
        notes.append(
            f"the log holds {seen} of {total} ranks' init lines for {len(partial)} "
            "communicator(s): what the other ranks chose is not shown"
        )
    if not rows and log.num_nccl_lines == 0:
        notes.append("no NCCL debug lines: was NCCL_DEBUG=INFO set for this run?")
    if log.num_dropped_memberships:
        notes.append(
            f"{log.num_dropped_memberships} communicator membership(s) beyond the first "
            "128 per process are not analysed (a job that re-creates its groups)"
        )
    if log.num_dropped:
        notes.append(f"{log.num_dropped} further evidence line(s) were counted but not kept")
    if (
        any(r.version_range and not r.nccl_version for r in rows)
        and not any(r.nccl_version for r in rows)
        and not log.bare_versions  # rank 0's version line says it
    ):
        ranges = _uniq(r.version_range or "" for r in rows)
        notes.append(
            "no NCCL version line per process (rank 0 printed it alone up to 2.21); "
            f"their lines' formats say NCCL {', '.join(ranges)}"
        )
    return tuple(notes)


def _check_expectation(
    expectation: Expectation, rows: Sequence[ProcessRow]
) -> tuple[ExpectationResult, ...]:
    inter_rows = [r for r in rows if r.inter_node]
    if not inter_rows:
        return (
            ExpectationResult(
                expectation=expectation.describe(),
                met=False,
                detail="no inter-node connection in the log: nothing proves the network",
            ),
        )
    results = []
    if expectation.net:
        wrong = [
            f"{r.process}: {t}"
            for r in inter_rows
            for t in r.inter_node
            if not net_matches(expectation.net, t)
        ]
        results.append(
            ExpectationResult(
                expectation=f"net={expectation.net}",
                met=not wrong,
                detail="every inter-node connection used it"
                if not wrong
                else f"{len(wrong)} used something else: " + "; ".join(wrong[:4]),
            )
        )
    if expectation.gdr is not None:
        rdma_rows = [r for r in inter_rows if r.gdr is not None]
        off = [r.process for r in rdma_rows if r.gdr != "yes"]
        on = [r.process for r in rdma_rows if r.gdr != "no"]
        if expectation.gdr:
            met = bool(rdma_rows) and not off
            detail = (
                "GPUDirect RDMA on every inter-node RDMA connection"
                if met
                else "no inter-node RDMA connection (sockets never use GPUDirect)"
                if not rdma_rows
                else f"GPUDirect RDMA not (fully) used by {len(off)} process(es): "
                f"{', '.join(off[:4])}"
            )
        else:
            met = not on
            detail = "no GPUDirect RDMA" if met else f"GPUDirect RDMA used by {len(on)} process(es)"
        results.append(
            ExpectationResult(
                expectation="gdr" if expectation.gdr else "no-gdr", met=met, detail=detail
            )
        )
    return tuple(results)


def _processes(covered: int, count: int) -> str:
    """``all 16 processes``, ``3 of 8 processes``, ``the one process``."""
    if count == 1:
        return "the one process"
    if covered == count:
        return f"all {count} processes"
    return f"{covered} of {count} processes"


def _verdict(
    rows: Sequence[ProcessRow],
    findings: Sequence[Finding],
    results: Sequence[ExpectationResult],
    inter: Sequence[str],
    intra: Sequence[str],
    *,
    chose: str | None = None,
) -> tuple[str, str]:
    errors = [f for f in findings if f.severity == "error"]
    failed = [r for r in results if not r.met]
    if not rows:
        if errors:
            return "FAIL", f"{errors[0].title} (no NCCL process lines to prove the transport)"
        if findings:  # NCCL's messages pasted without their process prefix
            return "UNKNOWN", (
                f"{findings[0].title} (no NCCL process lines: which network and transports "
                "were used cannot be told)"
            )
        return "UNKNOWN", "no NCCL debug lines found: was NCCL_DEBUG=INFO set for this run?"
    count = len(rows)
    if inter:
        inter_rows = [r for r in rows if r.inter_node]
        nets = _uniq(t.removesuffix("/GDRDMA") for t in inter)
        sentence = f"inter-node traffic used {' and '.join(nets)}"
        gdr = _combine_gdr([r.gdr for r in inter_rows])
        if gdr is not None:
            sentence += {
                "yes": " with GPUDirect RDMA",
                "no": " without GPUDirect RDMA",
                "partial": " with GPUDirect RDMA on some connections only",
            }.get(gdr, f" with GPUDirect RDMA on {gdr.replace(' only', '')} only")
        elif any(t.startswith("NET/Socket") for t in inter):
            sentence += " (TCP, no RDMA)"
        nics = _natural(n for r in inter_rows for n in r.nics)
        if nics:
            sentence += f" on {_range_text(list(nics))}"
        sentence += f" on {_processes(len(inter_rows), count)}"
        if intra:
            sentence += f"; intra-node {', '.join(intra)}"
    elif intra:
        sentence = (
            f"intra-node traffic used {', '.join(intra)} on {_processes(count, count)}; "
            "no inter-node connection in this log"
        )
        if chose:
            sentence += f" ({chose} for traffic between hosts)"
    elif chose:
        sentence = f"{chose}; no connection line yet proves traffic"
    else:
        sentence = (
            f"NCCL started on {_processes(count, count)}, but no line says which network it "
            "chose and no connection line proves which transport carried traffic"
        )
    if errors:
        # fatal first (findings are sorted so): NCCL returned an error, the job stopped;
        # else NCCL went on, at a cost
        said = "NCCL failed: " if errors[0].fatal else ""
        return "FAIL", f"{said}{errors[0].title} — {sentence}"
    if failed:
        return "FAIL", f"expected {failed[0].expectation}: {failed[0].detail} — {sentence}"
    if not inter and not intra:
        return "UNKNOWN", sentence
    if any(f.severity == "warning" for f in findings):
        return "WARN", sentence
    return "PASS", sentence
