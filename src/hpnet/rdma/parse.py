"""Parsers of the verbs tools' output, into the sysfs reader's device model.

Pure functions of text. Each returns ``(devices, problems)``; input that is not
the tool's output at all raises :class:`~hpnet.errors.ParseError` with the line.
Formats, from the tools' sources:

* ``ibv_devinfo [-v]`` — rdma-core ``libibverbs/examples/devinfo.c``: ``hca_id:``
  blocks, ``port:`` sub-blocks, ``state: PORT_ACTIVE (4)``, with ``-v`` also
  ``active_width``/``active_speed``/``phys_state`` and ``GID[  i]: <gid>[, RoCE v2]``.
* ``ibstat`` — rdma-core ``infiniband-diags/ibstat.c``: ``CA 'mlx5_0'`` blocks,
  ``Port 1:`` sub-blocks, ``State: Active``, ``Rate: 200``.
* ``show_gids`` — Mellanox OFED script: ``DEV PORT INDEX GID IPv4 VER DEV`` rows.
* ``ibdev2netdev [-v]`` — Mellanox OFED script: ``mlx5_0 port 1 ==> ib0 (Up)``.
* ``rdma link [show]`` — iproute2 ``rdma/link.c``: ``link mlx5_0/1 state ACTIVE
  physical_state LINK_UP netdev ens1f0`` (iproute2 < 4.19: ``1/1: mlx5_0/1: state …``).
* ``ibv_devices`` — rdma-core ``libibverbs/examples/devices.c``: name and node GUID.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from hpnet.errors import ParseError
from hpnet.problem import Problem
from hpnet.rdma.gid import make_gid
from hpnet.rdma.model import Gid, PhysState, PortState, RdmaDevice, RdmaPort
from hpnet.rdma.providers import provider_for

__all__ = [
    "LISTING_KINDS",
    "detect_listing_kind",
    "merge_devices",
    "parse_ibdev2netdev",
    "parse_ibstat",
    "parse_ibv_devinfo",
    "parse_listing",
    "parse_show_gids",
]

LISTING_KINDS = ("ibv_devinfo", "ibstat", "show_gids", "ibdev2netdev", "rdma link", "ibv_devices")
Parsed = tuple[tuple[RdmaDevice, ...], tuple[Problem, ...]]

_FIX = (
    "pass the unedited output of ibv_devinfo [-v], ibstat, show_gids, ibdev2netdev, "
    "rdma link or ibv_devices"
)


def detect_listing_kind(text: str, *, source: str = "<input>") -> str:
    """Name the tool that printed ``text``; ParseError when none did."""
    if re.search(r"^\s*hca_id:", text, re.MULTILINE) or "No IB devices found" in text:
        return "ibv_devinfo"
    if re.search(r"^\s*CA '[^']+'", text, re.MULTILINE):
        return "ibstat"
    if re.search(r"^\s*DEV\s+PORT\s+INDEX\s+GID", text, re.MULTILINE) or "n_gids_found" in text:
        return "show_gids"
    if re.search(r"\bport\s+\d+\s*(?:\(\s*[A-Z_]+\s*\)\s*)?==>", text):
        return "ibdev2netdev"
    if _RDMA_LINK.search(text):
        return "rdma link"
    if re.search(r"^\s*device\s+node GUID\s*$", text, re.MULTILINE):
        return "ibv_devices"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    raise ParseError(
        "not a recognised RDMA listing"
        + (f" (first line: {first[:60]!r})" if first else " (the input is empty)"),
        source=source,
        line_number=1 if first else 0,
        fix=_FIX,
        code="listing-unrecognised",
    )


def parse_listing(text: str, *, source: str = "<input>") -> tuple[str, Parsed]:
    """Detect the tool and parse; returns ``(kind, (devices, problems))``."""
    kind = detect_listing_kind(text, source=source)
    parser = {
        "ibv_devinfo": parse_ibv_devinfo,
        "ibstat": parse_ibstat,
        "show_gids": parse_show_gids,
        "ibdev2netdev": parse_ibdev2netdev,
        "rdma link": parse_rdma_link,
        "ibv_devices": parse_ibv_devices,
    }[kind]
    return kind, parser(text.splitlines(), source=source)


# ---------------------------------------------------------------- ibv_devinfo

_KEY_VALUE = re.compile(r"^\s*([A-Za-z_][\w ]*?):\s*(.*?)\s*$")
_GID_LINE = re.compile(r"^\s*GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+)\s*(?:,\s*(.+?))?\s*$")
_CODE_IN_PARENS = re.compile(r"\((\d+)\)\s*$")
_LANE_NAMES = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0: "FDR", 25.0: "EDR", 50.0: "HDR",
               100.0: "NDR", 200.0: "XDR"}  # fmt: skip


@dataclasses.dataclass
class _PortDraft:
    number: int
    line_number: int
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    gids: list[Gid] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _DeviceDraft:
    name: str
    line_number: int
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    ports: list[_PortDraft] = dataclasses.field(default_factory=list)


def parse_ibv_devinfo(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibv_devinfo`` or ``ibv_devinfo -v`` output.

    >>> devices, _ = parse_ibv_devinfo(
    ...     ["hca_id: mlx5_0", " port: 1", "  state: PORT_ACTIVE (4)", "  link_layer: InfiniBand"]
    ... )
    >>> devices[0].ports[0].state
    <PortState.ACTIVE: 'ACTIVE'>
    """
    drafts: list[_DeviceDraft] = []
    problems: list[Problem] = []
    saw_no_devices = False
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if "No IB devices found" in line:
            saw_no_devices = True
            continue
        gid_match = _GID_LINE.match(line)
        if gid_match:
            if not drafts or not drafts[-1].ports:
                raise _stray(source, number, line, "a GID line outside any port")
            port = drafts[-1].ports[-1]
            try:
                port.gids.append(
                    make_gid(int(gid_match.group(1)), gid_match.group(2), gid_match.group(3), None)
                )
            except ValueError:
                problems.append(
                    Problem(
                        code="listing-bad-gid",
                        what=f"GID {gid_match.group(1)} is not an address: {gid_match.group(2)!r}",
                        where=f"{source}:{number}",
                    )
                )
            continue
        match = _KEY_VALUE.match(line)
        if not match:
            continue  # continuation lines of -v flags lists, prompts
        key, value = match.group(1).strip(), match.group(2)
        if key == "hca_id":
            drafts.append(_DeviceDraft(name=value, line_number=number))
        elif key == "port":
            if not drafts:
                raise _stray(source, number, line, "a port before any hca_id")
            if not value.isdigit():
                raise _stray(source, number, line, "a port number that is not a number")
            drafts[-1].ports.append(_PortDraft(number=int(value), line_number=number))
        elif drafts:
            target = drafts[-1].ports[-1].fields if drafts[-1].ports else drafts[-1].fields
            target.setdefault(key, value)
    if not drafts and not saw_no_devices:
        raise ParseError(
            "no 'hca_id:' line: this is not ibv_devinfo output",
            source=source,
            fix=_FIX,
            code="listing-unrecognised",
        )
    devices = tuple(_devinfo_device(draft, source, problems) for draft in drafts)
    return devices, tuple(problems)


def _stray(source: str, number: int, line: str, what: str) -> ParseError:
    return ParseError(
        f"ibv_devinfo output has {what}: {line.strip()[:60]!r}",
        source=source,
        line_number=number,
        fix=_FIX,
        code="listing-malformed",
    )


def _leading_code(value: str | None) -> int | None:
    if value is None:
        return None
    match = _CODE_IN_PARENS.search(value)
    return int(match.group(1)) if match else None


def _devinfo_device(draft: _DeviceDraft, source: str, problems: list[Problem]) -> RdmaDevice:
    fields = draft.fields
    ports = []
    for port in draft.ports:
        ports.append(_devinfo_port(draft.name, port, source, problems))
    expected = fields.get("phys_port_cnt")
    if expected and expected.isdigit() and int(expected) > len(ports):
        problems.append(
            Problem(
                code="listing-truncated",
                what=(
                    f"{draft.name} has {expected} ports but the listing shows {len(ports)}"
                    " (cut short?)"
                ),
                where=f"{source}:{draft.line_number}",
            )
        )
    transport = fields.get("transport")
    return RdmaDevice(
        name=draft.name,
        driver=provider_for(
            draft.name,
            None,
            vendor_id=fields.get("vendor_id"),
            part_id=fields.get("vendor_part_id"),
        ),
        transport=re.sub(r"\s*\(\d+\)$", "", transport) if transport else None,
        node_guid=fields.get("node_guid"),
        sys_image_guid=fields.get("sys_image_guid"),
        fw_ver=fields.get("fw_ver"),
        board_id=fields.get("board_id"),
        vendor_id=fields.get("vendor_id"),
        vendor_part_id=fields.get("vendor_part_id"),
        ports=tuple(ports),
    )


def _devinfo_port(device: str, port: _PortDraft, source: str, problems: list[Problem]) -> RdmaPort:
    fields = port.fields
    state_code = _leading_code(fields.get("state"))
    if state_code is None:
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{device} port {port.number} has no state line (cut short?)",
                where=f"{source}:{port.line_number}",
            )
        )
    phys_code = _leading_code(fields.get("phys_state"))
    rate, rate_gbps = _devinfo_rate(fields.get("active_width"), fields.get("active_speed"))
    lid = fields.get("port_lid")
    sm_lid = fields.get("sm_lid")
    mtu = fields.get("active_mtu", "").split(" ", 1)[0]
    return RdmaPort(
        number=port.number,
        state=PortState.from_code(state_code) if state_code is not None else PortState.UNKNOWN,
        phys_state=PhysState.from_code(phys_code) if phys_code is not None else None,
        link_layer=fields.get("link_layer"),
        rate=rate,
        rate_gbps=rate_gbps,
        lid=_int(lid),
        sm_lid=_int(sm_lid),
        active_mtu=int(mtu) if mtu.isdigit() else None,
        gids=tuple(port.gids),
    )


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def _devinfo_rate(width: str | None, speed: str | None) -> tuple[str | None, float | None]:
    """``4X (2)`` and ``50.0 Gbps (64)`` -> ``("200 Gb/sec (4X HDR)", 200.0)``."""
    if not width or not speed:
        return None, None
    width_match = re.match(r"(\d+)X", width.strip())
    speed_match = re.match(r"(\d+(?:\.\d+)?)\s*Gbps", speed.strip())
    if not width_match or not speed_match:
        return None, None
    lanes = int(width_match.group(1))
    lane_gbps = float(speed_match.group(1))
    total = lanes * lane_gbps
    name = _LANE_NAMES.get(lane_gbps)
    label = f"{lanes}X {name}" if name else f"{lanes}X"
    return f"{total:g} Gb/sec ({label})", total


# ---------------------------------------------------------------- ibstat

_IBSTAT_STATES = {"down": 1, "initializing": 2, "init": 2, "armed": 3, "active": 4}
_IBSTAT_PHYS = {p.value.lower(): p for p in PhysState}


def parse_ibstat(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibstat`` output (``CA 'mlx5_0'`` blocks)."""
    drafts: list[_DeviceDraft] = []
    problems: list[Problem] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip()
        ca = re.match(r"^\s*CA '([^']+)'", line)
        if ca:
            drafts.append(_DeviceDraft(name=ca.group(1), line_number=number))
            continue
        port_match = re.match(r"^\s*Port (\d+):\s*$", line)
        if port_match:
            if not drafts:
                raise ParseError(
                    f"ibstat output has a port before any CA: {line.strip()!r}",
                    source=source,
                    line_number=number,
                    fix=_FIX,
                    code="listing-malformed",
                )
            drafts[-1].ports.append(_PortDraft(number=int(port_match.group(1)), line_number=number))
            continue
        match = _KEY_VALUE.match(line)
        if match and drafts:
            target = drafts[-1].ports[-1].fields if drafts[-1].ports else drafts[-1].fields
            target.setdefault(match.group(1).strip(), match.group(2))
    if not drafts:
        raise ParseError(
            "no \"CA '<name>'\" line: this is not ibstat output",
            source=source,
            fix=_FIX,
            code="listing-unrecognised",
        )
    devices = []
    for draft in drafts:
        ports = []
        for port in draft.ports:
            state_text = port.fields.get("State", "").strip().lower()
            if not state_text:
                problems.append(
                    Problem(
                        code="listing-truncated",
                        what=f"{draft.name} port {port.number} has no State line (cut short?)",
                        where=f"{source}:{port.line_number}",
                    )
                )
            rate_text = port.fields.get("Rate")
            rate_gbps = _float(rate_text)
            ports.append(
                RdmaPort(
                    number=port.number,
                    state=PortState.from_code(_IBSTAT_STATES[state_text])
                    if state_text in _IBSTAT_STATES
                    else PortState.UNKNOWN,
                    phys_state=_IBSTAT_PHYS.get(port.fields.get("Physical state", "").lower()),
                    link_layer=port.fields.get("Link layer"),
                    rate=f"{rate_gbps:g} Gb/sec" if rate_gbps is not None else None,
                    rate_gbps=rate_gbps,
                    lid=_int(port.fields.get("Base lid")),
                    sm_lid=_int(port.fields.get("SM lid")),
                )
            )
        expected = draft.fields.get("Number of ports")
        if expected and expected.isdigit() and int(expected) > len(ports):
            problems.append(
                Problem(
                    code="listing-truncated",
                    what=f"{draft.name} has {expected} ports but the listing shows {len(ports)}",
                    where=f"{source}:{draft.line_number}",
                )
            )
        devices.append(
            RdmaDevice(
                name=draft.name,
                driver=provider_for(draft.name, None),
                hca_type=draft.fields.get("CA type"),
                fw_ver=draft.fields.get("Firmware version"),
                node_guid=_guid(draft.fields.get("Node GUID")),
                sys_image_guid=_guid(draft.fields.get("System image GUID")),
                ports=tuple(ports),
            )
        )
    return tuple(devices), tuple(problems)


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _guid(text: str | None) -> str | None:
    """ibstat's ``0x0c42a10300f61234`` -> sysfs's ``0c42:a103:00f6:1234``."""
    if not text:
        return None
    digits = text.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{16}", digits):
        return text
    return ":".join(digits[i : i + 4] for i in range(0, 16, 4))


# ---------------------------------------------------------------- show_gids

_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def parse_show_gids(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse Mellanox's ``show_gids``: one row per non-empty GID."""
    ports: dict[tuple[str, int], list[Gid]] = {}
    problems: list[Problem] = []
    saw_header = False
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if not fields:
            continue
        if fields[0] == "DEV" or set(fields[0]) == {"-"} or fields[0].startswith("n_gids_found"):
            saw_header = True
            continue
        if len(fields) < 5 or not fields[1].isdigit() or not fields[2].isdigit():
            continue
        dev, port, index, gid_text = fields[0], int(fields[1]), int(fields[2]), fields[3]
        rest = fields[4:]
        if rest and _IPV4.match(rest[0]):
            rest = rest[1:]
        gid_type = rest[0] if rest else None
        netdev = rest[1] if len(rest) > 1 else None
        try:
            gid = make_gid(index, gid_text, gid_type, netdev)
        except ValueError:
            problems.append(
                Problem(
                    code="listing-bad-gid",
                    what=f"{dev} port {port} GID {index} is not an address: {gid_text!r}",
                    where=f"{source}:{number}",
                )
            )
            continue
        ports.setdefault((dev, port), []).append(gid)
    if not ports and not saw_header:
        raise ParseError(
            "no show_gids header or rows",
            source=source,
            fix=_FIX,
            code="listing-unrecognised",
        )
    by_device: dict[str, list[RdmaPort]] = {}
    for (dev, port), gids in ports.items():
        netdev = next((g.netdev for g in gids if g.netdev), None)
        by_device.setdefault(dev, []).append(
            RdmaPort(number=port, state=PortState.UNKNOWN, netdev=netdev, gids=tuple(gids))
        )
    devices = tuple(
        RdmaDevice(name=dev, driver=provider_for(dev, None), ports=tuple(port_list))
        for dev, port_list in by_device.items()
    )
    return devices, tuple(problems)


# ---------------------------------------------------------------- ibdev2netdev

_IBDEV2NETDEV = re.compile(
    r"^\s*(?:(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)\s+)?"
    r"(?P<dev>\S+)\s+(?:\((?P<hca>[^)]*)\)\s*)?(?P<desc>.*?)"
    # -v pads the state inside the parentheses: "(DOWN  )"
    r"port\s+(?P<port>\d+)\s*(?:\(\s*(?P<state>[A-Z_]+)\s*\)\s*)?==>\s*(?P<netdev>\S+)\s*"
    r"(?:\((?P<link>\w+)\))?"
)


def parse_ibdev2netdev(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibdev2netdev`` (``mlx5_0 port 1 ==> ib0 (Up)``) and its ``-v`` form.

    The plain form shows the netdev's link (``Up``/``Down``), not the RDMA port
    state, so its ports are UNKNOWN; ``-v`` adds ``(ACTIVE)`` and the PCI address.
    """
    devices: dict[str, dict[str, object]] = {}
    port_lists: dict[str, list[RdmaPort]] = {}
    for raw in lines:
        match = _IBDEV2NETDEV.match(raw)
        if not match:
            continue
        dev = match.group("dev")
        state_text = match.group("state")
        state = PortState(state_text) if state_text in PortState.__members__ else PortState.UNKNOWN
        devices.setdefault(
            dev,
            {"bdf": match.group("bdf"), "hca": match.group("hca"), "desc": match.group("desc")},
        )
        port_lists.setdefault(dev, []).append(
            RdmaPort(number=int(match.group("port")), state=state, netdev=match.group("netdev"))
        )
    if not devices:
        raise ParseError(
            "no '<dev> port <n> ==> <netdev>' line: this is not ibdev2netdev output",
            source=source,
            fix=_FIX,
            code="listing-unrecognised",
        )
    result = []
    for dev, info in devices.items():
        desc = str(info["desc"] or "")
        fw = re.search(r"\bfw\s+(\S+)", desc)
        hca = str(info["hca"]) if info["hca"] else None
        result.append(
            RdmaDevice(
                name=dev,
                driver=provider_for(dev, None),
                pci_address=str(info["bdf"]).lower() if info["bdf"] else None,
                hca_type=hca.split(" - ")[0].strip() if hca else None,
                board_id=hca.split(" - ")[1].strip() if hca and " - " in hca else None,
                fw_ver=fw.group(1) if fw else None,
                netdevs=tuple(p.netdev for p in port_lists[dev] if p.netdev),
                ports=tuple(port_lists[dev]),
            )
        )
    return tuple(result), ()


# ---------------------------------------------------------------- rdma link

_RDMA_LINK = re.compile(r"^\s*(?:link\s+|\d+/\d+:\s+)(\S+?)/(\d+):?\s+(.*)$", re.MULTILINE)
_RDMA_PHYS = {
    "SLEEP": PhysState.SLEEP,
    "POLLING": PhysState.POLLING,
    "DISABLED": PhysState.DISABLED,
    "PORT_CONFIGURATION_TRAINING": PhysState.TRAINING,
    "LINK_UP": PhysState.LINK_UP,
    "LINK_ERROR_RECOVERY": PhysState.LINK_ERROR_RECOVERY,
    "PHY_TEST": PhysState.PHY_TEST,
}


def parse_rdma_link(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse iproute2's ``rdma link`` (one line per port, ``key value`` pairs)."""
    ports: dict[str, list[RdmaPort]] = {}
    for raw in lines:
        match = _RDMA_LINK.match(raw)
        if not match:
            continue
        tokens = match.group(3).split()
        pairs = dict(zip(tokens[::2], tokens[1::2], strict=False))
        state = pairs.get("state", "")
        ports.setdefault(match.group(1), []).append(
            RdmaPort(
                number=int(match.group(2)),
                state=PortState(state) if state in PortState.__members__ else PortState.UNKNOWN,
                phys_state=_RDMA_PHYS.get(pairs.get("physical_state", "")),
                lid=_int(pairs.get("lid")),
                sm_lid=_int(pairs.get("sm_lid")),
                netdev=pairs.get("netdev"),
            )
        )
    if not ports:
        raise ParseError(
            "no 'link <dev>/<port> ...' line: this is not `rdma link` output",
            source=source,
            fix=_FIX,
            code="listing-unrecognised",
        )
    return (
        tuple(
            RdmaDevice(
                name=dev,
                driver=provider_for(dev, None),
                netdevs=tuple(p.netdev for p in port_list if p.netdev),
                ports=tuple(port_list),
            )
            for dev, port_list in ports.items()
        ),
        (),
    )


# ---------------------------------------------------------------- ibv_devices


def parse_ibv_devices(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibv_devices``: device names and node GUIDs, no ports."""
    devices = []
    for raw in lines:
        fields = raw.split()
        if len(fields) == 2 and re.fullmatch(r"[0-9a-fA-F]{16}", fields[1]):
            devices.append(
                RdmaDevice(
                    name=fields[0],
                    driver=provider_for(fields[0], None),
                    node_guid=_guid(fields[1]),
                )
            )
    return tuple(devices), ()


# ---------------------------------------------------------------- merging


def merge_devices(listings: Sequence[Sequence[RdmaDevice]]) -> tuple[RdmaDevice, ...]:
    """Combine what several listings say of the same devices.

    The first listing that knows a field wins; ports are matched by number, a
    known port state replaces UNKNOWN, and GID tables with types win over
    tables without.
    """
    merged: dict[str, RdmaDevice] = {}
    for devices in listings:
        for device in devices:
            current = merged.get(device.name)
            merged[device.name] = device if current is None else _merge_device(current, device)
    return tuple(merged.values())


def _merge_device(a: RdmaDevice, b: RdmaDevice) -> RdmaDevice:
    updates: dict[str, object] = {}
    for field in dataclasses.fields(RdmaDevice):
        if field.name in {"name", "driver", "ports"}:
            continue
        if getattr(a, field.name) in (None, (), "") and getattr(b, field.name) not in (None, ()):
            updates[field.name] = getattr(b, field.name)
    ports = {p.number: p for p in a.ports}
    for port in b.ports:
        ports[port.number] = _merge_port(ports[port.number], port) if port.number in ports else port
    updates["ports"] = tuple(ports[n] for n in sorted(ports))
    return dataclasses.replace(a, **updates)  # type: ignore[arg-type]


def _merge_port(a: RdmaPort, b: RdmaPort) -> RdmaPort:
    updates: dict[str, object] = {}
    for field in dataclasses.fields(RdmaPort):
        if field.name in {"number", "state", "gids"}:
            continue
        if getattr(a, field.name) is None and getattr(b, field.name) is not None:
            updates[field.name] = getattr(b, field.name)
    if a.state is PortState.UNKNOWN and b.state is not PortState.UNKNOWN:
        updates["state"] = b.state
    typed_a = sum(1 for g in a.gids if g.type)
    typed_b = sum(1 for g in b.gids if g.type)
    if typed_b > typed_a or (not a.gids and b.gids):
        updates["gids"] = b.gids
    return dataclasses.replace(a, **updates)  # type: ignore[arg-type]
