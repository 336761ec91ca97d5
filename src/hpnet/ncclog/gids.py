"""The GID a NET/IB queue pair uses, read out of NCCL's line for a finding's conclusions.

NCCL prints each queue pair it creates with its GID (transport/net_ib.cc, every release:
``NET/IB: Dev 0 Port 1 qpn 1040 mtu 5 GID 3 (0/A01A8C0FFFF0000)``; 2.20+ ``NET/IB: NCCL
Dev 0 IbDev 0 Port 1 qpn ... GID 0 (80FE/1A8A41FEFF21A75E)``): the index, then the two
64-bit halves of ``union ibv_gid`` (rdma-core verbs.h: ``subnet_prefix`` and
``interface_id``, each ``__be64``) printed with ``%lX`` as the host's integers, so on a
little-endian host each half's bytes are reversed. ``80FE`` is therefore ``fe80:0:0:0``.
What the address is tells why a queue pair cannot route: a link-local GID (``fe80::/64``,
InfiniBand's port GIDs, and RoCE's MAC-derived entry that reaches only its L2 segment) or
an IPv4-mapped one (``::ffff:a.b.c.d``, RoCE v2 over IPv4, which NCCL prefers).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from hpnet.ncclog.model import LogLine, NcclLog
from hpnet.result import Finding, Severity

__all__ = ["gid_address", "gid_details", "gid_findings"]

#: the statement key of a GID line (hpnet.ncclog.facts: ``gid:<index>:<prefix>/<id>``)
_KEY = re.compile(r"^gid:(\d+):([0-9A-Fa-f]+)/([0-9A-Fa-f]+)$")
#: GIDs named in a finding's conclusions at most
MAX_GIDS = 4


def gid_address(prefix: str, interface: str) -> str | None:
    """The GID whose halves NCCL printed as ``prefix`` and ``interface`` (hex, as a
    little-endian host prints a big-endian 64-bit field), as an IPv6 address (an IPv4
    one mapped as ``::ffff:a.b.c.d``), or None when a half does not fit in 64 bits.

    >>> gid_address("80FE", "1A8A41FEFF21A75E")
    'fe80::5ea7:21ff:fe41:8a1a'
    >>> gid_address("0", "A01A8C0FFFF0000")
    '::ffff:192.168.1.10'
    """
    try:
        halves = [int(half, 16).to_bytes(8, "little") for half in (prefix, interface)]
    except (ValueError, OverflowError):
        return None
    address = ipaddress.IPv6Address(halves[0] + halves[1])
    mapped = address.ipv4_mapped
    return f"::ffff:{mapped}" if mapped is not None else str(address)


def _mac_link_local(address: str) -> bool:
    """A link-local GID made of a MAC address (fe80::/64 with the ff:fe of an EUI-64):
    a RoCE port's default entry (InfiniBand's port GIDs carry the port GUID)."""
    packed = ipaddress.IPv6Address(address).packed
    return packed[:8] == b"\xfe\x80" + bytes(6) and packed[11:13] == b"\xff\xfe"


def _what(address: str) -> str:
    """What kind of GID ``address`` is, as far as its bytes tell."""
    if address.startswith("::ffff:") and "." in address:
        return (
            "IPv4-mapped: RoCE over IPv4 (whether the entry is RoCE v1 or v2 the line does "
            "not say: `show_gids` or /sys/class/infiniband/*/ports/*/gid_attrs/types does)"
        )
    packed = ipaddress.IPv6Address(address).packed
    if packed[:8] == b"\xfe\x80" + bytes(6):
        said = "link-local (fe80::/64): InfiniBand's port GID, or on RoCE the default entry"
        if _mac_link_local(address):
            said = (
                "link-local (fe80::/64) with a MAC address in it (the ff:fe of a MAC-made EUI-64: "
                "Ethernet, so most likely RoCE): the port's default entry"
            )
        return said + ", which on RoCE is not routed past its L2 network"
    return "a global IPv6 address"


def gid_findings(log: NcclLog) -> list[Finding]:
    """RoCE queue pairs on a port's MAC-made link-local GID, where no NCCL_IB_GID_INDEX the
    log echoes asks for it (``env-gid-index-0`` says that one): NCCL's default before
    2.21.5, or a port with no RoCE v2 GID with an address for it to choose from 2.21.5."""
    used = []
    for process in log.processes:
        if not any(n.link == "RoCE" for n in process.nics) or any(
            name == "NCCL_IB_GID_INDEX" for name, _ in process.env
        ):
            continue
        for key, line in process.lines.items():
            found = _KEY.match(key)
            address = gid_address(*found.groups()[1:]) if found else None
            if found and address is not None and _mac_link_local(address):
                used.append((process.key, process.nccl_version, found.group(1), address, line))
    if not used:
        return []
    return [
        Finding(
            id="roce-link-local-gid",
            severity=Severity.WARNING,
            title="RoCE queue pairs used a port's link-local GID, not a routable RoCE v2 one",
            cause="a RoCE port's link-local GID (fe80::/64, made of its MAC address; on mlx5 "
            "RoCE v1) reaches only its own L2 segment (one cable, one VLAN) and is not routed. "
            "NCCL before 2.21.5 uses GID index 0 unless NCCL_IB_GID_INDEX says another "
            "(NCCL_PARAM IbGidIndex, default 0); from 2.21.5 it picks a RoCE v2 GID with an "
            "address and keeps index 0 where a port has none (its netdev has no IPv4 address)",
            fix="before 2.21.5: set NCCL_IB_GID_INDEX to the port's RoCE v2 IPv4 index "
            "(`show_gids`; `hpnet env` computes it); from 2.21.5: give that port's netdev an "
            "IPv4 address so a RoCE v2 GID appears, or leave the port out with NCCL_IB_HCA",
            evidence=tuple(line.quote() for *_, line in used[:MAX_GIDS]),
            conclusions=tuple(
                f"process {key}{f' (NCCL {version})' if version else ''}: GID index {index}, "
                f"{address} ({line.source}:{line.line_number})"
                for key, version, index, address, line in used[:MAX_GIDS]
            ),
            count=len(used),
            processes=tuple(dict.fromkeys(key for key, *_ in used)),
        )
    ]


def gid_details(lines: Sequence[tuple[str, LogLine]]) -> tuple[str, ...]:
    """What the GID lines of a failing process say: each GID its queue pairs used, with
    its index and what kind of address it is, quoted by its line."""
    said = []
    for key, line in lines[:MAX_GIDS]:
        found = _KEY.match(key)
        if not found:
            continue
        index, prefix, interface = found.groups()
        address = gid_address(prefix, interface)
        if address is None:
            continue
        said.append(
            f"the queue pair used GID index {index}, {address}, {_what(address)} "
            f"({line.source}:{line.line_number})"
        )
    return tuple(said)
