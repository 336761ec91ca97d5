"""Findings of ``hpnet verify``: known failure signatures matched against the log's
lines, and conclusions drawn from its structure (sockets between hosts, GPUDirect
off, mixed NCCL releases, NET inside one machine, communicators that never finished).

Pure functions; :mod:`hpnet.ncclog.report` calls them with what it computed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.model import LogLine, NcclLog
from hpnet.ncclog.signatures import SIGNATURES, Signature
from hpnet.ncclog.versions import contains

if TYPE_CHECKING:
    from hpnet.ncclog.report import CommSummary, ProcessRow

__all__ = ["Finding", "match_signatures", "mixed_versions", "structural_findings"]

MAX_EVIDENCE = 6
#: INFO lines about calls NCCL retried or whose failure it ignores: no failure by
#: themselves (when the retries run out NCCL WARNs, and that line is matched):
#: "Call to ibv_modify_qp failed with %d %s, %s, retrying %d/%d after %u msec of sleep"
#: (ibvwrap.cc:281 @2.24.3), "%s: connect to %s returned %s, retrying (%d/%ld) after sleep
#: for %u msec" (socket.cc:587 @2.28.9), "Call to accept returned %s, retrying"
#: (socket.cc:456), and CUDACHECKIGNORE's "%s:%d Cuda failure '%s'" (checks.h:34 @2.28.9)
_TRANSIENT = re.compile(r"^INFO .*\bretrying\b|^INFO (?:\S+:\d+ )?Cuda failure ")
#: interfaces that exist on one host only: a socket transport over them cannot reach
#: another node (NCCL skips docker* and lo by default, virbr* since 2.28)
_LOCAL_BRIDGES = ("docker", "virbr", "br-", "veth", "cni", "flannel", "lo")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """A known failure signature, or a conclusion drawn from the log's structure."""

    id: str
    severity: str  # "error", "warning" or "info"
    title: str
    cause: str
    fix: str
    evidence: tuple[str, ...] = ()
    count: int = 1  # lines (or processes) that show it
    processes: tuple[str, ...] = ()
    #: a generic consequence (abort, timeout, "unhandled system error") of a cause
    #: that other findings name: listed after them
    consequence: bool = False


# ---------------------------------------------------------------- signatures


def match_signatures(log: NcclLog) -> list[Finding]:
    """Every kept WARN / failure / framework line against :data:`SIGNATURES`.

    WARN lines no signature knows are reported together: a maintainer would read them.
    """
    found: dict[str, tuple[Signature, list[str], set[str], int]] = {}
    unknown: list[str] = []
    unknown_processes: set[str] = set()
    lines: list[tuple[str, LogLine, bool]] = [
        (p.key, w, w.text.startswith("WARN")) for p in log.processes for w in p.warnings
    ]
    lines += [("", s, True) for s in log.signals]
    for process in log.processes:
        for note in process.gdr_notes + process.plugin_notes:
            lines.append(
                (process.key, LogLine(source="", line_number=0, text=f"INFO {note}"), False)
            )
    matching: dict[str, list[Signature]] = {}
    transient: list[str] = []
    num_transient = 0
    for key, line, report_unknown in lines:
        where = f"{line.source}:{line.line_number}: " if line.line_number else ""
        text = f"{where}{key + ' ' if key else ''}{line.text}".strip()
        if _TRANSIENT.search(line.text):
            if len(transient) < MAX_EVIDENCE:
                transient.append(text)
            num_transient += line.count
            continue
        signatures = matching.get(line.text)
        if signatures is None:  # the same text from many processes: matched once
            signatures = matching[line.text] = _signatures_of(line.text)
        matched = bool(signatures)
        for signature in signatures:
            sig, evidence, processes, count = found.get(signature.id, (signature, [], set(), 0))
            if len(evidence) < MAX_EVIDENCE:
                evidence.append(text)
            if key:
                processes.add(key)
            found[signature.id] = (sig, evidence, processes, count + line.count)
        if not matched and report_unknown:
            if len(unknown) < MAX_EVIDENCE:
                unknown.append(text)
            if key:
                unknown_processes.add(key)
    findings = [
        Finding(
            id=sig.id,
            severity=sig.severity,
            title=sig.title,
            cause=sig.cause,
            fix=sig.fix,
            evidence=tuple(evidence),
            count=count,
            processes=tuple(sorted(processes)),
            consequence=sig.consequence,
        )
        for sig, evidence, processes, count in found.values()
    ]
    if transient:
        findings.append(
            Finding(
                id="retried-calls",
                severity="info",
                title="NCCL retried calls that failed, or ignored their failure",
                cause="a connection or an RDMA queue-pair transition failed and NCCL tried "
                "again (NCCL_IB_MQP_RETRY_*, NCCL_SOCKET_RETRY_*), or a CUDA call whose "
                "failure NCCL ignores failed; if the retries ran out NCCL printed a WARN, "
                "reported on its own",
                fix="nothing if the job ran; if it hangs or fails, the WARN lines say why",
                evidence=tuple(transient),
                count=num_transient,
            )
        )
    if unknown:
        findings.append(
            Finding(
                id="other-warnings",
                severity="warning",
                title="warnings hpnet has no signature for",
                cause="NCCL or the framework warned about something not in hpnet's catalogue "
                "of known failures",
                fix="read the lines; if one explains a failure, report it to hpnet",
                evidence=tuple(unknown),
                count=len(unknown),
                processes=tuple(sorted(unknown_processes)),
            )
        )
    return findings


def _signatures_of(text: str) -> list[Signature]:
    """The signatures a line matches, up to the first exclusive one."""
    found = []
    for signature in SIGNATURES:
        if signature.pattern.search(text):
            found.append(signature)
            if signature.exclusive:
                break
    return found


# ---------------------------------------------------------------- NCCL versions


def mixed_versions(log: NcclLog, versions: Sequence[str]) -> list[str]:
    """Evidence that the processes ran more than one NCCL release (empty if not).

    Version lines are compared first; then each process's line formats
    (:mod:`hpnet.ncclog.versions`) against the versions printed and each other.
    """
    if len(versions) > 1:
        by_version: dict[str, list[str]] = {}
        for p in log.processes:
            if p.nccl_version:
                by_version.setdefault(p.nccl_version, []).append(p.host or p.key)
        for v in log.bare_versions:
            by_version.setdefault(v, []).append("rank 0's version line")
        return [f"NCCL {v}: {', '.join(sorted(set(h))[:6])}" for v, h in by_version.items()]
    ranged = [
        (p, _parse_range(p.version_range))
        for p in log.processes
        if p.version_range and not p.nccl_version and not p.version_conflict
    ]
    known = [tuple(int(x) for x in v.split(".")) for v in versions if _dotted(v)]
    evidence = [
        f"{process.key}: its lines are written by NCCL {process.version_range}, "
        f"not {', '.join(versions)}"
        for process, bounds in ranged
        if known and not any(contains(bounds, v) for v in known)
    ]
    if not evidence and len(ranged) > 1:
        # the ranges have no release in common exactly when the highest lower bound
        # exceeds the lowest upper bound: those two processes are the witnesses
        lows = [(b[0], p) for p, b in ranged if b[0] is not None]
        highs = [(b[1], p) for p, b in ranged if b[1] is not None]
        if lows and highs:
            low, low_process = max(lows, key=lambda item: item[0])
            high, high_process = min(highs, key=lambda item: item[0])
            if low > high:
                evidence.append(
                    f"{high_process.key}: NCCL {high_process.version_range}; {low_process.key}: "
                    f"NCCL {low_process.version_range} (by the form of their lines)"
                )
    return evidence


def _dotted(text: str) -> bool:
    return all(part.isdigit() for part in text.split("."))


def _parse_range(text: str | None) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The inverse of :func:`hpnet.ncclog.versions.format_range`."""
    if not text or text == "any":
        return (None, None)

    def version(part: str) -> tuple[int, ...]:
        return tuple(int(x) for x in part.strip().split("."))

    if text.startswith(">= "):
        return (version(text[3:]), None)
    if text.startswith("<= "):
        return (None, version(text[3:]))
    lo, _, hi = text.partition("-")
    return (version(lo), version(hi or lo))


# ---------------------------------------------------------------- structure


def structural_findings(
    log: NcclLog,
    *,
    rows: Sequence[ProcessRow],
    comms: Sequence[CommSummary],
    mixed: Sequence[str],
    same_host_net: Sequence[str],
    split_by_hostid: Sequence[str],
    socket_expected: bool,
    indistinct: Sequence[str] = (),
) -> list[Finding]:
    """Conclusions no single line states."""
    findings: list[Finding] = []
    findings += _sockets(log, rows, socket_expected)
    if mixed:
        findings.append(
            Finding(
                id="mixed-nccl-versions",
                severity="error",
                title="ranks run different NCCL versions",
                cause="the hosts' images or library paths differ; NCCL's protocols are only "
                "guaranteed between identical releases (mismatches hang or fail at init)",
                fix="use one image / one NCCL on every node (check LD_LIBRARY_PATH and the "
                "nvidia-nccl wheel torch loads: `hpnet detect --torch`)",
                evidence=tuple(mixed[:MAX_EVIDENCE]),
                count=len(mixed),
            )
        )
    off = [r for r in rows if r.gdr in ("no", "partial", "receive only", "send only")]
    if off:
        findings.append(
            Finding(
                id="gdr-off",
                severity="warning",
                title=f"GPUDirect RDMA not (fully) used on {len(off)} process(es): network "
                "traffic is staged through host memory",
                cause="no nvidia_peermem / dma-buf support for the NIC, the NIC too far from "
                "the GPU for NCCL_NET_GDR_LEVEL, or GPUDirect reads disabled ('read 0', "
                "receive-only GDR)",
                fix="load nvidia_peermem (or use the open GPU kernel module with dma-buf); "
                "`hpnet doctor` (gpudirect.*) checks the module, ACS and GPU-NIC distance",
                evidence=tuple(
                    f"{r.process}: {', '.join(r.inter_node)} (GDR {r.gdr})"
                    for r in off[:MAX_EVIDENCE]
                ),
                count=len(off),
                processes=tuple(r.process for r in off),
            )
        )
    if same_host_net:
        findings.append(
            Finding(
                id="net-inside-node",
                severity="warning",
                title="ranks on the same machine talked through the network transport",
                cause="P2P and SHM were not used between them (NCCL_P2P_DISABLE / "
                "NCCL_SHM_DISABLE, NCCL_NET forced, containers without a shared IPC "
                "namespace or /dev/shm): traffic that could stay inside the node goes "
                "through the NIC or TCP",
                fix="run the ranks of one node in one IPC namespace (docker --ipc=host; "
                "Kubernetes: a shared /dev/shm) and leave NCCL_P2P_DISABLE / "
                "NCCL_SHM_DISABLE unset",
                evidence=tuple(same_host_net[:MAX_EVIDENCE]),
                count=len(same_host_net),
            )
        )
    if split_by_hostid:
        findings.append(
            Finding(
                id="fake-hosts",
                severity="info",
                title="NCCL_HOSTID split one machine into several NCCL hosts: their traffic "
                "used the network transport on purpose",
                cause="NCCL_HOSTID differs between ranks of one machine (a test of the "
                "inter-node path)",
                fix="nothing to fix for a test; unset NCCL_HOSTID for real jobs",
                evidence=tuple(split_by_hostid[:MAX_EVIDENCE]),
                count=len(split_by_hostid),
            )
        )
    if indistinct:
        findings.append(
            Finding(
                id="hosts-indistinct",
                severity="info",
                title="NCCL counted more hosts than the log's host names tell apart: "
                "network connections among them are counted as inter-node",
                cause="several machines share a host name (and their lines show no address "
                "that tells them apart), or NCCL_HOSTID split a machine and the log does "
                "not show it (NCCL prints it with NCCL_DEBUG_SUBSYS=ENV): NCCL's nNodes / "
                "localRanks say the ranks under one name run on several NCCL hosts",
                fix="give every machine its own host name; log with "
                "NCCL_DEBUG_SUBSYS=INIT,NET,ENV so that NCCL_HOSTID and the bootstrap "
                "addresses are shown",
                evidence=tuple(indistinct[:MAX_EVIDENCE]),
                count=len(indistinct),
            )
        )
    findings += _hca_matched_nothing(log)
    findings += _hca_prefix(log)
    findings += _ifname_prefix(log)
    findings += _bridges(log)
    findings += _comm_states(log, comms)
    return findings


def _sockets(log: NcclLog, rows: Sequence[ProcessRow], socket_expected: bool) -> list[Finding]:
    """Inter-node traffic over TCP, or a node that would send it there."""
    socket_rows = [r for r in rows if any(t.startswith("NET/Socket") for t in r.inter_node)]
    by_key = {p.key: p for p in log.processes}
    no_device = [p for p in log.processes if p.ib_no_device]
    if socket_rows:
        envs = [dict(by_key[r.process].env) for r in socket_rows if r.process in by_key]
        forced = [
            f"{k}={e[k]}"
            for e in envs
            for k in ("NCCL_IB_DISABLE", "NCCL_NET")
            if k in e
            and (k != "NCCL_IB_DISABLE" or e[k] not in ("", "0"))
            and (k != "NCCL_NET" or e[k].lower() == "socket")
        ]
        if forced or socket_expected:
            return [
                Finding(
                    id="sockets-chosen",
                    severity="info" if socket_expected else "warning",
                    title="inter-node traffic went over TCP sockets, as configured",
                    cause=f"{sorted(set(forced))[0]} in the environment"
                    if forced
                    else "the expectation asks for sockets",
                    fix="unset NCCL_IB_DISABLE / NCCL_NET to use RDMA where the nodes have it",
                    evidence=tuple(
                        f"{r.process}: {', '.join(r.inter_node)}" for r in socket_rows[:4]
                    ),
                    count=len(socket_rows),
                )
            ]
        reasons = []
        if no_device:
            reasons.append("NET/IB found no usable device ('NET/IB : No device found')")
        if any("libibverbs" in n for p in log.processes for n in p.plugin_notes):
            reasons.append("libibverbs could not be loaded")
        hca = sorted(
            {dict(p.env)["NCCL_IB_HCA"] for p in log.processes if "NCCL_IB_HCA" in dict(p.env)}
        )
        if hca:
            reasons.append(f"NCCL_IB_HCA={hca[0]} may match no device")
        return [
            Finding(
                id="socket-fallback",
                severity="error",
                title="inter-node traffic went over TCP sockets (NET/Socket), typically 4-10x "
                "slower than RDMA",
                cause=(
                    "; ".join(reasons)
                    if reasons
                    else "NCCL did not use an RDMA network (no IB device or plugin was usable)"
                )
                + ": NCCL falls back to sockets without a warning (no RDMA NIC in the machine or "
                "container, missing verbs provider, /dev/infiniband not passed in, ports down)",
                fix="run `hpnet doctor` on the nodes; pass the RDMA devices to the container "
                "(--device=/dev/infiniband/uverbsN --device=/dev/infiniband/rdma_cm), install "
                "rdma-core's libibverbs and provider; if TCP is intended, set NCCL_IB_DISABLE=1",
                evidence=tuple(f"{r.process}: {', '.join(r.inter_node)}" for r in socket_rows[:4])
                + tuple(f"{p.key}: NET/IB : No device found" for p in no_device[:2]),
                count=len(socket_rows),
                processes=tuple(r.process for r in socket_rows),
            )
        ]
    fallback = [p for p in no_device if "Socket" in p.networks or not p.networks]
    if fallback and not socket_expected:
        return [
            Finding(
                id="no-rdma-device",
                severity="warning",
                title="NCCL found no usable RDMA device: a multi-node job from here would "
                "use TCP sockets",
                cause="'NET/IB : No device found' (or libibverbs missing): no RDMA NIC is "
                "usable in this machine or container",
                fix="on a machine with RDMA NICs: `hpnet doctor` says what is missing (devices "
                "in the container, provider library, port state); on a single node, nothing to do",
                evidence=tuple(f"{p.key}: NET/IB : No device found" for p in fallback[:4]),
                count=len(fallback),
                processes=tuple(p.key for p in fallback),
            )
        ]
    return []


def _hca_matched_nothing(log: NcclLog) -> list[Finding]:
    """NCCL_IB_HCA set, and NET/IB found no device. NCCL prints no warning of its own
    for a list that selects nothing: "NCCL_IB_HCA set to X" (or "set by environment
    to X") is followed by "NET/IB : No device found." (net_ib.cc / ibvwrap init in
    every release from 2.3 to 2.30), and traffic falls back to sockets."""
    hit = [p for p in log.processes if p.ib_no_device and "NCCL_IB_HCA" in dict(p.env)]
    if not hit:
        return []
    values = sorted({dict(p.env)["NCCL_IB_HCA"] for p in hit})
    return [
        Finding(
            id="ib-hca-matched-nothing",
            severity="error",
            title=f"NCCL_IB_HCA={values[0]} selected no RDMA device: NCCL found none to use",
            cause="the names or ports in NCCL_IB_HCA do not exist on this machine or in this "
            "container (udev may have renamed mlx5_N to rocepXsY or ibpXsY; the devices may "
            "not be passed in), so NET/IB has no device and NCCL uses sockets",
            fix="list the devices here (`hpnet detect`) and set NCCL_IB_HCA from them "
            "(`hpnet env`), or unset it to let NCCL take every active port",
            evidence=tuple(
                f"{p.key}: NCCL_IB_HCA={dict(p.env)['NCCL_IB_HCA']}; NET/IB : No device found"
                for p in hit[:MAX_EVIDENCE]
            ),
            count=len(hit),
            processes=tuple(p.key for p in hit),
        )
    ]


def _hca_prefix(log: NcclLog) -> list[Finding]:
    """NCCL_IB_HCA entries are prefixes: ``mlx5_1`` also takes ``mlx5_10``."""
    from hpnet.nccl.lists import parse_list  # noqa: PLC0415

    evidence = []
    for process in log.processes:
        value = dict(process.env).get("NCCL_IB_HCA")
        if not value or not process.nics:
            continue
        try:
            spec = parse_list(value)
        except ValueError:
            continue
        if spec.exact or spec.exclude:
            continue
        names = {e.name for e in spec.entries}
        extra = [n.name for n in process.nics if n.name not in names and spec.matches(n.name)]
        if extra:
            evidence.append(f"{process.key}: NCCL_IB_HCA={value} also selected {', '.join(extra)}")
            break
    if not evidence:
        return []
    return [
        Finding(
            id="ib-hca-prefix",
            severity="warning",
            title="NCCL_IB_HCA selected devices it does not name (a prefix match)",
            cause="each NCCL_IB_HCA entry is a prefix unless the list starts with '=': mlx5_1 "
            "also selects mlx5_10..mlx5_19",
            fix="write the list with a leading '=' (NCCL_IB_HCA==mlx5_0,mlx5_1,...) or let "
            "`hpnet env` write it",
            evidence=tuple(evidence),
        )
    ]


def _ifname_prefix(log: NcclLog) -> list[Finding]:
    """NCCL_SOCKET_IFNAME entries are prefixes too: say what ``eth`` picked."""
    from hpnet.nccl.lists import parse_list  # noqa: PLC0415

    picked: dict[str, set[str]] = {}
    for process in log.processes:
        value = dict(process.env).get("NCCL_SOCKET_IFNAME")
        if not value:
            continue
        try:
            spec = parse_list(value)
        except ValueError:
            continue
        if spec.exact or spec.exclude:
            continue
        names = {e.name for e in spec.entries}
        used = {b.split(":", 1)[0] for b in process.bootstrap} | {
            n.name for n in process.socket_interfaces
        }
        extra = {u for u in used if u and u not in names}
        if extra:
            picked.setdefault(value, set()).update(extra)
    if not picked:
        return []
    return [
        Finding(
            id="socket-ifname-prefix",
            severity="info",
            title="NCCL_SOCKET_IFNAME is a prefix: it picked interfaces it does not name",
            cause="without a leading '=' each entry matches every interface that starts with "
            "it (eth also takes eth1, eth0.100); different nodes can pick different networks",
            fix="name the interface exactly: NCCL_SOCKET_IFNAME==<name> (`hpnet env` does)",
            evidence=tuple(
                f"NCCL_SOCKET_IFNAME={value} picked {', '.join(sorted(extra))}"
                for value, extra in picked.items()
            ),
        )
    ]


def _bridges(log: NcclLog) -> list[Finding]:
    """The socket transport listing host-local bridges (docker0, virbr0, br-...)."""
    evidence = []
    for process in log.processes:
        local = [n.name for n in process.socket_interfaces if n.name.startswith(_LOCAL_BRIDGES)]
        real = [n for n in process.socket_interfaces if not n.name.startswith(_LOCAL_BRIDGES)]
        # 2.4-2.5 print no "Using network": NET/IB finding no device means sockets
        if local and ("Socket" in process.networks or process.ib_no_device):
            evidence.append(
                f"{process.key}: NET/Socket uses {', '.join(local)}"
                + ("" if real else " and nothing else")
            )
    if not evidence:
        return []
    return [
        Finding(
            id="socket-local-interfaces",
            severity="warning",
            title="the socket transport uses interfaces that exist on one host only",
            cause="NCCL_SOCKET_IFNAME is unset or too broad, so bridges (docker0, virbr0, br-*) "
            "or loopback are in NCCL's socket list: connections to other nodes through them "
            "fail or hang",
            fix="set NCCL_SOCKET_IFNAME to the interface that reaches the other nodes "
            "(`hpnet env` picks one), e.g. NCCL_SOCKET_IFNAME==eth0",
            evidence=tuple(evidence[:MAX_EVIDENCE]),
            count=len(evidence),
        )
    ]


def _comm_states(log: NcclLog, comms: Sequence[CommSummary]) -> list[Finding]:
    findings = []
    started = [c for c in comms if not c.init_complete and not c.aborted and c.ranks_seen]
    if started:
        connected = all(c.num_connections for c in started)
        errors = any(w.text.startswith("WARN") for p in log.processes for w in p.warnings)
        findings.append(
            Finding(
                id="init-incomplete",
                # without an error the log cannot tell a hang from a cut excerpt
                severity="warning" if errors and not connected else "info",
                title=f"{len(started)} communicator(s) started but never logged Init COMPLETE",
                cause="initialisation failed or hung (see the WARN lines), or the log was cut "
                "before it finished"
                + (" (their connections were set up: probably a cut log)" if connected else ""),
                fix="if the job hung, rerun with NCCL_DEBUG_SUBSYS=INIT,NET,BOOTSTRAP and "
                "a timeout",
                evidence=tuple(
                    f"comm {c.id}: {c.ranks_seen} of {c.nranks} ranks seen" for c in started[:4]
                ),
                count=len(started),
            )
        )
    aborted = [c for c in comms if c.aborted]
    if aborted:
        errors = any(w.text.startswith("WARN") for p in log.processes for w in p.warnings)
        findings.append(
            Finding(
                id="comm-aborted",
                severity="warning" if errors else "info",
                title=f"{len(aborted)} communicator(s) were aborted",
                cause="a rank hit an error or a timeout and the framework aborted the "
                "communicator (ncclCommAbort); some frameworks also abort at shutdown",
                fix="the cause is the first error before it",
                evidence=tuple(f"comm {c.id}" for c in aborted[:4]),
                count=len(aborted),
                consequence=True,
            )
        )
    return findings
