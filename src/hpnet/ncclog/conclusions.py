"""Findings of ``hpnet verify``, part two: conclusions no single line states.

What NCCL chose and used (sockets between hosts, GPUDirect RDMA off and the reason
the log gives, NET between GPUs of one host), what the environment NCCL echoes did
(``NCCL_X set by environment to Y``), NVLink SHARP asked for and not set up, device
lists that hold host-local bridges, and the NCCL_IB_HCA / NCCL_SOCKET_IFNAME lists.

Each finding quotes the lines it stands on (``file:line: text``) and words what it
concludes from them as a conclusion. Pure functions over the parsed log and the
per-process rows :mod:`hpnet.ncclog.report` computed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.choice import Choice
from hpnet.ncclog.findings import MAX_EVIDENCE, Finding, quotes
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog

if TYPE_CHECKING:
    from hpnet.ncclog.report import ProcessRow

__all__ = ["env_findings", "gdr_findings", "network_findings", "path_name"]

#: interfaces that exist on one host only: a socket transport over them cannot reach
#: another node (NCCL skips docker* and lo by default, virbr* since 2.28)
LOCAL_INTERFACES = ("docker", "virbr", "br-", "veth", "cni", "flannel", "lo")

#: NCCL's path types (the ``distance`` of GPU Direct RDMA lines and NCCL_NET_GDR_LEVEL's
#: numbers) per release: include/topo.h @2.4.2, include/graph.h @2.4.6-2.5.7 (enum
#: ncclPathDist), graph/topo.h @2.6.4-2.29, include/graph.h @2.30
_PATH_TYPES: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...]], ...] = (
    ((2, 4, 0), (2, 4, 2), ("PIX", "PXB", "PHB", "SOC")),
    ((2, 4, 6), (2, 5, 99), ("PIX", "PXB", "PHB", "NODE", "SYS")),
    ((2, 6, 0), (2, 7, 99), ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS", "NET")),
    ((2, 8, 0), (2, 11, 99), ("LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS")),
    ((2, 12, 0), (2, 25, 99), ("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET")),
    ((2, 26, 0), (2, 26, 99), ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "PHB", "SYS")),
    ((2, 27, 3), (2, 27, 3),
     ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS")),
    ((2, 27, 5), (2, 99, 99),
     ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")),
)  # fmt: skip


def path_name(number: int, version: str | None) -> str | None:
    """The name of NCCL path type ``number`` in release ``version`` (None when the
    release is not known: the numbering changed five times).

    >>> path_name(4, "2.18.3"), path_name(4, "2.27.5"), path_name(4, None)
    ('PXB', 'PIX', None)
    """
    if not version:
        return None
    try:
        release = tuple(int(part) for part in version.split(".")[:3])
    except ValueError:
        return None
    for low, high, names in _PATH_TYPES:
        if low <= release <= high:
            return names[number] if 0 <= number < len(names) else None
    return None


def _env(process: ProcessLog) -> dict[str, str]:
    return dict(process.env)


def _set(value: str | None) -> bool:
    """An integer switch NCCL reads as on (anything but 0 and empty)."""
    return value is not None and value.strip() not in ("", "0")


def _transport_line(process: ProcessLog, prefix: str) -> LogLine | None:
    for key, line in process.lines_of("transport:"):
        if key[len("transport:") :].startswith(prefix):
            return line
    return None


# ---------------------------------------------------------------- the network


def network_findings(
    log: NcclLog,
    rows: Sequence[ProcessRow],
    choices: Mapping[str, Choice | None],
    *,
    socket_expected: bool,
) -> list[Finding]:
    """Inter-node traffic over TCP, a node that would send it there, NCCL_IB_HCA that
    selects nothing or more than it names, and interfaces that exist on one host."""
    by_key = {p.key: p for p in log.processes}
    findings = _sockets(log, rows, by_key, choices, socket_expected)
    findings += _hca_matched_nothing(log)
    findings += _hca_prefix(log)
    findings += _ifname_prefix(log)
    findings += _local_interfaces(log, choices)
    return findings


def _sockets(
    log: NcclLog,
    rows: Sequence[ProcessRow],
    by_key: Mapping[str, ProcessLog],
    choices: Mapping[str, Choice | None],
    socket_expected: bool,
) -> list[Finding]:
    socket_rows = [r for r in rows if any(t.startswith("NET/Socket") for t in r.inter_node)]
    socket_processes = [by_key[r.process] for r in socket_rows if r.process in by_key]
    no_device = [p for p in log.processes if p.ib_no_device]
    if socket_rows:
        forced = sorted(
            {
                f"{name}={value}"
                for p in socket_processes
                for name, value in p.env
                if (name == "NCCL_IB_DISABLE" and _set(value))
                or (name == "NCCL_NET" and value.lower() == "socket")
            }
        )
        traffic = quotes(_transport_line(p, "NET/Socket") for p in socket_processes)
        if forced or socket_expected:
            env_lines = [
                p.line(f"env:{item.split('=', 1)[0]}") for p in socket_processes for item in forced
            ]
            return [
                Finding(
                    id="sockets-chosen",
                    severity="info" if socket_expected else "warning",
                    title="inter-node traffic went over TCP sockets, as configured",
                    cause=f"{forced[0]} in the environment"
                    if forced
                    else "the expectation asks for sockets",
                    fix="unset NCCL_IB_DISABLE / NCCL_NET to use RDMA where the nodes have it",
                    evidence=quotes([*env_lines, *[None]], 2) + traffic[:4],
                    conclusions=(
                        f"{len(socket_rows)} process(es) sent to peers on other hosts over "
                        "NET/Socket",
                    ),
                    count=len(socket_rows),
                    processes=tuple(r.process for r in socket_rows),
                )
            ]
        reasons = []
        witnesses: list[LogLine | None] = []
        if no_device:
            reasons.append("NET/IB found no usable device")
            witnesses += [p.line("ib-no-device") for p in no_device[:2]]
        if any("libibverbs" in n.text for p in log.processes for n in p.plugin_notes):
            reasons.append("libibverbs could not be loaded")
        hca = sorted({_env(p)["NCCL_IB_HCA"] for p in log.processes if "NCCL_IB_HCA" in _env(p)})
        if hca and no_device:
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
                evidence=quotes(witnesses, 2) + traffic[:4],
                conclusions=(
                    f"{len(socket_rows)} process(es) sent to peers on other hosts over NET/Socket",
                ),
                count=len(socket_rows),
                processes=tuple(r.process for r in socket_rows),
            )
        ]
    # no inter-node connection proves anything: what NCCL chose says where it would go
    fallback = [
        p
        for p in no_device
        if not _set(_env(p).get("NCCL_IB_DISABLE"))
        and (choices.get(p.key) is None or choices[p.key].network == "Socket")  # type: ignore[union-attr]
    ]
    if fallback and not socket_expected:
        return [
            Finding(
                id="no-rdma-device",
                severity="warning",
                title="NCCL found no usable RDMA device: a multi-node job from here would "
                "use TCP sockets",
                cause="no RDMA NIC is usable in this machine or container (none present, the "
                "verbs library or provider missing, /dev/infiniband not passed in, or "
                "NCCL_IB_HCA matching none)",
                fix="on a machine with RDMA NICs: `hpnet doctor` says what is missing (devices "
                "in the container, provider library, port state); on a single node, nothing to do",
                evidence=quotes(
                    [p.line("ib-no-device") for p in fallback[:2]]
                    + [p.line("network:Socket") for p in fallback[:2]]
                ),
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
    hit = [
        p
        for p in log.processes
        if p.ib_no_device
        and "NCCL_IB_HCA" in _env(p)
        and not any("libibverbs" in n.text for n in p.plugin_notes)
    ]
    if not hit:
        return []
    values = sorted({_env(p)["NCCL_IB_HCA"] for p in hit})
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
            evidence=quotes(
                line
                for p in hit[:3]
                for line in (p.line("env:NCCL_IB_HCA"), p.line("ib-no-device"))
            ),
            count=len(hit),
            processes=tuple(p.key for p in hit),
        )
    ]


def _hca_prefix(log: NcclLog) -> list[Finding]:
    """NCCL_IB_HCA entries are prefixes: ``mlx5_1`` also takes ``mlx5_10``."""
    from hpnet.nccl.lists import parse_list  # noqa: PLC0415

    for process in log.processes:
        value = _env(process).get("NCCL_IB_HCA")
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
            return [
                Finding(
                    id="ib-hca-prefix",
                    severity="warning",
                    title="NCCL_IB_HCA selected devices it does not name (a prefix match)",
                    cause="each NCCL_IB_HCA entry is a prefix unless the list starts with '=': "
                    "mlx5_1 also selects mlx5_10..mlx5_19",
                    fix="write the list with a leading '=' (NCCL_IB_HCA==mlx5_0,mlx5_1,...) or "
                    "let `hpnet env` write it",
                    evidence=quotes([process.line("env:NCCL_IB_HCA"), process.line("nics:IB")]),
                    conclusions=(
                        f"NCCL_IB_HCA={value} also selected {', '.join(extra)} "
                        f"(process {process.key})",
                    ),
                )
            ]
    return []


def _ifname_prefix(log: NcclLog) -> list[Finding]:
    """NCCL_SOCKET_IFNAME entries are prefixes too: say what ``eth`` picked."""
    from hpnet.nccl.lists import parse_list  # noqa: PLC0415

    picked: dict[str, set[str]] = {}
    witnesses: list[LogLine | None] = []
    for process in log.processes:
        value = _env(process).get("NCCL_SOCKET_IFNAME")
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
            if value not in picked:
                witnesses += [
                    process.line("env:NCCL_SOCKET_IFNAME"),
                    process.line("bootstrap"),
                    process.line("nics:Socket"),
                ]
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
            evidence=quotes(witnesses),
            conclusions=tuple(
                f"NCCL_SOCKET_IFNAME={value} picked {', '.join(sorted(extra))}"
                for value, extra in picked.items()
            ),
        )
    ]


def _local_interfaces(log: NcclLog, choices: Mapping[str, Choice | None]) -> list[Finding]:
    """A socket list or bootstrap interface that holds host-local bridges or loopback
    (docker0, virbr0, docker's br-<id>, lo): connections to other nodes through them fail
    or hang. An error of consequence when the socket transport carries the traffic
    (NCCL chose it, or NCCL_IB found no device); for the bootstrap interface, always."""
    hits: list[tuple[ProcessLog, list[str], bool]] = []
    for process in log.processes:
        local = [n.name for n in process.socket_interfaces if n.name.startswith(LOCAL_INTERFACES)]
        boot = [
            b.split(":", 1)[0]
            for b in process.bootstrap
            if b.split(":", 1)[0].startswith(LOCAL_INTERFACES) and "(OOB)" not in b
        ]
        choice = choices.get(process.key)
        sockets = (choice is not None and choice.network == "Socket") or (
            choice is None and process.ib_no_device
        )
        if boot or (local and sockets):
            hits.append((process, sorted(set(local + boot)), bool(boot)))
    if not hits:
        return []
    return [
        Finding(
            id="socket-local-interfaces",
            severity="warning",
            title="NCCL uses network interfaces that exist on one host only",
            cause="NCCL_SOCKET_IFNAME is unset or too broad, so bridges (docker0, virbr0, "
            "docker's br-*) or loopback are in NCCL's socket list or carry its bootstrap: "
            "connections to other nodes through them fail or hang (NCCL skips docker* and lo "
            "by default, virbr* only since 2.28)",
            fix="set NCCL_SOCKET_IFNAME to the interface that reaches the other nodes "
            "(`hpnet env` picks one), e.g. NCCL_SOCKET_IFNAME==eth0",
            evidence=quotes(
                line
                for p, _, boot in hits[:3]
                for line in ((p.line("bootstrap"),) if boot else ()) + (p.line("nics:Socket"),)
            ),
            conclusions=tuple(
                f"process {p.key}: {', '.join(names)} in "
                + ("its bootstrap interface" if boot else "NCCL's socket interfaces")
                for p, names, boot in hits[:MAX_EVIDENCE]
            ),
            count=len(hits),
            processes=tuple(p.key for p, _, _ in hits),
        )
    ]


# ---------------------------------------------------------------- GPUDirect RDMA


def gdr_findings(log: NcclLog, rows: Sequence[ProcessRow]) -> list[Finding]:
    """GPUDirect RDMA not (fully) used by inter-node RDMA connections, with the reason
    the log gives: the GPU-NIC distance against NCCL_NET_GDR_LEVEL (``distance 4 > 3``),
    no peer-memory module for the HCA (``(no module)`` / ``GPU Direct RDMA Disabled for
    HCA``), GPUDirect reads off (``read 0``), or the environment."""
    by_key = {p.key: p for p in log.processes}
    off = [r for r in rows if r.gdr in ("no", "partial", "receive only", "send only")]
    if not off:
        return []
    processes = [by_key[r.process] for r in off if r.process in by_key]
    distance = [
        (p, d) for p in processes for d in p.gdr if not d.enabled and d.distance is not None
    ]
    module = [(p, d) for p in processes for d in p.gdr if not d.enabled and d.distance is None]
    no_read = [(p, d) for p in processes for d in p.gdr if d.enabled and d.read == 0]
    env = [
        (p, name, value)
        for p in processes
        for name, value in p.env
        if name in ("NCCL_NET_GDR_LEVEL", "NCCL_IB_GDR_LEVEL", "NCCL_NET_GDR_READ")
    ]
    causes = []
    conclusions = [
        f"process {r.process}: {', '.join(r.inter_node)} (GPUDirect RDMA {r.gdr})" for r in off[:3]
    ]
    witnesses: list[LogLine | None] = [
        _transport_line(p, "NET/") or _transport_line(p, "COLLNET") for p in processes[:2]
    ]
    fix = []
    if distance:
        process, decision = distance[0]
        version = process.nccl_version
        assert decision.distance is not None and decision.level is not None  # noqa: S101
        far, level = path_name(decision.distance, version), path_name(decision.level, version)
        named = f" ({far} > {level})" if far and level else ""
        causes.append(
            f"the NIC is too far from the GPU: NCCL measured path type {decision.distance} "
            f"against NCCL_NET_GDR_LEVEL {decision.level}{named}, so it stages through host "
            "memory (the GPU and NIC are not under a common PCIe switch)"
        )
        fix.append(
            f"raise NCCL_NET_GDR_LEVEL to {far or 'the path type printed'} if that PCIe path "
            "supports peer-to-peer (check `nvidia-smi topo -m`), or use the NIC local to each GPU"
        )
        witnesses += [d.line for _, d in distance[:2]]
    if module:
        reasons = sorted({d.reason or "GPU Direct RDMA Disabled for HCA" for _, d in module})
        causes.append(
            "NCCL found no GPUDirect support for the NIC (" + "; ".join(reasons) + "): "
            "neither nvidia_peermem (nv_peer_mem) is loaded nor dma-buf is available"
        )
        fix.append(
            "modprobe nvidia_peermem, or use the open GPU kernel module on Linux >= 5.12 "
            "(dma-buf); `hpnet doctor` (gpudirect.*) checks both"
        )
        witnesses += [d.line for _, d in module[:2]]
    if no_read:
        causes.append(
            "GPUDirect reads are off (read 0): the NIC writes into GPU memory but sends from "
            "host memory (NCCL's default on some PCIe topologies, or NCCL_NET_GDR_READ=0)"
        )
        witnesses += [d.line for _, d in no_read[:1]]
    if env:
        causes.append("the environment sets " + ", ".join(sorted({f"{n}={v}" for _, n, v in env})))
        witnesses += [p.line(f"env:{n}") for p, n, _ in env[:2]]
    if not causes:
        causes.append(
            "the log does not say why (NCCL prints its GPUDirect decisions with "
            "NCCL_DEBUG_SUBSYS=NET): usually no nvidia_peermem / dma-buf for the NIC, or "
            "the NIC too far from the GPU for NCCL_NET_GDR_LEVEL"
        )
        fix.append(
            "rerun with NCCL_DEBUG_SUBSYS=INIT,NET to see the reason; `hpnet doctor` "
            "(gpudirect.*) checks the module, ACS and the GPU-NIC distance"
        )
    return [
        Finding(
            id="gdr-off",
            severity="warning",
            title=f"GPUDirect RDMA not (fully) used on {len(off)} process(es): network "
            "traffic is staged through host memory",
            cause="; ".join(causes),
            fix="; ".join(fix) if fix else "see the cause",
            evidence=quotes(witnesses),
            conclusions=tuple(conclusions),
            count=len(off),
            processes=tuple(r.process for r in off),
        )
    ]


# ---------------------------------------------------------------- the environment

#: what an echoed variable did, when its value is one a user should hear about:
#: (id, severity, title, cause, fix); ``{value}`` is the echoed value
_EnvRule = Callable[[str], "tuple[str, str, str, str, str] | None"]


def _ib_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not _set(value):
        return None
    return (
        "env-ib-disabled",
        "warning",
        f"NCCL_IB_DISABLE={value}: NCCL's RDMA transport is off",
        "with NCCL_IB_DISABLE set, NCCL uses TCP sockets (or a network plugin) between "
        "hosts even where RDMA NICs exist, typically 4-10x slower",
        "unset NCCL_IB_DISABLE (or set it to 0) on nodes with RDMA NICs",
    )


def _p2p_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not _set(value):
        return None
    return (
        "env-p2p-disabled",
        "warning",
        f"NCCL_P2P_DISABLE={value}: GPUs of one host talk through host memory",
        "P2P (NVLink or PCIe peer-to-peer) is off, so ranks on one host use SHM (a copy "
        "through host shared memory) or the network: NVLink GPUs lose most of their "
        "bandwidth",
        "unset NCCL_P2P_DISABLE unless P2P is broken on this platform (then fix that: "
        "`nvidia-smi topo -p2p r`)",
    )


def _shm_disable(value: str) -> tuple[str, str, str, str, str] | None:
    if not _set(value):
        return None
    return (
        "env-shm-disabled",
        "info",
        f"NCCL_SHM_DISABLE={value}: no shared-memory transport inside a host",
        "where P2P is not possible between two GPUs of one host, NCCL then uses the "
        "network transport between them",
        "unset NCCL_SHM_DISABLE unless /dev/shm is unusable in the container",
    )


def _net(value: str) -> tuple[str, str, str, str, str] | None:
    if value.lower() != "socket":
        return None
    return (
        "env-net-socket",
        "warning",
        f"NCCL_NET={value}: NCCL is told to use TCP sockets",
        "NCCL_NET forces the Socket network module between hosts, even where RDMA NICs exist",
        "unset NCCL_NET on nodes with RDMA NICs",
    )


def _algo(value: str) -> tuple[str, str, str, str, str] | None:
    return (
        "env-algo-forced",
        "info",
        f"NCCL_ALGO={value}: the algorithm is forced",
        "NCCL documents NCCL_ALGO as a debugging and tuning knob: a forced algorithm is used "
        "even where NCCL's tuning would pick a faster one (and fails where it cannot run)",
        "unset NCCL_ALGO for production runs unless a measurement shows it helps",
    )


def _proto(value: str) -> tuple[str, str, str, str, str] | None:
    return (
        "env-proto-forced",
        "info",
        f"NCCL_PROTO={value}: the protocols are restricted",
        "NCCL documents NCCL_PROTO as a debugging knob: restricting protocols costs "
        "latency or bandwidth at some sizes (LL128 off in particular)",
        "unset NCCL_PROTO unless a platform requires it (LL128 corruption on eRDMA without "
        "jumbo frames is one such case)",
    )


def _gid_index(value: str) -> tuple[str, str, str, str, str] | None:
    if value.strip() != "0":
        return None
    return (
        "env-gid-index-0",
        "warning",
        "NCCL_IB_GID_INDEX=0 selects the port's link-local GID",
        "GID 0 of a RoCE port is derived from its MAC address (fe80::/64, RoCE v1 on "
        "mlx5): it is not routable across subnets and lossless RoCE v2 fabrics do not "
        "carry it; RoCE v2 with an IPv4-mapped GID is usually index 3 (or 1 on eRDMA)",
        "pick a RoCE v2 IPv4-mapped index (`show_gids`, or `hpnet env` computes it); on "
        "NCCL >= 2.21.5 leave NCCL_IB_GID_INDEX unset and NCCL chooses",
    )


_ENV_RULES: dict[str, _EnvRule] = {
    "NCCL_IB_DISABLE": _ib_disable,
    "NCCL_P2P_DISABLE": _p2p_disable,
    "NCCL_SHM_DISABLE": _shm_disable,
    "NCCL_NET": _net,
    "NCCL_ALGO": _algo,
    "NCCL_PROTO": _proto,
    "NCCL_IB_GID_INDEX": _gid_index,
}


def env_findings(log: NcclLog, rows: Sequence[ProcessRow]) -> list[Finding]:
    """Read every ``NCCL_X set by environment to Y`` that changes the path traffic takes.

    The finding quotes the echo and, where the log shows its effect, the lines of that
    effect (SHM connections under NCCL_P2P_DISABLE, sockets under NCCL_IB_DISABLE).
    GID index 0 is judged only where the NICs are RoCE (or not listed): InfiniBand
    ports ignore the index from 2.22.3 and route by LID before.
    """
    findings: list[Finding] = []
    intra = {r.process: r.intra_node for r in rows}
    inter = {r.process: r.inter_node for r in rows}
    for name, rule in _ENV_RULES.items():
        hits: dict[str, list[ProcessLog]] = {}
        for process in log.processes:
            value = _env(process).get(name)
            if value is None:
                continue
            if (
                name == "NCCL_IB_GID_INDEX"
                and process.nics
                and all(n.link == "IB" for n in process.nics)
            ):
                continue
            hits.setdefault(value, []).append(process)
        for value, processes in hits.items():
            judged = rule(value)
            if judged is None:
                continue
            finding_id, severity, title, cause, fix = judged
            effect: list[LogLine | None] = []
            conclusions = []
            if name == "NCCL_P2P_DISABLE":
                effect = [
                    _transport_line(p, "SHM") or _transport_line(p, "NET/") for p in processes
                ]
                shm = [
                    p.key
                    for p in processes
                    if any(t.startswith("SHM") for t in intra.get(p.key, ()))
                ]
                if shm:
                    conclusions.append(f"{len(shm)} process(es) used SHM inside their host")
            elif name in ("NCCL_IB_DISABLE", "NCCL_NET"):
                effect = [_transport_line(p, "NET/Socket") for p in processes]
                tcp = [
                    p.key
                    for p in processes
                    if any(t.startswith("NET/Socket") for t in inter.get(p.key, ()))
                ]
                if tcp:
                    conclusions.append(
                        f"{len(tcp)} process(es) sent to other hosts over NET/Socket"
                    )
            elif name == "NCCL_IB_GID_INDEX":
                roce = [p for p in processes if any(n.link == "RoCE" for n in p.nics)]
                if roce:
                    conclusions.append(
                        f"the NICs of {len(roce)} process(es) are RoCE ports: the index selects "
                        "a GID on each of them"
                    )
                    effect = [p.line("nics:IB") for p in roce]
                else:
                    severity = "info"
                    conclusions.append(
                        "the log does not list the NICs' link layer: on InfiniBand ports the "
                        "index is not used"
                    )
            findings.append(
                Finding(
                    id=finding_id,
                    severity=severity,
                    title=title,
                    cause=cause,
                    fix=fix,
                    evidence=quotes([p.line(f"env:{name}") for p in processes][:2] + effect[:2]),
                    conclusions=tuple(conclusions),
                    count=len(processes),
                    processes=tuple(p.key for p in processes),
                )
            )
    findings += _nvls(log)
    return findings


def _nvls(log: NcclLog) -> list[Finding]:
    """NVLink SHARP asked for (NCCL_NVLS_ENABLE=1, or NVLS in NCCL_ALGO) and set up on no
    channel: ``0 nvls channels`` (init.cc), with the reason when the log gives one
    (``NVLS multicast support is not available on dev N``)."""
    asked = [
        p
        for p in log.processes
        if _set(_env(p).get("NCCL_NVLS_ENABLE")) or "nvls" in _env(p).get("NCCL_ALGO", "").lower()
    ]
    none = [p for p in asked if p.channels is not None and p.channels[2] == 0]
    if not none:
        return []
    unsupported = [p for p in none if p.nvls_support is False]
    cause = (
        "NCCL reports NVLS multicast as not available on the GPU: no NVSwitch with "
        "multicast (NVLink SHARP needs H100/H200/B200 NVSwitch systems), the Fabric Manager "
        "not running, or a driver / CUDA older than NVLS needs (CUDA 12.1, driver 530)"
        if unsupported
        else "NCCL set up no NVLS channel (the log does not say why: NCCL_DEBUG_SUBSYS=INIT,NVLS "
        "shows it): NVLS needs an NVSwitch system with the Fabric Manager, CUDA >= 12.1, and "
        "is skipped for single-GPU-per-node communicators"
    )
    return [
        Finding(
            id="nvls-not-used",
            severity="warning",
            title="NVLink SHARP (NVLS) was asked for and NCCL set up 0 NVLS channels",
            cause=cause,
            fix="check `nvidia-smi -q | grep -i fabric` and `systemctl status "
            "nvidia-fabricmanager`; unset NCCL_NVLS_ENABLE / NVLS in NCCL_ALGO where the "
            "system has no NVLS",
            evidence=quotes(
                line
                for p in none[:2]
                for line in (
                    p.line("env:NCCL_NVLS_ENABLE") or p.line("env:NCCL_ALGO"),
                    p.line("nvls-support"),
                    p.line("channels"),
                )
            ),
            count=len(none),
            processes=tuple(p.key for p in none),
        )
    ]


# ---------------------------------------------------------------- placement


def placement_findings(
    log: NcclLog,
    *,
    same_host_net: Sequence[tuple[ProcessLog, str]],
    split_by_hostid: Sequence[tuple[ProcessLog, str]],
    indistinct: Sequence[tuple[ProcessLog, str]],
    shared: Sequence[str] = (),
) -> list[Finding]:
    """NET between ranks of one machine: forced (environment), chosen by NCCL's topology,
    or on purpose (NCCL_HOSTID made several NCCL hosts); and NCCL counting more hosts than
    the log's names tell apart. Each entry: (process, the conclusion)."""
    findings = []
    if shared:
        findings.append(
            Finding(
                id="ranks-share-a-gpu",
                severity="error",
                title="ranks of one communicator run on the same GPU",
                cause="the launcher started more ranks on a host than it has GPUs, or ranks "
                "kept the same device (LOCAL_RANK not used to pick it, CUDA_VISIBLE_DEVICES "
                "the same for all): NCCL refuses a communicator with two ranks on one GPU "
                "('Duplicate GPU detected')",
                fix="one rank per GPU: torch.cuda.set_device(LOCAL_RANK) before init, and "
                "--nproc-per-node equal to the GPUs of a node",
                conclusions=tuple(shared[:MAX_EVIDENCE]),
                count=len(shared),
            )
        )
    if same_host_net:
        processes = list({p.key: p for p, _ in same_host_net}.values())
        forcing = sorted(
            {
                f"{name}={value}"
                for p in processes
                for name, value in p.env
                if (name in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE") and _set(value))
                or (name == "NCCL_NET")
                or (name == "NCCL_P2P_LEVEL" and value.upper() in ("LOC", "0"))
            }
        )
        witnesses: list[LogLine | None] = [_transport_line(p, "NET/") for p in processes[:3]]
        if forcing:
            witnesses = [
                p.line(f"env:{item.split('=', 1)[0]}") for p in processes[:1] for item in forcing
            ] + witnesses
            cause = (
                f"{', '.join(forcing)} in the environment: P2P / SHM between GPUs of one "
                "host are off, so their traffic goes through the NIC or TCP"
            )
            severity = "warning"
            fix = "unset " + ", ".join(sorted({f.split("=", 1)[0] for f in forcing}))
        else:
            cause = (
                "the log shows no setting that forces it, so either NCCL's topology chose it "
                "(ncclTopoCheckNet, 2.12+: both GPUs reach a NIC through a PCIe switch faster "
                "than they reach each other, e.g. no NVLink and no common switch; "
                "NCCL_NET_DISABLE_INTRA=1 turns this off), or P2P / SHM were unusable: "
                "NCCL_P2P_DISABLE / NCCL_SHM_DISABLE / NCCL_NET set without the log echoing "
                "them (NCCL_DEBUG_SUBSYS=ENV shows them), or ranks in containers without a "
                "shared IPC namespace or /dev/shm"
            )
            severity = "warning"
            fix = (
                "if the GPUs have NVLink or share a PCIe switch this costs bandwidth: check the "
                "environment and, for containers, run the ranks of one node in one IPC "
                "namespace (docker --ipc=host; Kubernetes: a shared /dev/shm)"
            )
        findings.append(
            Finding(
                id="net-inside-node",
                severity=severity,
                title="ranks on the same machine talked through the network transport "
                "(not a cross-node link)",
                cause=cause,
                fix=fix,
                evidence=quotes(witnesses),
                conclusions=tuple(text for _, text in same_host_net[:MAX_EVIDENCE]),
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
                evidence=quotes(p.line("env:NCCL_HOSTID") for p, _ in split_by_hostid),
                conclusions=tuple(text for _, text in split_by_hostid[:MAX_EVIDENCE]),
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
                conclusions=tuple(text for _, text in indistinct[:MAX_EVIDENCE]),
                count=len(indistinct),
            )
        )
    return findings
