"""Parsers of the verbs tools' output, into the sysfs reader's device model.

Pure functions of text: each parser takes an iterable of lines and returns
``(devices, problems)``; input that is not the tool's output at all raises
:class:`~hpnet.errors.ParseError` naming the line. :func:`parse_listing` detects
the tool; :func:`merge_devices` combines several listings of one node.
"""

from __future__ import annotations

from hpnet.rdma.listings._common import FIX, MAX_LINE_CHARS, Parsed
from hpnet.rdma.listings.devinfo import parse_ibv_devices, parse_ibv_devinfo
from hpnet.rdma.listings.ibstat import parse_ibstat
from hpnet.rdma.listings.iproute import RDMA_LINK_LINE, parse_rdma_link
from hpnet.rdma.listings.mellanox import parse_ibdev2netdev, parse_show_gids
from hpnet.rdma.listings.merge import merge_devices

__all__ = [
    "LISTING_KINDS",
    "detect_listing_kind",
    "merge_devices",
    "parse_ibdev2netdev",
    "parse_ibstat",
    "parse_ibv_devices",
    "parse_ibv_devinfo",
    "parse_listing",
    "parse_rdma_link",
    "parse_show_gids",
]

#: tool name -> parser, in the order detection tries them
PARSERS = {
    "ibv_devinfo": parse_ibv_devinfo,
    "ibstat": parse_ibstat,
    "show_gids": parse_show_gids,
    "ibdev2netdev": parse_ibdev2netdev,
    "rdma link": parse_rdma_link,
    "ibv_devices": parse_ibv_devices,
}
LISTING_KINDS = tuple(PARSERS)


def _kind_of_line(stripped: str) -> str | None:
    if stripped.startswith("hca_id:") or "No IB devices found" in stripped:
        return "ibv_devinfo"
    if stripped.startswith("CA '"):
        return "ibstat"
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
