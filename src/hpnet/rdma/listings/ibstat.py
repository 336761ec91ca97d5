"""``ibstat`` (rdma-core ``infiniband-diags/ibstat.c``).

``CA 'mlx5_0'`` blocks with ``Port N:`` sub-blocks; states spelled ``Active``,
``Down``, ``Initializing``, ``Armed``; ``Rate: 200`` in Gb/s; GUIDs as ``0x…``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.errors import ParseError
from hpnet.rdma.listings._common import (
    FIX,
    DeviceDraft,
    Parsed,
    PortDraft,
    key_value,
    numbered_lines,
    parse_int,
    sysfs_guid,
    unrecognised,
)
from hpnet.rdma.model import PhysState, PortState, RdmaDevice, RdmaPort
from hpnet.rdma.providers import provider_for
from hpnet.result import Problem

__all__ = ["parse_ibstat"]

_STATES = {"down": 1, "initializing": 2, "init": 2, "armed": 3, "active": 4}
_PHYS = {p.value.lower(): p for p in PhysState}
_CA = re.compile(r"^[ \t]*CA '([^']+)'")
_PORT = re.compile(r"^[ \t]*Port (\d+):[ \t]*$")


def parse_ibstat(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibstat`` output (``CA 'mlx5_0'`` blocks)."""
    drafts: list[DeviceDraft] = []
    for number, line in numbered_lines(lines):
        ca = _CA.match(line)
        if ca:
            drafts.append(DeviceDraft(name=ca.group(1), line_number=number))
            continue
        port = _PORT.match(line)
        if port:
            if not drafts:
                raise ParseError(
                    f"ibstat output has a port before any CA: {line.strip()!r}",
                    source=source,
                    line_number=number,
                    fix=FIX,
                    code="listing-malformed",
                )
            drafts[-1].ports.append(PortDraft(number=int(port.group(1)), line_number=number))
            continue
        pair = key_value(line)
        if pair and drafts:
            target = drafts[-1].ports[-1].fields if drafts[-1].ports else drafts[-1].fields
            target.setdefault(*pair)
    if not drafts:
        raise unrecognised("ibstat", "no \"CA '<name>'\" line", source)
    problems: list[Problem] = []
    devices = tuple(_device(draft, source, problems) for draft in drafts)
    return devices, tuple(problems)


def _device(draft: DeviceDraft, source: str, problems: list[Problem]) -> RdmaDevice:
    ports = tuple(_port(draft.name, port, source, problems) for port in draft.ports)
    expected = draft.fields.get("Number of ports", "")
    if expected.isdigit() and int(expected) > len(ports):
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{draft.name} has {expected} ports but the listing shows {len(ports)}",
                where=f"{source}:{draft.line_number}",
            )
        )
    return RdmaDevice(
        name=draft.name,
        driver=provider_for(draft.name, None),
        hca_type=draft.fields.get("CA type"),
        fw_ver=draft.fields.get("Firmware version"),
        node_guid=sysfs_guid(draft.fields.get("Node GUID")),
        sys_image_guid=sysfs_guid(draft.fields.get("System image GUID")),
        ports=ports,
    )


def _port(device: str, port: PortDraft, source: str, problems: list[Problem]) -> RdmaPort:
    state_text = port.fields.get("State", "").lower()
    if not state_text:
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{device} port {port.number} has no State line (cut short?)",
                where=f"{source}:{port.line_number}",
            )
        )
    try:
        rate_gbps: float | None = float(port.fields.get("Rate", ""))
    except ValueError:
        rate_gbps = None
    return RdmaPort(
        number=port.number,
        state=PortState.from_code(_STATES[state_text])
        if state_text in _STATES
        else PortState.UNKNOWN,
        phys_state=_PHYS.get(port.fields.get("Physical state", "").lower()),
        link_layer=port.fields.get("Link layer"),
        rate=f"{rate_gbps:g} Gb/sec" if rate_gbps is not None else None,
        rate_gbps=rate_gbps,
        lid=parse_int(port.fields.get("Base lid")),
        sm_lid=parse_int(port.fields.get("SM lid")),
    )
