"""``ibv_devinfo [-v]`` and ``ibv_devices`` (rdma-core ``libibverbs/examples/``).

``devinfo.c`` prints ``hca_id:`` blocks with ``port:`` sub-blocks; states as
``PORT_ACTIVE (4)``; with ``-v`` also ``active_width``, ``active_speed``,
``phys_state`` and ``GID[  i]: <gid>[, RoCE v2]`` (the type suffix appeared in
rdma-core v22; newer versions print RoCE v2 GIDs in compressed IPv6 notation).
``devices.c`` prints a ``device  node GUID`` table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.errors import ParseError
from hpnet.rdma.gid import make_gid
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

__all__ = ["UNNAMED", "parse_ibv_devices", "parse_ibv_devinfo"]

_GID_LINE = re.compile(r"^[ \t]*GID\[[ \t]*(\d+)\]:[ \t]*([0-9A-Fa-f:.]*)[ \t]*(?:,(.*))?$")
# the address of a GID whose line was wrapped after "GID[  3]:" (mail clients do this)
_WRAPPED_GID = re.compile(r"^[ \t]*([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)[ \t]*(?:,(.*))?$")
_CODE_IN_PARENS = re.compile(r"\((\d+)\)$")
# Per-lane speeds (Gb/s) and their InfiniBand names, as ibv_devinfo prints active_speed.
_LANE_NAMES = {2.5: "SDR", 5.0: "DDR", 10.0: "QDR", 14.0: "FDR", 25.0: "EDR", 50.0: "HDR",
               100.0: "NDR", 200.0: "XDR"}  # fmt: skip


#: libibverbs' own warnings as it loads its providers (rdma-core libibverbs/init.c and
#: dynamic_driver.c): no config directory (no provider is installed), a provider that did
#: not load, a kernel device no provider drives; each hides devices the kernel has
_VERBS_WARNING = re.compile(
    r"libibverbs: Warning: (?:couldn't open config directory '(?P<dir>[^']*)'"
    r"|couldn't load driver '(?P<lib>[^']*)'|no userspace device-specific driver found for "
    r"(?P<dev>\S+))"
)


def _verbs_warnings(
    found: list[tuple[int, re.Match[str]]], source: str, *, listed: bool
) -> list[Problem]:
    """What libibverbs' warnings say a listing cannot show: a kernel device no provider
    drives, no provider installed, a provider that did not load (each kind once, its
    first line; most telling first)."""
    firsts: dict[str, tuple[int, str]] = {}
    for number, warned in found:
        kind = str(warned.lastgroup)  # the alternatives' one named group that matched
        firsts.setdefault(kind, (number, warned.group(kind)))
    said = {
        "dev": lambda name: (
            f"the kernel has {name}, but no user-space provider drives it: "
            "install the provider for its driver (rdma-core's ibverbs-providers), matching the "
            "kernel's rdma-core version"
        ),
        "dir": lambda name: (
            f"libibverbs found no provider configuration ('{name}' could not "
            "be opened): rdma-core's user-space providers are not installed (Debian/Ubuntu "
            "ibverbs-providers, RHEL rdma-core / libibverbs), so it lists no device even where "
            "the kernel has one; `ls /sys/class/infiniband` shows the kernel's"
        ),
        "lib": lambda name: (
            f"libibverbs could not load the provider '{name}' (the line's "
            "error says why: a missing library, an ABI mismatch between rdma-core versions)"
            + (
                ": harmless where no device of that driver is here"
                if listed
                else ": the devices it drives are missing from this listing"
            )
        ),
    }
    return [
        Problem(code="listing-verbs-provider", what=said[kind](firsts[kind][1]),
                where=f"{source}:{firsts[kind][0]}")
        for kind in ("dev", "dir", "lib") if kind in firsts
    ]  # fmt: skip


def parse_ibv_devinfo(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibv_devinfo`` or ``ibv_devinfo -v`` output.

    >>> devices, _ = parse_ibv_devinfo(
    ...     ["hca_id: mlx5_0", " port: 1", "  state: PORT_ACTIVE (4)", "  link_layer: InfiniBand"]
    ... )
    >>> devices[0].ports[0].state
    <PortState.ACTIVE: 'ACTIVE'>
    """
    drafts: list[DeviceDraft] = []
    problems: list[Problem] = []
    saw_no_devices = False
    unopened: list[int] = []  # "Failed to open device" lines
    verbs: list[tuple[int, re.Match[str]]] = []  # libibverbs' warnings
    wrapped: tuple[int, int] | None = None  # (GID index, line) waiting for its address
    for number, line in numbered_lines(lines):
        if not line.strip():
            continue
        if wrapped is not None:
            index, at = wrapped
            wrapped = None
            continued = _WRAPPED_GID.match(line)
            if continued:
                _add_gid(drafts, index, continued.group(1), gid_type=continued.group(2),
                         source=source, number=number, problems=problems)  # fmt: skip
                continue
            problems.append(
                Problem(
                    code="listing-bad-gid",
                    what=f"GID {index} has no address",
                    where=f"{source}:{at}",
                )
            )
        if warned := _VERBS_WARNING.search(line):
            verbs.append((number, warned))
            continue
        if "No IB devices found" in line:
            saw_no_devices = True
            continue
        if line.strip() == "Failed to open device":
            # devinfo.c's print_hca_cap: ibv_open_device failed, before the hca_id line
            unopened.append(number)
            continue
        gid_match = _GID_LINE.match(line)
        if gid_match:
            if not drafts:
                drafts.append(_unnamed(number, source, problems))
            index = int(gid_match.group(1))
            if not gid_match.group(2):
                wrapped = (index, number)
                continue
            _add_gid(drafts, index, gid_match.group(2), gid_type=gid_match.group(3),
                     source=source, number=number, problems=problems)  # fmt: skip
            continue
        pair = key_value(line)
        if pair is None:
            continue  # continuation lines of -v flag lists, prompts, "...." elisions
        _key_value(drafts, pair, line, source=source, number=number, problems=problems)
    if unopened:
        problems.append(
            Problem(
                code="listing-device-unopened",
                what=f"{len(unopened)} device(s) could not be opened here ('Failed to open "
                "device': ibv_devinfo does not print their names; `ls /sys/class/infiniband` "
                "names them, `ls /dev/infiniband` shows which uverbs nodes exist)",
                where=f"{source}:{unopened[0]}",
            )
        )
    problems += _verbs_warnings(verbs, source, listed=bool(drafts))
    if not drafts and not saw_no_devices and not unopened:
        raise unrecognised("ibv_devinfo", "no 'hca_id:' line", source)
    devices = tuple(_device(draft, source, problems) for draft in drafts)
    return devices, tuple(problems)


def _key_value(
    drafts: list[DeviceDraft],
    pair: tuple[str, str],
    line: str,
    *,
    source: str,
    number: int,
    problems: list[Problem],
) -> None:
    """A ``key: value`` line: a device (``hca_id``), a port, or a field of the last one."""
    key, value = pair
    if key == "hca_id":
        if not value:
            raise _malformed(source, number, line, "an hca_id without a device name")
        drafts.append(DeviceDraft(name=value, line_number=number))
        return
    if key == "port":
        if not drafts:
            drafts.append(_unnamed(number, source, problems))
        if not value.isdigit():
            raise _malformed(source, number, line, "a port number that is not a number")
        drafts[-1].ports.append(PortDraft(number=int(value), line_number=number))
        return
    if not drafts:
        if key not in _PORT_KEYS:
            return  # prompts and text before the listing
        drafts.append(_unnamed(number, source, problems))
        drafts[-1].ports.append(PortDraft(number=1, line_number=number))
    target = drafts[-1].ports[-1].fields if drafts[-1].ports else drafts[-1].fields
    target.setdefault(key, value)


#: keys of a port section: a listing that starts with one was cut above its hca_id line
_PORT_KEYS = frozenset(
    {"state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer",
     "max_msg_sz", "port_cap_flags", "active_width", "active_speed", "phys_state"}
)  # fmt: skip
#: the name given to a device whose hca_id line the listing does not hold
UNNAMED = "(unnamed)"


def _unnamed(number: int, source: str, problems: list[Problem]) -> DeviceDraft:
    """A device whose ``hca_id`` line is cut off: its name is not in the listing."""
    problems.append(
        Problem(
            code="listing-no-device-name",
            what="the listing starts inside a device's section: its name is not shown, so "
            "no NCCL_IB_HCA can name it (`ibv_devinfo -v` from its first line shows it)",
            where=f"{source}:{number}",
        )
    )
    return DeviceDraft(name=UNNAMED, line_number=number)


def _add_gid(
    drafts: list[DeviceDraft],
    index: int,
    text: str,
    *,
    gid_type: str | None,
    source: str,
    number: int,
    problems: list[Problem],
) -> None:
    """Add a GID to the current port; GIDs before any ``port:`` line (an excerpt,
    ``ibv_devinfo -v | grep GID``) go to port 1, and the guess is reported."""
    device = drafts[-1]
    if not device.ports:
        device.ports.append(PortDraft(number=1, line_number=number))
        problems.append(
            Problem(
                code="listing-no-port-line",
                what=f"{device.name}: GID lines without a 'port:' line; assumed port 1",
                where=f"{source}:{number}",
            )
        )
    try:
        device.ports[-1].gids.append(make_gid(index, text, gid_type, None))
    except ValueError:
        problems.append(
            Problem(
                code="listing-bad-gid",
                what=f"GID {index} is not an address: {text!r}",
                where=f"{source}:{number}",
            )
        )


def _malformed(source: str, number: int, line: str, what: str) -> ParseError:
    return ParseError(
        f"ibv_devinfo output has {what}: {line.strip()[:60]!r}",
        source=source,
        line_number=number,
        fix=FIX,
        code="listing-malformed",
    )


def _code(value: str | None) -> int | None:
    """``PORT_ACTIVE (4)`` -> 4."""
    match = _CODE_IN_PARENS.search(value or "")
    return int(match.group(1)) if match else None


def _device(draft: DeviceDraft, source: str, problems: list[Problem]) -> RdmaDevice:
    fields = draft.fields
    ports = [_port(draft.name, port, source, problems) for port in draft.ports]
    expected = fields.get("phys_port_cnt", "")
    if not ports:
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{draft.name} has no port section (cut short?)",
                where=f"{source}:{draft.line_number}",
            )
        )
    elif expected.isdigit() and int(expected) > len(ports):
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{draft.name} has {expected} ports but the listing shows {len(ports)}"
                " (cut short?)",
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


def _port(device: str, port: PortDraft, source: str, problems: list[Problem]) -> RdmaPort:
    fields = port.fields
    state_code = _code(fields.get("state"))
    if state_code is None:
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"{device} port {port.number} has no state line (cut short?)",
                where=f"{source}:{port.line_number}",
            )
        )
    phys_code = _code(fields.get("phys_state"))
    rate, rate_gbps = _rate(fields.get("active_width"), fields.get("active_speed"))
    mtu = fields.get("active_mtu", "").split(" ", 1)[0]
    return RdmaPort(
        number=port.number,
        state=PortState.from_code(state_code) if state_code is not None else PortState.UNKNOWN,
        phys_state=PhysState.from_code(phys_code) if phys_code is not None else None,
        link_layer=fields.get("link_layer"),
        rate=rate,
        rate_gbps=rate_gbps,
        lid=parse_int(fields.get("port_lid")),
        sm_lid=parse_int(fields.get("sm_lid")),
        active_mtu=int(mtu) if mtu.isdigit() else None,
        gids=tuple(port.gids),
    )


def _rate(width: str | None, speed: str | None) -> tuple[str | None, float | None]:
    """``4X (2)`` and ``50.0 Gbps (64)`` -> ``("200 Gb/sec (4X HDR)", 200.0)``."""
    width_match = re.match(r"(\d+)X", (width or "").strip())
    speed_match = re.match(r"(\d+(?:\.\d+)?)\s*Gbps", (speed or "").strip())
    if not width_match or not speed_match:
        return None, None
    lanes = int(width_match.group(1))
    lane_gbps = float(speed_match.group(1))
    total = lanes * lane_gbps
    name = _LANE_NAMES.get(lane_gbps)
    label = f"{lanes}X {name}" if name else f"{lanes}X"
    return f"{total:g} Gb/sec ({label})", total


def parse_ibv_devices(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibv_devices``: device names and node GUIDs, no ports.

    A header with no rows is a node without devices.
    """
    devices = []
    saw_header = False
    for _, line in numbered_lines(lines):
        fields = line.split()
        if fields[:3] == ["device", "node", "GUID"]:
            saw_header = True
        elif len(fields) == 2 and re.fullmatch(r"[0-9a-fA-F]{16}", fields[1]):
            devices.append(
                RdmaDevice(
                    name=fields[0],
                    driver=provider_for(fields[0], None),
                    node_guid=sysfs_guid(fields[1]),
                )
            )
    if not devices and not saw_header:
        raise unrecognised("ibv_devices", "no 'device  node GUID' header", source)
    return tuple(devices), ()
