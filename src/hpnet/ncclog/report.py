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
from collections.abc import Mapping, Sequence

from hpnet.artefacts.model import ArtefactSummary
from hpnet.ncclog.choice import Choice, choice_of, summarize
from hpnet.ncclog.comms import CommSummary, comm_summaries
from hpnet.ncclog.conclusions import placement_findings, shm_only_findings
from hpnet.ncclog.diag import DiagComm, diag_findings, summarize_diag
from hpnet.ncclog.environment import env_findings
from hpnet.ncclog.expectation import (
    ExpectationResult,
    check_expectation,
    net_matches,
    parse_expectation,
)
from hpnet.ncclog.explain import Fact, explaining_facts
from hpnet.ncclog.findings import (
    comm_states,
    match_signatures,
    quotes,
    trail_findings,
)
from hpnet.ncclog.gdr import gdr_findings
from hpnet.ncclog.gids import gid_findings
from hpnet.ncclog.model import Connection, NcclLog, ProcessLog, TransportKind
from hpnet.ncclog.network import network_findings
from hpnet.ncclog.placement import (
    INTRA_KINDS,
    Alike,
    Placement,
    by_host,
    crowded_hosts,
    machine_labels,
    shared_gpus,
)
from hpnet.ncclog.precedence import order_findings
from hpnet.ncclog.releases import known_bad_versions, mixed_versions
from hpnet.ncclog.transports import (
    combine_gdr,
    gdr_state,
    natural_sorted,
    nic_names,
    transport_label,
    uniq,
)
from hpnet.ncclog.verdict import verdict_of
from hpnet.result import Expectation, Finding

__all__ = [
    "CommSummary",
    "ExpectationResult",
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
    #: inputs other than NCCL debug logs (ncclras reports, PyTorch / XLA / wrapper
    #: error text, RCCL logs): what each is and what it said (hpnet.artefacts)
    artefacts: tuple[ArtefactSummary, ...] = ()
    #: what NCCL set up or was told that explains a number (an NCCL_TOPO_FILE, a
    #: link-local bootstrap, a NIC at distance SYS, PXN, NVLS, CollNet), on its lines
    facts: tuple[Fact, ...] = ()
    #: NCCL's own diagnostics (2.31+ ``NCCL DIAG`` lines), per communicator
    diagnostics: tuple[DiagComm, ...] = ()
    num_lines: int
    num_nccl_lines: int
    num_bytes: int


# ---------------------------------------------------------------- transports

# ---------------------------------------------------------------- the report


def _crossing(
    place: Placement,
    crowded: Mapping[str, str],
    process: ProcessLog,
    connection: Connection,
    comms: Sequence[Alike],
) -> tuple[bool, str | None, str]:
    """Whether a connection of ``process`` goes between NCCL hosts, and what to note of
    it: ``fake-hosts``, ``indistinct``, ``net-inside-node`` or None, and the sentence.

    A transport that says nothing of hosts (P2P, SHM, NVLS) stays inside one; a network
    connection is inter-node unless the log places the peer on this NCCL host."""
    kind = connection.transport.kind
    if not by_host(connection):
        return kind not in INTRA_KINDS, None, ""
    machines = place.machines
    peer = place.peer(process, connection, comms)
    if peer is None or machines[peer.key] != machines[process.key]:
        return True, None, ""
    said = (
        f"rank {connection.src} -> {connection.dst} via "
        f"{connection.transport.raw}: both on {machines[process.key]} "
        f"(process {process.key})"
    )
    host = place.nccl_host(process)
    if place.nccl_host(peer) != host:
        return True, ("fake-hosts" if kind is TransportKind.NET else None), said
    if host in crowded:
        return True, "indistinct", f"{said}: {crowded[host]}"
    return False, ("net-inside-node" if kind is TransportKind.NET else None), said


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
            comms = place.comms_of(process, connection)
            is_inter, noted, said = _crossing(place, crowded, process, connection, comms)
            if noted == "fake-hosts":
                split_by_hostid.append((process, said))
            elif noted == "indistinct":
                indistinct.append((process, said))
            elif noted == "net-inside-node":
                same_host_net.append((process, said))
            (inter if is_inter else intra).append(connection)
            for alike in comms:
                alike.connections.append((process, connection, is_inter))
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
                nics=natural_sorted(nic_names(process, inter)),
                bootstrap=process.bootstrap,
                intra_node=uniq(
                    [transport_label(c, False) for c in intra]
                    + (["NVLS"] if process.nvls and not nvls_across else [])
                ),
                inter_node=uniq(
                    [transport_label(c, True) for c in inter]
                    + (["NVLS"] if process.nvls and nvls_across else [])
                ),
                gdr=gdr_state(inter),
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

    summaries = comm_summaries(place, machines)

    hosts: dict[str, list[ProcessRow]] = {}
    for row in rows:
        hosts.setdefault(row.host or "(no host prefix)", []).append(row)
    host_rows = tuple(
        HostRow(
            host=host,
            num_processes=len(members),
            nccl_versions=uniq(m.nccl_version or "" for m in members),
            network=uniq(n for m in members for n in m.network),
            nics=natural_sorted(n for m in members for n in m.nics),
            intra_node=uniq(t for m in members for t in m.intra_node),
            inter_node=uniq(t for m in members for t in m.inter_node),
            gdr=combine_gdr([m.gdr for m in members]),
            chose=uniq(m.chose or "" for m in members),
            nic_list=uniq(n for m in members for n in m.nic_list),
            chose_evidence=next((m.chose_evidence for m in members if m.chose_evidence), ()),
        )
        for host, members in hosts.items()
    )

    versions = uniq([r.nccl_version or "" for r in rows] + list(log.bare_versions))
    findings = match_signatures(log)
    mixed = mixed_versions(log, versions)
    if mixed is not None:
        findings.append(mixed)
    findings += known_bad_versions(log, versions)
    findings += network_findings(
        log,
        rows,
        choices,
        socket_expected=bool(
            expectation and expectation.net and net_matches(expectation.net, "NET/Socket")
        ),
        one_host=_one_host(rows, summaries),
    )
    findings += gdr_findings(log, rows)
    findings += gid_findings(log)
    findings += shm_only_findings(log, rows)
    findings += env_findings(log, rows)
    diagnostics = summarize_diag(log.diag)
    findings += diag_findings(diagnostics)
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
    # causes first, the earliest in time first; effects after what explains them
    findings = order_findings(findings, log.sources)
    intra_all = uniq(t for r in rows for t in r.intra_node)
    inter_all = uniq(t for r in rows for t in r.inter_node)
    results = check_expectation(expectation, rows) if expectation else ()
    chose = summarize([choices[p.key] for p in processes], len(processes))
    status, verdict = verdict_of(rows, findings, results, inter_all, intra_all, chose=chose)
    return VerifyReport(
        status=status,
        verdict=verdict,
        sources=log.sources,
        nccl_versions=versions,
        network=uniq(n for r in rows for n in r.network),
        nics=natural_sorted(n for r in rows for n in r.nics),
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
        facts=explaining_facts(log),
        diagnostics=diagnostics,
    )


def _one_host(rows: Sequence[ProcessRow], comms: Sequence[CommSummary]) -> bool:
    """The log proves a single-host run: every process on one machine, no inter-node
    connection, and every communicator seen whole there; a log that holds part of a
    job proves nothing of the rest."""
    machines = {r.host for r in rows}
    return (
        len(rows) > 0
        and len(machines) == 1
        and None not in machines
        and not any(r.inter_node for r in rows)
        and len(comms) > 0
        and all(c.ranks_seen >= c.nranks and len(c.hosts) == 1 for c in comms)
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
        ranges = uniq(r.version_range or "" for r in rows)
        notes.append(
            "no NCCL version line per process (rank 0 printed it alone up to 2.21); "
            f"their lines' formats say NCCL {', '.join(ranges)}"
        )
    return tuple(notes)
