"""Network interfaces: what NCCL_SOCKET_IFNAME can match and what RoCE GIDs name.

State, MTU, speed and kind come from ``sys/class/net/<if>`` (kernel
``Documentation/ABI/testing/sysfs-class-net``), so a recorded tree is read like a
live node; addresses come from :mod:`psutil`, and only for the live node (sysfs
does not hold them).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping

from hpnet.node.sysfs import FsRoot, pci_chain

__all__ = ["Address", "NetKind", "Netdev", "classify_netdev", "live_addresses", "read_netdevs"]

NET_CLASS = "sys/class/net"

# ARPHRD_* from include/uapi/linux/if_arp.h, as sys/class/net/<if>/type prints them.
ARPHRD_ETHER = 1
ARPHRD_INFINIBAND = 32
ARPHRD_LOOPBACK = 772


class NetKind(str, enum.Enum):
    PHYSICAL = "physical"
    BOND = "bond"
    BRIDGE = "bridge"
    VLAN = "vlan"
    MACVLAN = "macvlan"
    IPVLAN = "ipvlan"
    VETH = "veth"
    IPOIB = "ipoib"
    LOOPBACK = "loopback"
    TUNNEL = "tunnel"
    VIRTUAL = "virtual"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Address:
    family: str  # "inet" or "inet6"
    address: str
    prefix_length: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Netdev:
    name: str
    state: str  # operstate: up, down, unknown, lowerlayerdown, dormant, notpresent
    mtu: int | None
    speed_mbps: int | None  # None when the link is down or the driver does not say
    kind: NetKind
    mac: str | None = None
    addresses: tuple[Address, ...] = ()
    pci_address: str | None = None
    pci_path: tuple[str, ...] = ()
    driver: str | None = None
    master: str | None = None  # the bond or bridge this interface is enslaved to
    slaves: tuple[str, ...] = ()

    @property
    def is_up(self) -> bool:
        # "unknown" is what loopback and many virtual devices report while working.
        return self.state in {"up", "unknown"}


def classify_netdev(
    *,
    arp_type: int | None,
    devtype: str | None,
    has_device_link: bool,
    is_bond: bool,
    is_bridge: bool,
    ifindex: int | None,
    iflink: int | None,
) -> NetKind:
    """Name an interface's kind from its sysfs attributes (pure).

    ``devtype`` is ``DEVTYPE=`` from ``uevent`` (bond, bridge, vlan, macvlan…).
    A veth has no parent device and no DEVTYPE, and its ``iflink`` names its peer
    (``iflink != ifindex``); that is how a container's ``eth0`` looks.
    """
    if arp_type == ARPHRD_LOOPBACK:
        return NetKind.LOOPBACK
    if is_bond or devtype == "bond":
        return NetKind.BOND
    if is_bridge or devtype == "bridge":
        return NetKind.BRIDGE
    if devtype in {"vlan", "macvlan", "ipvlan"}:
        return NetKind(devtype)
    if arp_type == ARPHRD_INFINIBAND:
        return NetKind.IPOIB
    if has_device_link:
        return NetKind.PHYSICAL
    if arp_type is not None and arp_type != ARPHRD_ETHER:
        return NetKind.TUNNEL
    if ifindex is not None and iflink is not None and ifindex != iflink:
        return NetKind.VETH
    return NetKind.VIRTUAL


def read_netdevs(
    fs: FsRoot, addresses: Mapping[str, tuple[Address, ...]] | None = None
) -> tuple[Netdev, ...]:
    """Every interface under ``sys/class/net``; ``addresses`` by name, if known."""
    addresses = addresses or {}
    result = []
    for name in fs.listdir(NET_CLASS):
        base = f"{NET_CLASS}/{name}"
        if not fs.is_dir(base):
            continue  # bonding_masters is a file
        uevent = fs.read(f"{base}/uevent") or ""
        devtype_match = re.search(r"^DEVTYPE=(\S+)", uevent, re.MULTILINE)
        parent = fs.resolve(f"{base}/device")
        chain = pci_chain(parent) if parent else ()
        kind = classify_netdev(
            arp_type=fs.read_int(f"{base}/type"),
            devtype=devtype_match.group(1) if devtype_match else None,
            has_device_link=parent is not None,
            is_bond=fs.is_dir(f"{base}/bonding"),
            is_bridge=fs.is_dir(f"{base}/bridge"),
            ifindex=fs.read_int(f"{base}/ifindex"),
            iflink=fs.read_int(f"{base}/iflink"),
        )
        speed = fs.read_int(f"{base}/speed")
        slaves_text = fs.read(f"{base}/bonding/slaves") if kind is NetKind.BOND else None
        if kind is NetKind.BRIDGE:
            slaves = tuple(fs.listdir(f"{base}/brif"))
        else:
            slaves = tuple(slaves_text.split()) if slaves_text else ()
        result.append(
            Netdev(
                name=name,
                state=fs.read(f"{base}/operstate") or "unknown",
                mtu=fs.read_int(f"{base}/mtu"),
                speed_mbps=speed if speed is not None and speed > 0 else None,
                kind=kind,
                mac=fs.read(f"{base}/address") or None,
                addresses=addresses.get(name, ()),
                pci_address=chain[-1] if chain else None,
                pci_path=chain,
                driver=fs.link_name(f"{parent}/driver") if parent else None,
                master=fs.link_name(f"{base}/master"),
                slaves=slaves,
            )
        )
    return tuple(result)


def live_addresses() -> dict[str, tuple[Address, ...]]:
    """IPv4 and IPv6 addresses of this node's interfaces, through psutil."""
    import socket  # noqa: PLC0415 - an edge: imported only when the live node is read

    import psutil  # noqa: PLC0415

    result: dict[str, tuple[Address, ...]] = {}
    for name, entries in psutil.net_if_addrs().items():
        found = []
        for entry in entries:
            if entry.family == socket.AF_INET:
                family = "inet"
            elif entry.family == socket.AF_INET6:
                family = "inet6"
            else:
                continue
            found.append(
                Address(
                    family=family,
                    address=entry.address.split("%", 1)[0],
                    prefix_length=_prefix_length(entry.netmask),
                )
            )
        result[name] = tuple(found)
    return result


def _prefix_length(netmask: str | None) -> int | None:
    if not netmask:
        return None
    import ipaddress  # noqa: PLC0415 - live addresses only

    try:
        return ipaddress.ip_network(f"0.0.0.0/{netmask}").prefixlen
    except ValueError:
        try:
            return bin(int(ipaddress.IPv6Address(netmask))).count("1")
        except ValueError:
            return None
