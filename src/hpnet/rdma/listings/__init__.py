"""Parsers of the verbs tools' output, into the sysfs reader's device model.

Pure functions of text: each parser takes an iterable of lines and returns
``(devices, problems)``; input that is not the tool's output at all raises
:class:`~hpnet.errors.ParseError` naming the line. :func:`parse_listing` detects
the tool; :func:`merge_devices` combines several listings of one node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.rdma.listings._common import FIX, MAX_LINE_CHARS, Parsed
from hpnet.rdma.listings.devinfo import parse_ibv_devices, parse_ibv_devinfo
from hpnet.rdma.listings.files_ls import (
    DevNodes,
    parse_dev_infiniband,
    parse_devinfo_list,
    parse_ibstatus,
    parse_sys_class_infiniband,
)
from hpnet.rdma.listings.ibstat import parse_ibstat
from hpnet.rdma.listings.iproute import RDMA_LINK_LINE, parse_rdma_link
from hpnet.rdma.listings.mellanox import parse_ibdev2netdev, parse_show_gids
from hpnet.rdma.listings.merge import merge_devices

__all__ = [
    "DEV_NODES_KIND",
    "LISTING_KINDS",
    "DevNodes",
    "detect_listing_kind",
    "merge_devices",
    "parse_dev_infiniband",
    "parse_ibdev2netdev",
    "parse_ibstat",
    "parse_ibv_devices",
    "parse_ibv_devinfo",
    "parse_listing",
    "parse_rdma_link",
    "parse_show_gids",
]


def _no_devices(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """``ls /dev/infiniband`` lists no RDMA device (:func:`parse_dev_infiniband` reads it)."""
    return (), ()


#: ``ls /dev/infiniband``: character devices, not RDMA devices (:class:`DevNodes`)
DEV_NODES_KIND = "ls /dev/infiniband"

#: tool name -> parser, in the order detection tries them
PARSERS = {
    "ibv_devinfo": parse_ibv_devinfo,
    "ibv_devinfo -l": parse_devinfo_list,
    "ibstat": parse_ibstat,
    "ibstatus": parse_ibstatus,
    "show_gids": parse_show_gids,
    "ibdev2netdev": parse_ibdev2netdev,
    "rdma link": parse_rdma_link,
    "ibv_devices": parse_ibv_devices,
    "ls /sys/class/infiniband": parse_sys_class_infiniband,
    DEV_NODES_KIND: _no_devices,  # character devices: inventory_from_listings reads DevNodes
}
LISTING_KINDS = tuple(PARSERS)
_DEVINFO_FRAGMENT = re.compile(
    r"^(?:GID\[\s*\d+\]:|port:\s*\d|state:\s*PORT_|phys_state:\s*\w+ \(\d\)|link_layer:)"
)


def _kind_of_line(stripped: str) -> str | None:
    if stripped.startswith("hca_id:") or "No IB devices found" in stripped:
        return "ibv_devinfo"
    if re.match(r"^\d+ HCAs? found:?$", stripped):
        return "ibv_devinfo -l"
    if stripped.startswith("CA '"):
        return "ibstat"
    if stripped.startswith("Infiniband device '") and stripped.endswith("status:"):
        return "ibstatus"
    if "/sys/class/infiniband" in stripped and "infiniband_verbs" not in stripped:
        return "ls /sys/class/infiniband"
    if "/dev/infiniband" in stripped:
        return DEV_NODES_KIND
    if re.search(r"\s->\s\S*/infiniband/\S+$", stripped):
        return "ls /sys/class/infiniband"
    if re.fullmatch(r"(?:(?:uverbs\d+|rdma_cm|umad\d+|issm\d+|ucm\d+)\s*)+", stripped):
        return DEV_NODES_KIND
    if _DEVINFO_FRAGMENT.match(stripped):  # ibv_devinfo -v cut above its hca_id line
        return "ibv_devinfo"
    if stripped.split()[:4] == ["DEV", "PORT", "INDEX", "GID"] or "n_gids_found" in stripped:
        return "show_gids"
    if "==>" in stripped and " port " in f" {stripped}":
        return "ibdev2netdev"
    if RDMA_LINK_LINE.match(stripped):
        return "rdma link"
    if stripped.split() == ["device", "node", "GUID"]:
        return "ibv_devices"
    return None


def detect_listing_kind(text: str, *, source: str = "<input>") -> str:
    """Name the tool that printed ``text`` (one pass over its lines).

    Raises :class:`~hpnet.errors.ParseError` when no line looks like any tool's.
    """
    first: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or len(stripped) > MAX_LINE_CHARS:
            continue
        first = first or (number, stripped)
        kind = _kind_of_line(stripped)
        if kind:
            return kind
    from hpnet.errors import ParseError  # noqa: PLC0415 - the error path only

    if first is None:
        raise ParseError(
            "not a recognised RDMA listing (the input is empty)",
            source=source,
            fix=FIX,
            code="listing-unrecognised",
        )
    raise ParseError(
        f"not a recognised RDMA listing (first line: {first[1][:60]!r})",
        source=source,
        line_number=first[0],
        fix=FIX,
        code="listing-unrecognised",
    )


def parse_listing(text: str, *, source: str = "<input>") -> tuple[str, Parsed]:
    """Detect the tool and parse; returns ``(kind, (devices, problems))``.

    >>> kind, (devices, _) = parse_listing("link mlx5_0/1 state ACTIVE netdev eth0")
    >>> kind, devices[0].ports[0].netdev
    ('rdma link', 'eth0')
    """
    kind = detect_listing_kind(text, source=source)
    return kind, PARSERS[kind](text.splitlines(), source=source)
