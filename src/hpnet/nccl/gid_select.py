"""NCCL's automatic RoCE GID choice, reproduced (pure).

From NCCL 2.21.5 ``NCCL_IB_GID_INDEX`` defaults to -1 and NCCL picks the GID
itself (NVIDIA/nccl ``src/transport/net_ib/connect.cc``, ``ncclIbGetGidIndex``
and ``ncclUpdateGidIndex``, read at v2.29.2). For a RoCE port it starts from
index 0 and walks the table once; a candidate replaces the current choice when

1. its address family (IPv4-mapped = AF_INET, anything else AF_INET6) differs
   from the current one's, equals the wanted family (``NCCL_IB_ADDR_FAMILY``,
   default AF_INET) and lies in ``NCCL_IB_ADDR_RANGE`` — without looking at its
   RoCE version; or
2. it has the wanted family, is configured and not link-local, is in range, and
   its RoCE version is the wanted one (``NCCL_IB_ROCE_VERSION_NUM``, default 2)
   while the current one's version differs or the current GID is not valid.

InfiniBand ports are routed by LID and never use the GID index (``ncclIbRtrQp``
sets a GID only on Ethernet ports). hpnet uses this walk to say when leaving the
variable unset gives the same GID as the value it would set.

``NCCL_IB_ADDR_RANGE`` is read by ``envIbAddrRange`` (connect.cc, v2.30.7-1): no
``/``, an address ``inet_pton`` rejects for the family, or a mask above 32 (IPv4) /
128 (IPv6) and NCCL ignores the whole range; the mask is ``strtol(.., 10)``, and a
mask of 0 or less matches every GID (``matchGidAddrPrefix``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hpnet.rdma.model import GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2, Gid

__all__ = ["AUTO_GID_SINCE", "AddrRange", "nccl_auto_gid_index", "parse_addr_range"]

#: ``(address as an int, prefix length)`` of an NCCL_IB_ADDR_RANGE NCCL accepts
AddrRange = tuple[int, int]
_STRTOL10 = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")

#: NCCL release from which NCCL_IB_GID_INDEX defaults to automatic (-1)
AUTO_GID_SINCE = (2, 21, 5)


def _value(gid: Gid) -> int:
    return int(gid.gid.replace(":", ""), 16)


def _family(gid: Gid) -> str:
    value = _value(gid)
    top = value >> 96
    mapped = (value >> 32) & ((1 << 64) - 1) == 0xFFFF and top == 0
    mapped_multicast = top == 0xFF0E0000 and (value >> 32) & ((1 << 64) - 1) == 0xFFFF
    return "AF_INET" if mapped or mapped_multicast else "AF_INET6"


def _valid(gid: Gid) -> bool:
    value = _value(gid)
    first, trailer = value >> 96, value & ((1 << 96) - 1)
    configured = not ((first | trailer) == 0 or (first == 0xFE800000 and trailer == 0))
    link_local = first == 0xFE800000 and (value >> 64) & 0xFFFFFFFF == 0
    return configured and not link_local


def _version(gid: Gid) -> int | None:
    if gid.type == GID_TYPE_ROCE_V2:
        return 2
    if gid.type == GID_TYPE_ROCE_V1:
        return 1
    return None  # unreadable type (an empty slot): NCCL leaves the number unset


def parse_addr_range(value: str | None, family: str) -> AddrRange | None:
    """What ``envIbAddrRange`` makes of ``value`` for ``family``: None when NCCL
    ignores it (no range), else ``(address, prefix length)``; a length of 0 or less
    matches everything.

    >>> parse_addr_range("10.0.0.0/8", "AF_INET")
    (167772160, 8)
    >>> parse_addr_range("10.0.0.0/33", "AF_INET") is None
    True
    >>> parse_addr_range("garbage", "AF_INET") is None
    True
    """
    if not value:
        return None
    import ipaddress  # noqa: PLC0415 - only NCCL_IB_ADDR_RANGE needs it

    text = value[:127]  # snprintf(addrString, 128, ...)
    address_text, slash, mask_text = text.partition("/")
    if not slash:
        return None
    try:
        # inet_pton takes dotted-quad IPv4 only, and IPv6 without a zone or mask
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = (
            ipaddress.IPv4Address(address_text)
            if family == "AF_INET"
            else ipaddress.IPv6Address(address_text)
        )
    except ValueError:
        return None
    if "%" in address_text:
        return None
    match = _STRTOL10.match(mask_text)
    mask = int(match.group(1)) if match else 0
    if mask > (32 if family == "AF_INET" else 128):
        return None
    return int(address), mask


def _in_range(gid: Gid, family: str, address_range: AddrRange | None) -> bool:
    """``matchGidAddrPrefix``: IPv4 compares the GID's last 32 bits."""
    if address_range is None:
        return True
    base, bits = address_range
    if bits <= 0:
        return True
    value = _value(gid)
    width = 32 if family == "AF_INET" else 128
    if family == "AF_INET":
        value &= 0xFFFFFFFF
    shift = width - min(bits, width)
    return (base >> shift) == (value >> shift)


def nccl_auto_gid_index(
    gids: Sequence[Gid],
    *,
    family: str = "AF_INET",
    roce_version: int = 2,
    address_range: str | None = None,
) -> int | None:
    """The index NCCL picks for a RoCE port given its whole GID table, or None
    for an empty table. ``gids`` must be the full table, index order.

    >>> from hpnet.rdma.gid import make_gid
    >>> table = [make_gid(0, "fe80::1", "IB/RoCE v1", None),
    ...          make_gid(1, "fe80::1", "RoCE v2", None),
    ...          make_gid(2, "::ffff:10.0.0.1", "IB/RoCE v1", None),
    ...          make_gid(3, "::ffff:10.0.0.1", "RoCE v2", None)]
    >>> nccl_auto_gid_index(table)
    3
    """
    if not gids:
        return None
    parsed_range = parse_addr_range(address_range, family)
    by_index = {g.index: g for g in gids}
    current = by_index.get(0)
    if current is None:
        return None
    chosen = 0
    # the indices the table has, in order: not every number up to the largest (a listing
    # with GID[999999999999] once kept this loop busy for hours); NCCL's walk skips the
    # empty slots between them too
    for index in sorted(i for i in by_index if i > 0):
        candidate = by_index[index]
        current = by_index[chosen]
        candidate_family = _family(candidate)
        in_range = _in_range(candidate, family, parsed_range)
        if candidate_family != _family(current) and candidate_family == family and in_range:
            chosen = index
            continue
        if candidate_family != family or not _valid(candidate) or not in_range:
            continue
        candidate_version = _version(candidate)
        if (
            _version(current) != candidate_version or not _valid(current)
        ) and candidate_version == roce_version:
            chosen = index
    return chosen
