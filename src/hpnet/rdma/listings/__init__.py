"""Parsers of the verbs tools' output, into the sysfs reader's device model.

Pure functions of text: each parser takes an iterable of lines and returns
``(devices, problems)``; input that is not the tool's output at all raises
:class:`~hpnet.errors.ParseError` naming the line. :func:`parse_listing` detects
the tool; :func:`merge_devices` combines several listings of one node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from hpnet.rdma.listings._common import FIX, Parsed
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
from hpnet.rdma.listings.sections import Section, split_sections
from hpnet.result import Problem

if TYPE_CHECKING:
    from hpnet.errors import ParseError

__all__ = [
    "DEV_NODES_KIND",
    "LISTING_KINDS",
    "DevNodes",
    "detect_listing_kind",
    "listing_sections",
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


def _refusal(text: str, sections: list[Section], source: str) -> ParseError:
    from hpnet.errors import ParseError  # noqa: PLC0415 - the error path only

    if not sections:
        return ParseError(
            "not a recognised RDMA listing (the input is empty)",
            source=source,
            fix=FIX,
            code="listing-unrecognised",
        )
    stray = next((s.strays[0] for s in sections if s.strays), None)
    number, line = stray or sections[0].lines[0]
    return ParseError(
        "not a recognised RDMA listing: no part of it is the whole output of an RDMA tool "
        f"(line {number}, {line.strip()[:60]!r}, is a line no such tool prints there)",
        source=source,
        line_number=number,
        fix=FIX,
        code="listing-unrecognised",
    )


def _unread(section: Section, source: str) -> Problem:
    """The problem that names a section, or the stray lines of one, not read."""
    if section.kind is not None:
        number, line = section.strays[0]
        more = f" and {len(section.strays) - 1} more" if len(section.strays) > 1 else ""
        what = f"line {number} ({line[:60]!r}){more} not read: not {section.kind} output"
        return Problem(code="listing-lines-not-read", what=what, where=f"{source}:{number}")
    if not section.strays:
        what = f"{section.describe()} not read: only a tool's error or warning lines"
        number = section.first
    else:
        number, line = section.strays[0]
        what = (
            f"{section.describe()} not read: line {number} ({line[:60]!r}) is not the output "
            "of an RDMA tool hpnet reads"
        )
    return Problem(code="listing-section-not-read", what=what, where=f"{source}:{number}")


def listing_sections(
    text: str, *, source: str = "<input>"
) -> tuple[list[tuple[str, str]], tuple[Problem, ...]]:
    """Every section of ``text`` that is one tool's output as a whole, as ``(kind,
    text)`` (the text keeps its line numbers), and a problem naming each section that
    is not (:mod:`~hpnet.rdma.listings.sections`).

    Raises :class:`~hpnet.errors.ParseError` when no section is.

    >>> text = "$ ip -br a|lo  UNKNOWN|$ rdma link|link mlx5_0/1 state ACTIVE".replace("|", "\\n")
    >>> read, unread = listing_sections(text)
    >>> [kind for kind, _ in read], unread[0].code
    (['rdma link'], 'listing-section-not-read')
    """
    lines = text.splitlines()
    sections = split_sections(text, _kind_of_line)
    read = [(s.kind, s.text(len(lines))) for s in sections if s.kind is not None]
    if not read:
        raise _refusal(text, sections, source)
    problems = tuple(_unread(s, source) for s in sections if s.kind is None or s.strays)
    return read, problems


def detect_listing_kind(text: str, *, source: str = "<input>") -> str:
    """Name the tool that printed ``text`` (of several sections, the first read).

    Raises :class:`~hpnet.errors.ParseError` when no section of it is one tool's
    output as a whole.
    """
    return listing_sections(text, source=source)[0][0][0]


def parse_listing(text: str, *, source: str = "<input>") -> tuple[str, Parsed]:
    """Detect the tool and parse; returns ``(kind, (devices, problems))``. Of several
    sections every one is read and merged (``kind`` names the first), and a section
    that is no tool's output is a problem.

    >>> kind, (devices, _) = parse_listing("link mlx5_0/1 state ACTIVE netdev eth0")
    >>> kind, devices[0].ports[0].netdev
    ('rdma link', 'eth0')
    """
    read, problems = listing_sections(text, source=source)
    devices = []
    found = list(problems)
    for kind, section in read:
        got, more = PARSERS[kind](section.splitlines(), source=source)
        devices.append(got)
        found += more
    return read[0][0], (merge_devices(devices), tuple(found))
