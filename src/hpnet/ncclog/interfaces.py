"""Socket interfaces that cannot reach another host: host-local bridges, a container's
veth or loopback in NCCL's socket list or carrying its bootstrap, and IPv6 link-local
addresses in the socket list of a job on more than one host. Pure functions over the
parsed log, for :func:`hpnet.ncclog.network.network_findings`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from hpnet.ncclog.choice import Choice
from hpnet.ncclog.findings import MAX_EVIDENCE, quotes
from hpnet.ncclog.model import NcclLog, Nic, ProcessLog
from hpnet.ncclog.releases import parse_range
from hpnet.result import Finding, Severity

__all__ = [
    "DOCKER_BRIDGE", "LOCAL_INTERFACES", "in_docker_bridge", "link_local_interfaces",
    "local_interfaces",
]  # fmt: skip

#: interfaces that exist on one host only: a socket transport over them cannot reach
#: another node (NCCL skips docker* and lo by default, virbr* since 2.28)
LOCAL_INTERFACES = ("docker", "virbr", "br-", "veth", "cni", "flannel", "lo")


#: the subnet of Docker's default bridge network (docker0): a container's address there
#: is reachable from its own host only (every host's first container is 172.17.0.2)
DOCKER_BRIDGE = ipaddress.ip_network("172.17.0.0/16")


def in_docker_bridge(address: str) -> bool:
    """Is ``address`` (an IP, maybe with ``%scope``; a host name is not) in
    :data:`DOCKER_BRIDGE`?

    >>> in_docker_bridge("172.17.0.2"), in_docker_bridge("172.18.0.2"), in_docker_bridge("h1")
    (True, False, False)
    """
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]) in DOCKER_BRIDGE
    except ValueError:
        return False


def _host_local(name: str, address: str) -> bool:
    """Is interface ``name`` (with ``address``, where the line gives it) one host's own? A
    veth with an address other than link-local is a container's own end of its pair, its
    way out (a runtime that names it veth0): not the host side, which holds none."""
    if not name.startswith(LOCAL_INTERFACES):
        return False
    if name.startswith("veth") and address:
        return address.lower().startswith(("fe8", "fe9", "fea", "feb", "127.", "::1", "169.254."))
    return True


def local_interfaces(log: NcclLog, choices: Mapping[str, Choice | None]) -> list[Finding]:
    """A socket list or bootstrap interface that holds host-local bridges or loopback
    (docker0, virbr0, docker's br-<id>, a container's veth, lo): connections to other
    nodes through them fail or hang. Said when the socket transport may carry the traffic
    (NCCL chose it, or NCCL_IB found no device), and for the bootstrap interface always;
    an error where a connection line shows traffic going through one (``NET/Socket/1``:
    the socket list's interface 1)."""
    hits: list[tuple[ProcessLog, list[str], bool]] = []
    carrying: list[tuple[ProcessLog, str, str]] = []  # (process, interface, its transport)
    early: list[tuple[ProcessLog, Nic]] = []  # (process, the interface it bootstraps on)
    said_release = [a for p in log.processes if (a := _release_after_247(p)) is not None]
    job_after_247 = bool(said_release) and all(said_release)
    for process in log.processes:
        local = [n.name for n in process.socket_interfaces if _host_local(n.name, n.address or "")]
        boot = []
        for interface in process.bootstrap:  # "eth0:10.0.0.1<0>", "mlx5_0:1 (OOB)"
            name, _, address = interface.split("<", 1)[0].partition(":")
            if "(OOB)" not in interface and _host_local(name, address):
                boot.append(name)
        first = _first_bootstraps(process, job_after_247)
        bootstraps_local = first is not None and _host_local(first.name, first.address or "")
        if bootstraps_local and first is not None:
            early.append((process, first))
        if (
            boot
            or bootstraps_local
            or (local and _sockets_may_carry(process, choices.get(process.key)))
        ):
            hits.append((process, sorted(set(local + boot)), bool(boot)))
        carrying += _carried(
            process,
            {
                n.index: n.name
                for n in process.socket_interfaces
                if n.name.startswith(LOCAL_INTERFACES)
            },
        )
    if not hits:
        return []
    said = [
        f"process {p.key}: {', '.join(names)} in "
        + ("its bootstrap interface" if boot else "NCCL's socket interfaces")
        for p, names, boot in hits[:MAX_EVIDENCE]
    ]
    said += [
        f"process {p.key}: its connections go via {raw}, which is {name}: they cannot reach "
        "another node through it"
        for p, name, raw in carrying[:MAX_EVIDENCE]
    ]
    said += [
        f"process {p.key}: {nic.name} is the first of its socket "
        "interfaces, which NCCL 2.3 to 2.4.7 listens and connects on for its bootstrap "
        "(the root's address in the unique id other ranks connect to); from 2.4.8 the "
        "bootstrap has a list of its own ('Bootstrap : Using'), which this process "
        f"{'did not print' if not p.nccl_version else f'printed none of ({p.nccl_version})'}"
        for p, nic in early[:MAX_EVIDENCE]
    ]
    return [
        Finding(
            id="socket-local-interfaces",
            severity=Severity.ERROR if carrying else Severity.WARNING,
            title="NCCL's connections go through a network interface that exists on one host only"
            if carrying
            else "NCCL uses network interfaces that exist on one host only",
            cause="NCCL_SOCKET_IFNAME is unset or too broad, so bridges (docker0, virbr0, "
            "docker's br-*), a container's veth or loopback are in NCCL's socket list or carry "
            "its bootstrap: connections to other nodes through them fail or hang (NCCL skips "
            "docker* and lo by default, virbr* only since 2.28, veth never)",
            fix="set NCCL_SOCKET_IFNAME to the interface that reaches the other nodes "
            "(`hpnet env` picks one), e.g. NCCL_SOCKET_IFNAME==eth0",
            evidence=quotes(
                [
                    line
                    for p, _, boot in hits[:3]
                    for line in ((p.line("bootstrap"),) if boot else ()) + (p.line("nics:Socket"),)
                ]
                + [p.line(f"transport:{raw}") for p, _, raw in carrying[:3]]
            ),
            conclusions=tuple(said),
            count=len(hits),
            processes=tuple(p.key for p, _, _ in hits),
        )
    ]


def _carried(
    process: ProcessLog, names: Mapping[int | None, str]
) -> list[tuple[ProcessLog, str, str]]:
    """The process's socket connections through the interfaces ``names`` lists (by their
    index in the socket list: ``NET/Socket/1`` is interface 1): (process, interface,
    transport), one per interface and transport."""
    used = {
        (names[c.transport.nic], c.transport.raw)
        for c in process.connections
        if c.transport.name == "Socket" and c.transport.nic in names
    }
    return [(process, name, raw) for name, raw in sorted(used)]


def _release_after_247(process: ProcessLog) -> bool | None:
    """Is the process's NCCL 2.4.8 or later (None: its lines do not say)?"""
    lowest, _ = parse_range(process.nccl_version or process.version_range)
    return None if lowest is None else lowest >= (2, 4, 8)


def _first_bootstraps(process: ProcessLog, job_after_247: bool) -> Nic | None:
    """The socket interface a process of NCCL 2.3 to 2.4.7 bootstraps on, where nothing
    says it is later (its own lines, or every other process of the job whose release is
    said): device 0 of NET/Socket's list (bootstrap.cc: ``ncclBootstrapNet =
    &ncclNetSocket``, listen and connect on device 0, 2.3.5-2.4.7); 2.4.8 on prints its
    own ``Bootstrap : Using`` list."""
    if process.bootstrap:
        return None
    after = _release_after_247(process)
    if after or (after is None and job_after_247):
        return None
    return next((n for n in process.socket_interfaces if n.index == 0), None)


def _sockets_may_carry(process: ProcessLog, choice: Choice | None) -> bool:
    """NCCL chose its socket transport, or found no RDMA device and said no choice."""
    if choice is not None:
        return choice.network == "Socket"
    return process.ib_no_device


def _link_local(nic: Nic) -> str | None:
    """The IPv6 link-local address (fe80::/10) of a socket interface, or None."""
    address = (nic.address or "").split("<", 1)[0]
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    return address if parsed.version == 6 and parsed.is_link_local else None


def link_local_interfaces(log: NcclLog, choices: Mapping[str, Choice | None]) -> list[Finding]:
    """IPv6 link-local addresses in the socket list of a job on more than one host.

    NCCL keeps them (misc/socket.cc, every release: only IPv6 loopback is skipped), and
    its socket transport listens on each listed interface's address, scope id included,
    for a peer to connect to (net_socket.cc ``ncclSocketListen``): a peer on another
    host reaches that address only over the same link, and the scope (an interface
    index of the listening host) names nothing there. Said where the socket transport
    may carry traffic; an error where a connection line shows it going through one."""
    hosts = {p.host for p in log.processes if p.host}
    if len(hosts) < 2:
        return []
    hits: list[tuple[ProcessLog, list[str]]] = []
    carrying: list[tuple[ProcessLog, str, str]] = []
    for process in log.processes:
        local: dict[int | None, str] = {
            n.index: f"{n.name} ({address})"
            for n in process.socket_interfaces
            if (address := _link_local(n))
        }
        if not local or not _sockets_may_carry(process, choices.get(process.key)):
            continue
        hits.append((process, list(local.values())))
        carrying += _carried(process, local)
    if not hits:
        return []
    said = [
        f"process {p.key}: {', '.join(names)} in NCCL's socket interfaces"
        for p, names in hits[:MAX_EVIDENCE]
    ]
    said += [
        f"process {p.key}: its connections go via {raw}, which is {name}"
        for p, name, raw in carrying[:MAX_EVIDENCE]
    ]
    return [
        Finding(
            id="socket-link-local",
            severity=Severity.ERROR if carrying else Severity.WARNING,
            title="NCCL's connections between hosts go to an IPv6 link-local address"
            if carrying
            else "NCCL's socket interfaces hold IPv6 link-local addresses, on a job of "
            f"{len(hosts)} hosts",
            cause="with NCCL_SOCKET_IFNAME unset or broad, NCCL lists every interface but "
            "docker* and lo, with an IPv6 link-local address (fe80::) where it has no other, "
            "and its socket transport has peers connect to each listed address: another "
            "host reaches a link-local address only on the same link, and its scope id is an "
            "interface of the listening host: the connections NCCL puts there fail or hang",
            fix="NCCL_SOCKET_FAMILY=AF_INET keeps IPv4 addresses only; or set "
            "NCCL_SOCKET_IFNAME to the routed interface of each host (`hpnet env` picks one)",
            evidence=quotes(
                [p.line("nics:Socket") for p, _ in hits[:3]]
                + [p.line(f"transport:{raw}") for p, _, raw in carrying[:3]]
            ),
            conclusions=tuple(said),
            count=len(hits),
            processes=tuple(p.key for p, _ in hits),
        )
    ]
