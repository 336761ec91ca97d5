"""GID parsing and classification (pure functions).

A RoCE GID is an IPv6 address: IPv4 addresses appear IPv4-mapped
(``::ffff:a.b.c.d``), the interface's link-local address as ``fe80::…``, and an
unused slot as all zeros (kernel ``Documentation/ABI/stable/sysfs-class-infiniband``,
``ports/<N>/gids/<I>``). NCCL's automatic GID choice wants a RoCE v2, non-link-local
GID of the configured address family (``src/transport/net_ib.cc``, ``ncclIbRoceGetGidIndex``).
"""

from __future__ import annotations

import re

from hpnet.rdma.model import GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2, Gid, GidKind

__all__ = ["classify_gid", "make_gid", "normalize_gid_type"]


def classify_gid(text: str) -> tuple[str, GidKind, str | None]:
    """Return ``(exploded_gid, kind, ipv4)`` for a GID in any IPv6 spelling.

    >>> classify_gid("0000:0000:0000:0000:0000:ffff:c0a8:0101")
    ('0000:0000:0000:0000:0000:ffff:c0a8:0101', <GidKind.IPV4_MAPPED: 'ipv4-mapped'>, '192.168.1.1')

    Raises ValueError when ``text`` is not an IPv6 address.
    """
    stripped = text.strip()
    if _FULL_GID.match(stripped):
        return _classify_full(stripped.lower())
    return _classify_any(stripped)


# sysfs and show_gids write every GID as eight groups of four hex digits; reading
# those directly keeps `ipaddress` (and its import time) off the sysfs path.
_FULL_GID = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
_LINK_LOCAL_PREFIX = 0x3FA  # fe80::/10, the top ten bits
_IPV4_MAPPED_PREFIX = 0xFFFF  # ::ffff:0:0/96, the top 96 bits


def _classify_full(exploded: str) -> tuple[str, GidKind, str | None]:
    value = int(exploded.replace(":", ""), 16)
    if value == 0:
        return exploded, GidKind.EMPTY, None
    if value >> 32 == _IPV4_MAPPED_PREFIX:
        ipv4 = ".".join(str((value >> shift) & 0xFF) for shift in (24, 16, 8, 0))
        return exploded, GidKind.IPV4_MAPPED, ipv4
    if value >> 118 == _LINK_LOCAL_PREFIX:
        return exploded, GidKind.IPV6_LINK_LOCAL, None
    return exploded, GidKind.IPV6_GLOBAL, None


def _classify_any(text: str) -> tuple[str, GidKind, str | None]:
    """Any IPv6 spelling (``::ffff:10.0.3.1``, ``fe80::1``), through :mod:`ipaddress`."""
    import ipaddress  # noqa: PLC0415 - only compressed spellings (from listings) need it

    address = ipaddress.IPv6Address(text)
    exploded = address.exploded
    if int(address) == 0:
        return exploded, GidKind.EMPTY, None
    if address.ipv4_mapped is not None:
        return exploded, GidKind.IPV4_MAPPED, str(address.ipv4_mapped)
    if address.is_link_local:
        return exploded, GidKind.IPV6_LINK_LOCAL, None
    return exploded, GidKind.IPV6_GLOBAL, None


_TYPE_TOKEN = re.compile(r"(?i)\broce\s*v?([12])\b|\bib/roce\s*v1\b")


def normalize_gid_type(text: str | None) -> str | None:
    """Map the spellings tools use for a GID type onto the kernel's.

    sysfs writes ``IB/RoCE v1`` and ``RoCE v2``; ``show_gids`` writes ``v1``/``v2``;
    ``ibv_devinfo -v`` writes ``RoCE v1``/``RoCE v2`` (pasted output may carry a
    trailing note); ``rdma`` writes ``RoCEv2``. Other text is returned stripped,
    empty text as None.

    >>> normalize_gid_type("RoCE v2      # the one we use")
    'RoCE v2'
    """
    if text is None:
        return None
    value = text.strip()
    folded = value.lower().replace(" ", "")
    if folded in {"v1", "roce", "ib"}:
        return GID_TYPE_ROCE_V1
    if folded in {"v2", "roceudpencap"}:
        return GID_TYPE_ROCE_V2
    token = _TYPE_TOKEN.search(value)
    if token:
        return GID_TYPE_ROCE_V2 if token.group(1) == "2" else GID_TYPE_ROCE_V1
    return value or None


def make_gid(index: int, text: str, gid_type: str | None, netdev: str | None) -> Gid:
    """Build a :class:`Gid`; an empty slot keeps no type or netdev.

    Raises ValueError when ``text`` is not an IPv6 address.
    """
    exploded, kind, ipv4 = classify_gid(text)
    if kind is GidKind.EMPTY:
        return Gid(index=index, gid=exploded, type=None, netdev=None, kind=kind)
    return Gid(
        index=index,
        gid=exploded,
        type=normalize_gid_type(gid_type),
        netdev=netdev or None,
        kind=kind,
        ipv4=ipv4,
    )
