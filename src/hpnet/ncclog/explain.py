"""Facts of ``hpnet verify`` that explain a number: no problem in themselves, they say
why NCCL built what it built, each on the log's own lines.

- ``topology-file``: ``NCCL_TOPO_FILE set by environment to X`` (param.cc, 2.7.3+):
  NCCL read the machine's PCI / NVLink / NIC tree from that file instead of detecting
  it (graph/topo.cc ``ncclTopoGetSystem``), so rings, trees and the channel count of
  ``%d coll channels, ...`` (init.cc) follow the file, not the machine;
- ``bootstrap-link-local``: ``Bootstrap : Using ib0:fe80::...%ib0<0>``: the address
  NCCL publishes for out-of-band connections is IPv6 link-local (fe80::/10, RFC 4291
  2.5.6), reachable on that one link only (misc/socket.cc keeps the scope id);
- ``bootstrap-docker-bridge``: ``Bootstrap : Using eth0:172.17.0.2<0>``: the address is
  in Docker's default bridge subnet (172.17.0.0/16), reachable from its host only;
- ``nic-distance-sys``: ``GPU Direct RDMA Disabled/Enabled for GPU x / HCA y (distance
  d > l)`` (transport/net_ib.cc / net.cc) with ``d`` NCCL's path type SYS: the path from
  the GPU to that NIC crosses the inter-socket link (graph/topo.h ``PATH_SYS``);
- ``pxn``: ``Connected all rings, use ring PXN 1 GDR g`` (2.24+, graph/connect.cc): ranks
  send through a NIC next to another GPU of the node, over NVLink (PXN, 2.12+);
- ``nvls``: ``%d coll channels, %d collnet channels, %d nvls channels, ...`` with N > 0
  NVLS channels (init.cc, 2.17+): NVLink SHARP set up in the NVSwitches;
- ``slow-pci-link``: ``+ PCI[0.2] - PCI/0-65000`` in the topology dump (GRAPH): NCCL
  rates a PCIe link below 3 GB/s (x1 at 2.5 GT/s: a VM's emulated port, a narrow slot);
- ``collnet``: ``CollNet NN/N : r [send] via COLLNET/...`` connection lines
  (transport/coll_net.cc): in-network reduction (SHARP) connected, with the plugin's
  device when it names one (``Sharp rank r/n initialized on mlx5_0:1``). Neither that
  device line alone (group creation can still fail) nor the ``collnet channels`` count
  (2.20+ print it equal to the coll channels on machines without any CollNet device)
  proves it.

Pure functions over the parsed log.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence

from hpnet.ncclog.findings import MAX_EVIDENCE, quotes
from hpnet.ncclog.gdr import _PATH_TYPES, path_name
from hpnet.ncclog.interfaces import DOCKER_BRIDGE, in_docker_bridge
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.ncclog.releases import parse_range

__all__ = ["Fact", "explaining_facts"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Fact:
    """What the log shows NCCL set up or was told, that explains a number.

    >>> Fact(id="pxn", text="PXN on", evidence=("job.log:3: ...",)).id
    'pxn'
    """

    #: kebab-case and stable: ``topology-file``, ``bootstrap-link-local``, ...
    id: str
    #: one sentence: the fact and what it explains
    text: str
    #: the lines that show it, ``file:line: the line as written``
    evidence: tuple[str, ...] = ()
    #: the processes (``host:pid``) whose lines show it
    processes: tuple[str, ...] = ()


#: ``fe80::`` to ``febf::``: IPv6 link-local unicast (RFC 4291 2.5.6)
_LINK_LOCAL = re.compile(r"^[^:]+:(fe[89ab][0-9a-f]:[0-9a-f:]*)(%\S+?)?<", re.IGNORECASE)
#: an IPv4 bootstrap address, ``eth0:172.17.0.2<0>``
_IPV4 = re.compile(r"^[^:]+:(\d{1,3}(?:\.\d{1,3}){3})<")
_PXN = re.compile(r"use ring PXN (\d+)")


def explaining_facts(log: NcclLog) -> tuple[Fact, ...]:
    """Every fact of :mod:`this module <hpnet.ncclog.explain>` the log shows, one per
    kind and value, with up to :data:`MAX_EVIDENCE` lines and the processes that show it.

    >>> from hpnet.ncclog.facts import parse_nccl_log
    >>> log = parse_nccl_log(["h:1:1 [0] NCCL INFO Bootstrap : Using ib0:fe80::1%ib0<0>"])
    >>> [f.id for f in explaining_facts(log)]
    ['bootstrap-link-local']
    """
    facts: list[Fact] = []
    for reader in _READERS:
        facts += reader(log.processes)
    return tuple(facts)


def _grouped(
    found: Iterable[tuple[str, ProcessLog, Sequence[LogLine | None]]],
    text: Callable[[str, int], str],
    fact_id: str,
) -> list[Fact]:
    """One fact per value: ``text(value, number of processes)``, with their lines."""
    by_value: dict[str, list[tuple[ProcessLog, Sequence[LogLine | None]]]] = {}
    for value, process, lines in found:
        by_value.setdefault(value, []).append((process, lines))
    return [
        Fact(
            id=fact_id,
            text=text(value, len(entries)),
            evidence=quotes((line for _, lines in entries for line in lines), MAX_EVIDENCE),
            processes=tuple(p.key for p, _ in entries),
        )
        for value, entries in by_value.items()
    ]


def _on(count: int) -> str:
    return "on 1 process" if count == 1 else f"on {count} processes"


def _topology_file(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = [
        (dict(p.env)["NCCL_TOPO_FILE"], p, (p.line("env:NCCL_TOPO_FILE"), p.line("channels")))
        for p in processes
        if "NCCL_TOPO_FILE" in dict(p.env)
    ]

    def text(path: str, count: int) -> str:
        return (
            f"NCCL_TOPO_FILE={path} ({_on(count)}): NCCL read the GPUs, NICs and their "
            "PCI / NVLink links from this file instead of detecting them, so its rings, "
            "trees and channel counts follow the file; a file written for another machine "
            "(or a VM's wrong PCI ids) gives fewer channels or far NICs"
        )

    return _grouped(found, text, "topology-file")


def _bootstraps_on(
    processes: Sequence[ProcessLog], wanted: Callable[[str], bool]
) -> list[tuple[str, ProcessLog, Sequence[LogLine | None]]]:
    """The processes whose bootstrap address (the first NCCL publishes, ``eth0:1.2.3.4<0>``)
    is ``wanted``: (the interface and address, the process, its line)."""
    return [
        (first.split("<", 1)[0], process, (process.line("bootstrap"),))
        for process in processes
        if (first := process.bootstrap[0] if process.bootstrap else "") and wanted(first)
    ]


def _on_docker_bridge(bootstrap: str) -> bool:
    found = _IPV4.match(bootstrap)
    return found is not None and in_docker_bridge(found.group(1))


def _bootstrap_link_local(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = _bootstraps_on(processes, lambda first: bool(_LINK_LOCAL.match(first)))

    def text(address: str, count: int) -> str:
        return (
            f"bootstrap on the IPv6 link-local address {address} ({_on(count)}): peers "
            "reach it only on that same link, and not at all from an IPv4-only interface "
            "(NCCL_SOCKET_IFNAME / NCCL_SOCKET_FAMILY choose the interface and family)"
        )

    return _grouped(found, text, "bootstrap-link-local")


def _bootstrap_docker_bridge(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = _bootstraps_on(processes, _on_docker_bridge)

    def text(address: str, count: int) -> str:
        return (
            f"bootstrap on {address} ({_on(count)}), in {DOCKER_BRIDGE}, the subnet of "
            "Docker's default bridge network: a container's address there is reachable "
            "from its own host only (every host's first container is 172.17.0.2), so a job "
            "across hosts needs the containers on the host network (--network=host) or "
            "NCCL_SOCKET_IFNAME on an interface the hosts share"
        )

    return _grouped(found, text, "bootstrap-docker-bridge")


def _nic_distance_sys(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = []
    for process in processes:
        for decision in process.gdr:
            if decision.distance is None:
                continue
            if _path_of(decision.distance, process) in ("SYS", "SOC"):
                hca = decision.hca or "the NIC"
                found.append((hca, process, (decision.line,)))
                break

    def text(hca: str, count: int) -> str:
        return (
            f"NCCL's topology puts {hca} at distance SYS from the GPU ({_on(count)}): the "
            "path crosses the link between CPU sockets, which caps bandwidth to that NIC "
            "and keeps GPUDirect RDMA off unless NCCL_NET_GDR_LEVEL=SYS"
        )

    return _grouped(found, text, "nic-distance-sys")


def _path_of(number: int, process: ProcessLog) -> str | None:
    """NCCL's name of path type ``number`` in the process's release; without a version
    line, the one name every release of its line-format range gives that number (a
    release whose table is shorter cannot print it), else None.

    Path types moved in 2.4.6, 2.6, 2.8, 2.12, 2.26 and 2.27 (graph/topo.h), so a bare
    ``distance 7`` is SYS only where the range allows nothing else: 2.6-2.11 stop at 6.
    """
    if process.nccl_version:
        return path_name(number, process.nccl_version)
    low, high = parse_range(process.version_range)
    if low is None and high is None:
        return None
    names = {
        names[number]
        for first, last, names in _PATH_TYPES
        if (high is None or first <= high)
        and (low is None or last >= low)
        and 0 <= number < len(names)
    }
    return names.pop() if len(names) == 1 else None


def _pxn(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = []
    for process in processes:
        line = process.line("ring-gdr")
        hit = _PXN.search(line.text) if line else None
        if hit and hit.group(1) != "0":
            found.append(("on", process, (line,)))

    def text(_: str, count: int) -> str:
        return (
            f"PXN on ({_on(count)}): ranks send to other hosts through a NIC next to "
            "another GPU of their node, over NVLink, so a GPU far from every NIC still uses "
            "GPUDirect RDMA (NCCL_PXN_DISABLE=1 turns it off)"
        )

    return _grouped(found, text, "pxn")


def _nvls(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = [
        (str(p.channels[2]), p, (p.line("channels"),))
        for p in processes
        if p.channels is not None and p.channels[2] > 0
    ]

    def text(channels: str, count: int) -> str:
        return (
            f"NCCL set up {channels} NVLS channels ({_on(count)}): NVLink SHARP, reductions "
            "done in the NVSwitches, carries intra-node all-reduce"
        )

    return _grouped(found, text, "nvls")


def _collnet(processes: Sequence[ProcessLog]) -> list[Fact]:
    found = []
    for process in processes:
        # connection lines, not "Sharp rank r/n initialized": SHARP can start and its
        # group creation still fail, with CollNet then left out (sharp_coll_comm_init)
        lines = [line for _, line in process.lines_of("transport:COLLNET")]
        if lines:
            devices = ", ".join(process.collnet) or "a CollNet network"
            found.append((devices, process, [process.line("collnet"), *lines]))

    def text(devices: str, count: int) -> str:
        return (
            f"CollNet connected ({_on(count)}; {devices}): in-network reduction (SHARP) "
            "offloads the inter-node part of all-reduce to the switches"
        )

    return _grouped(found, text, "collnet")


def _shm_between_nvlink(processes: Sequence[ProcessLog]) -> list[Fact]:
    """SHM connections of a process whose GPU NCCL's topology shows NVLink on: P2P was
    off (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, or P2P unusable), and the traffic between the
    GPUs went through host memory."""
    found = []
    for process in processes:
        nvlink = process.line("nvlink")
        shm = process.lines_of("transport:SHM")
        if nvlink is None or not shm:
            continue
        disabled = process.line("env:NCCL_P2P_DISABLE")
        said = "NCCL_P2P_DISABLE set" if disabled is not None else "P2P not used"
        found.append((said, process, [shm[0][1], nvlink, disabled]))

    def text(said: str, count: int) -> str:
        why = (
            "NCCL_P2P_DISABLE is set in the environment"
            if said == "NCCL_P2P_DISABLE set"
            else "P2P was off or unusable (NCCL_P2P_LEVEL, a container without a shared IPC "
            "namespace, a VM)"
        )
        return (
            f"GPUs that NVLink connects talked through host shared memory (SHM) ({_on(count)}): "
            f"{why}, so intra-node traffic crossed PCIe and host memory at a fraction of "
            "NVLink's bandwidth"
        )

    return _grouped(found, text, "shm-between-nvlink")


#: graph/topo.cc's kvDictPciGen: a lane's speed in 100 Mb/s per PCIe generation's GT/s
_PCI_SPEEDS = (("2.5", 15), ("5", 30), ("8", 60), ("16", 120), ("32", 240), ("64", 480))
#: what a slow link leads to, as the dump names it
_PCI_CHILD = {"GPU": "a GPU", "PCI": "a PCI switch or bridge", "NIC": "a NIC"}


def _pci_links(rated: str) -> str:
    """The links (lanes, speed) NCCL rates ``rated`` GB/s: width x speed / 80 printed with
    one decimal (graph/topo.cc, 2.6+)."""
    links = [
        f"x{width} at {gts} GT/s"
        for width in (1, 2, 4, 8, 16)
        for gts, speed in _PCI_SPEEDS
        if f"{width * speed / 80:.1f}" == rated
    ]
    return " or ".join(links)


def _slow_pci(processes: Sequence[ProcessLog]) -> list[Fact]:
    """A PCIe link of NCCL's topology dump (GRAPH) rated below 3 GB/s: NCCL takes the
    lower of the device's and its port's ``max_link_width`` / ``max_link_speed`` in sysfs
    (graph/xml.cc) and rates the link width x speed / 80 GB/s (graph/topo.cc)."""
    found: list[tuple[str, ProcessLog, list[LogLine | None]]] = []
    for process in processes:
        links: dict[str, list[LogLine | None]] = {}
        for key, line in process.lines_of("pci-slow:"):
            rated, child = key.split(":")[1:3]
            links.setdefault(f"{rated}:{child.split('/')[0]}", []).append(line)
        found.extend((value, process, lines) for value, lines in links.items())

    def text(value: str, count: int) -> str:
        rated, child = value.split(":")
        to = _PCI_CHILD.get(child, child)
        if float(rated) == 0:
            return (
                f"NCCL rated a PCIe link to {to} 0 GB/s ({_on(count)}): it did not know the "
                "link's speed as sysfs printed it (NCCL 2.6 knows the forms of kernels up to "
                "5.6, not '16.0 GT/s PCIe'), so its search rates what crosses that link as "
                "unusable; NCCL 2.7 and later rate an unknown speed as 8 GT/s"
            )
        return (
            f"NCCL rates a PCIe link to {to} {rated} GB/s ({_on(count)}): {_pci_links(rated)} "
            "by sysfs's max_link_width and max_link_speed (the lower of the device's and "
            "its port's), far below the x16 of a GPU or an RDMA NIC: a VM's emulated PCIe "
            "port (QEMU's XIO3130 switch ports and its root ports before 4.0 advertise x1 "
            "at 2.5 GT/s) or a slot or riser with "
            "fewer lanes. NCCL's search rates what crosses it (GPU to CPU memory, to a NIC "
            "under another switch, SHM) that slow; `lspci -vv` shows the port's LnkCap"
        )

    return _grouped(found, text, "slow-pci-link")


_READERS: tuple[Callable[[Sequence[ProcessLog]], list[Fact]], ...] = (
    _topology_file,
    _bootstrap_link_local,
    _bootstrap_docker_bridge,
    _nic_distance_sys,
    _pxn,
    _nvls,
    _collnet,
    _shm_between_nvlink,
    _slow_pci,
)
