"""Conclusions about the network between hosts: inter-node traffic over TCP sockets (as
configured, or a fallback, and why), a node that would send it there, NCCL_IB_HCA that
selects nothing or more than it names, NCCL_SOCKET_IFNAME prefixes, and socket lists or
bootstrap interfaces that hold host-local bridges or link-local addresses
(:mod:`hpnet.ncclog.interfaces`). Pure functions over the parsed log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.choice import Choice
from hpnet.ncclog.conclusions import env_of, switched_on, transport_line
from hpnet.ncclog.findings import MAX_EVIDENCE, quotes
from hpnet.ncclog.interfaces import link_local_interfaces, local_interfaces
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.result import Finding, Severity

if TYPE_CHECKING:
    from hpnet.nccl.lists import NcclList
    from hpnet.ncclog.report import ProcessRow

__all__ = ["network_findings"]


def network_findings(
    log: NcclLog,
    rows: Sequence[ProcessRow],
    choices: Mapping[str, Choice | None],
    *,
    socket_expected: bool,
    one_host: bool = False,
) -> list[Finding]:
    """Inter-node traffic over TCP, a node that would send it there, NCCL_IB_HCA that
    selects nothing or more than it names, and interfaces that exist on one host.
    ``one_host``: the log proves a single-host run (nothing crosses a network)."""
    by_key = {p.key: p for p in log.processes}
    findings = _sockets(log, rows, by_key, choices, socket_expected, one_host=one_host)
    findings += _hca_matched_nothing(log)
    findings += _hca_prefix(log)
    findings += _ifname_prefix(log)
    findings += local_interfaces(log, choices)
    findings += link_local_interfaces(log, choices)
    findings += _ofi_over_tcp(log)
    findings += _iwarp_devices(log)
    findings += _soft_roce_devices(log)
    return findings


def _sockets(
    log: NcclLog,
    rows: Sequence[ProcessRow],
    by_key: Mapping[str, ProcessLog],
    choices: Mapping[str, Choice | None],
    socket_expected: bool,
    *,
    one_host: bool,
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
                if (name == "NCCL_IB_DISABLE" and switched_on(value))
                or (name == "NCCL_NET" and value.lower() == "socket")
            }
        )
        traffic = quotes(transport_line(p, "NET/Socket") for p in socket_processes)
        if forced or socket_expected:
            env_lines = [
                p.line(f"env:{item.split('=', 1)[0]}") for p in socket_processes for item in forced
            ]
            return [
                Finding(
                    id="sockets-chosen",
                    severity=Severity.INFO if socket_expected else Severity.WARNING,
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
        hca = sorted(
            {env_of(p)["NCCL_IB_HCA"] for p in log.processes if "NCCL_IB_HCA" in env_of(p)}
        )
        if hca and no_device:
            reasons.append(f"NCCL_IB_HCA={hca[0]} may match no device")
        return [
            Finding(
                id="socket-fallback",
                severity=Severity.ERROR,
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
        if not switched_on(env_of(p).get("NCCL_IB_DISABLE"))
        and (choices.get(p.key) is None or choices[p.key].network == "Socket")  # type: ignore[union-attr]
    ]
    if fallback and not socket_expected:
        evidence = quotes(
            [p.line("ib-no-device") for p in fallback[:2]]
            + [p.line("network:Socket") for p in fallback[:2]]
        )
        cause = (
            "no RDMA NIC is usable in this machine or container (none present, the "
            "verbs library or provider missing, /dev/infiniband not passed in, or "
            "NCCL_IB_HCA matching none)"
        )
        doctor = (
            "`hpnet doctor` says what is missing (devices in the container, provider "
            "library, port state)"
        )
        # one host: nothing here crossed a network, a note; else a warning
        title, fix = (
            ("nothing to do for this single-host run; a multi-node job from here would use "
             "TCP sockets", f"nothing to do on one host; before running across nodes: {doctor}")
            if one_host
            else ("a multi-node job from here would use TCP sockets",
                  f"on a machine with RDMA NICs: {doctor}; on a single node, nothing to do")
        )  # fmt: skip
        return [
            Finding(
                id="no-rdma-device",
                severity=Severity.INFO if one_host else Severity.WARNING,
                title=f"NCCL found no usable RDMA device: {title}",
                cause=cause,
                fix=fix,
                evidence=evidence,
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
        and "NCCL_IB_HCA" in env_of(p)
        and not any("libibverbs" in n.text for n in p.plugin_notes)
    ]
    if not hit:
        return []
    values = sorted({env_of(p)["NCCL_IB_HCA"] for p in hit})
    return [
        Finding(
            id="ib-hca-matched-nothing",
            severity=Severity.ERROR,
            title=f"NCCL_IB_HCA={values[0]} selected no RDMA device: NCCL found none to use",
            cause="the names or ports in NCCL_IB_HCA do not exist on this machine or in this "
            "container (udev may have renamed mlx5_N to rocepXsY or ibpXsY; the devices may "
            "not be passed in), or their ports are not ACTIVE (NCCL skips a port that is "
            "down or still initialising), so NET/IB has no device and NCCL uses sockets",
            fix="list the devices and their port states here (`hpnet detect`, or "
            "`ibv_devinfo`) and set NCCL_IB_HCA from them (`hpnet env`), or unset it to let "
            "NCCL take every active port",
            evidence=quotes(
                line
                for p in hit[:3]
                for line in (p.line("env:NCCL_IB_HCA"), p.line("ib-no-device"))
            ),
            count=len(hit),
            processes=tuple(p.key for p in hit),
        )
    ]


def _prefix_list(value: str | None) -> NcclList | None:
    """``value`` as NCCL reads an NCCL_IB_HCA / NCCL_SOCKET_IFNAME list when its entries
    are prefixes (no leading ``=`` or ``^``); None otherwise, or when it does not parse."""
    from hpnet.nccl.lists import parse_list  # noqa: PLC0415

    if not value:
        return None
    try:
        spec = parse_list(value)
    except ValueError:
        return None
    return None if spec.exact or spec.exclude else spec


def _hca_prefix(log: NcclLog) -> list[Finding]:
    """NCCL_IB_HCA entries are prefixes: ``mlx5_1`` also takes ``mlx5_10``."""

    for process in log.processes:
        value = env_of(process).get("NCCL_IB_HCA")
        spec = _prefix_list(value) if process.nics else None
        if value is None or spec is None:
            continue
        names = {e.name for e in spec.entries}
        extra = [n.name for n in process.nics if n.name not in names and spec.matches(n.name)]
        if extra:
            return [
                Finding(
                    id="ib-hca-prefix",
                    severity=Severity.WARNING,
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

    picked: dict[str, set[str]] = {}
    witnesses: list[LogLine | None] = []
    for process in log.processes:
        value = env_of(process).get("NCCL_SOCKET_IFNAME")
        spec = _prefix_list(value)
        if value is None or spec is None:
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
            severity=Severity.INFO,
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


#: libfabric providers that are TCP / UDP, not an RDMA device
_TCP_PROVIDERS = ("tcp", "sockets", "udp")


def _ofi_over_tcp(log: NcclLog) -> list[Finding]:
    """aws-ofi-nccl running over a libfabric TCP provider ("NET/OFI Selected Provider is
    tcp (found 1 nics)"): the plugin works, its traffic is TCP (aws/aws-ofi-nccl#803: a
    p4d container without its EFA devices, a plugin built without AWS support)."""
    hit = [
        p
        for p in log.processes
        if any(name.split(";")[0] in _TCP_PROVIDERS for name, _fabric, _n in p.providers)
    ]
    if not hit:
        return []
    return [
        Finding(
            id="ofi-provider-tcp",
            severity=Severity.WARNING,
            title="the AWS OFI plugin runs over libfabric's TCP provider: no EFA, no RDMA",
            cause="libfabric offered the plugin no EFA device, so it took a TCP provider: "
            "traffic between hosts goes over TCP through libfabric, without GPUDirect. The "
            "EFA devices are not in this container (/dev/infiniband), the instance has none "
            "or its driver is missing, or the plugin was built without its AWS platform "
            "support (which asks for the efa provider and logs 'Configuring AWS-specific "
            "options')",
            fix="pass the EFA devices into the container (docker --device "
            "/dev/infiniband/uverbs0 ...; Kubernetes: the EFA device plugin's "
            "vpc.amazonaws.com/efa resource), check `fi_info -p efa` there, and use an "
            "aws-ofi-nccl built for AWS; FI_PROVIDER=efa makes a missing EFA fail instead "
            "of falling back",
            evidence=quotes(line for p in hit[:3] if (line := p.line("provider"))),
            count=len(hit),
            processes=tuple(p.key for p in hit),
        )
    ]


#: verbs device names of iWARP-only drivers: Intel X722 (i40iw), Chelsio T4-T6
#: (cxgb4: iw_cxgb4), soft-iWARP (siw). The kernel reports an iWARP port's link layer as
#: Ethernet, so NCCL's IB module lists it as RoCE
IWARP_PREFIXES = ("i40iw", "cxgb4", "iwcxgb", "siw")


def _iwarp_devices(log: NcclLog) -> list[Finding]:
    """An iWARP device in NET/IB's list. NCCL's IB module keeps every active port whose
    link layer is InfiniBand or Ethernet (net_ib.cc, ncclIbInit) and connects its queue
    pairs itself, exchanging QP numbers and GIDs over a socket and moving them to RTR
    and RTS with ibv_modify_qp (the RoCE/IB way). An iWARP queue pair is connected by
    the iWARP connection manager (rdma_cm) instead: channels NCCL gives that device
    cannot connect or carry data."""
    hit: dict[str, list[ProcessLog]] = {}
    for p in log.processes:
        for nic in p.nics:
            if nic.name.startswith(IWARP_PREFIXES):
                hit.setdefault(nic.name, []).append(p)
    if not hit:
        return []
    names = sorted(hit)
    processes = list({p.key: p for found in hit.values() for p in found}.values())
    return [
        Finding(
            id="iwarp-device-listed",
            severity=Severity.WARNING,
            title=f"NCCL's IB transport lists {', '.join(names)}, an iWARP device",
            cause="the kernel reports an iWARP port's link layer as Ethernet, so NCCL takes "
            "it as RoCE; NCCL connects its queue pairs the IB/RoCE way, which an iWARP "
            "device does not support (its connections go through rdma_cm): channels on it "
            "fail to connect or time out",
            fix=f"keep NCCL off it: NCCL_IB_HCA=^{','.join(names)} (or name the RoCE/IB "
            "ports NCCL should use)",
            evidence=quotes(p.line("nics:IB") for p in processes[:MAX_EVIDENCE]),
            count=len(processes),
            processes=tuple(p.key for p in processes),
        )
    ]


def _soft_roce_devices(log: NcclLog) -> list[Finding]:
    """Soft-RoCE (rdma_rxe, devices ``rxe*``) in NET/IB's list: RoCE done by the kernel
    on an ordinary Ethernet NIC. NCCL connects it like any RoCE port; the CPU moves the
    data, with no GPUDirect RDMA (no PCI device: "Could not find real path of rxe0")."""
    hit = [p for p in log.processes if any(n.name.startswith("rxe") for n in p.nics)]
    if not hit:
        return []
    names = sorted({n.name for p in hit for n in p.nics if n.name.startswith("rxe")})
    return [
        Finding(
            id="soft-roce-device",
            severity=Severity.WARNING,
            title=f"NCCL's IB transport uses {', '.join(names)}, Soft-RoCE (RDMA in software)",
            cause="rdma_rxe runs RoCE in the kernel over an ordinary Ethernet NIC: the CPU "
            "moves every byte and there is no GPUDirect RDMA, so it is often no faster than "
            "NCCL's TCP sockets over the same NIC",
            fix="for real RDMA use a RoCE or InfiniBand NIC; else NCCL_IB_DISABLE=1 (TCP "
            "sockets over the same NIC) is as fast and simpler",
            evidence=quotes(p.line("nics:IB") for p in hit[:MAX_EVIDENCE]),
            count=len(hit),
            processes=tuple(p.key for p in hit),
        )
    ]
