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
"""

from __future__ import annotations

from collections.abc import Sequence

from hpnet.rdma.model import GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2, Gid

__all__ = ["AUTO_GID_SINCE", "nccl_auto_gid_index"]

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


def _in_range(gid: Gid, family: str, address_range: str | None) -> bool:
    if not address_range:
        return True
    import ipaddress  # noqa: PLC0415 - only NCCL_IB_ADDR_RANGE needs it

    network = ipaddress.ip_network(address_range, strict=False)
    address = ipaddress.IPv6Address(_value(gid))
    if family == "AF_INET":
        mapped = address.ipv4_mapped
        return mapped is not None and mapped in network
    return address in network


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
    by_index = {g.index: g for g in gids}
    current = by_index.get(0)
    if current is None:
        return None
    chosen = 0
    for index in range(1, max(by_index) + 1):
        candidate = by_index.get(index)
        if candidate is None:
            continue
        current = by_index[chosen]
        candidate_family = _family(candidate)
        in_range = _in_range(candidate, family, address_range)
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
