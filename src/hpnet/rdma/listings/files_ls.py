"""``ibstatus``, ``ibv_devinfo -l``, and ``ls [-l]`` of ``/sys/class/infiniband`` and
``/dev/infiniband``: the listings people paste when a device is missing.

* ``ibstatus`` (infiniband-diags' script): one ``Infiniband device 'mlx5_0' port 1
  status:`` block per port with ``default gid``, ``state: 4: ACTIVE``, ``phys state:
  5: LinkUp``, ``rate``, ``link_layer``. Only GID 0 is shown, untyped: no RoCE v2 GID
  is known from it, so its GID table counts as not shown.
* ``ibv_devinfo -l`` (rdma-core ``devinfo.c``): ``N HCAs found:`` then one name a line.
* ``ls /sys/class/infiniband``: the device names (``ls -l``: each a link to its PCI
  function, ``.../0000:3b:00.0/infiniband/mlx5_0``). No port, state or link layer.
* ``ls /dev/infiniband``: the character devices a process here can open
  (``uverbsN``, ``rdma_cm``, ``umadN``); ``ls -l`` adds their modes. Which device a
  ``uverbsN`` opens is not in it (``/sys/class/infiniband_verbs/uverbsN/ibdev`` says).

Shell prompts and the command line a user pasted with the output are skipped.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from hpnet.rdma.listings._common import Parsed, numbered_lines, unrecognised
from hpnet.rdma.model import PhysState, PortState, RdmaDevice, RdmaPort
from hpnet.rdma.providers import provider_for

__all__ = [
    "DevNodes",
    "parse_dev_infiniband",
    "parse_devinfo_list",
    "parse_ibstatus",
    "parse_sys_class_infiniband",
]

_IBSTATUS_HEAD = re.compile(r"^\s*Infiniband device '([^']+)' port (\d+) status:")
_IBSTATUS_FIELD = re.compile(r"^\s*([a-z_ ]+?):\s*(.*?)\s*$")
_NUMBERED_STATE = re.compile(r"^(\d+):\s*(\S+)")
#: names of RDMA devices the kernel registers (drivers' ib_register_device names)
_DEVICE_NAME = re.compile(
    r"^(?:mlx[45]_\w+|erdma_\d+|irdma\d+|efa_?\d+|bnxt_re\d+|rxe\w*|siw\w*|qedr\d+|hfi1_\d+|"
    r"hns_\d+|ocrdma\d+|cxgb4_\d+|vmw_pvrdma\d+|mana_\d+|ionic_\d+|roce\w+|ibp\w+)$"
)
_DEV_NODE = re.compile(r"^(?:uverbs\d+|rdma_cm|umad\d+|issm\d+|ucm\d+|uat|by-ibdev|by-path)$")
_LS_LONG = re.compile(
    r"^([bcdlps-][rwxsStT-]{9}[.+@]?)\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+\s+"
    r"(?:\S+\s+\S+\s+\S+)\s+(\S+)(?:\s+->\s+(\S+))?\s*$"
)
_PCI = re.compile(r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])/infiniband/")


def _prompt(line: str) -> bool:
    """A shell prompt or the command a user pasted with the output."""
    stripped = line.strip()
    return (
        stripped.startswith(("$", "#", ">", "CMD:", "---", "total "))
        or bool(re.match(r"^\S+@\S+[:~].*[$#]", stripped))
        or bool(re.match(r"^\S+:\S*\s*[#$]\s", stripped))
        or stripped.startswith(("ls ", "ibstatus", "ibv_devinfo"))
    )


def parse_ibstatus(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibstatus``.

    >>> devices, _ = parse_ibstatus([
    ...     "Infiniband device 'mlx5_0' port 1 status:", "\\tstate:\\t 4: ACTIVE",
    ...     "\\tlink_layer:\\t InfiniBand"])
    >>> devices[0].ports[0].state, devices[0].ports[0].link_layer
    (<PortState.ACTIVE: 'ACTIVE'>, 'InfiniBand')
    """
    ports: dict[str, list[RdmaPort]] = {}
    current: tuple[str, int, dict[str, str]] | None = None

    def close() -> None:
        if current is None:
            return
        device, number, fields = current
        state = _NUMBERED_STATE.match(fields.get("state", ""))
        phys = _NUMBERED_STATE.match(fields.get("phys state", ""))
        # "default gid" is GID 0 alone, without its type: the table is not shown, and
        # a port with one untyped GID would read as one without RoCE v2 GIDs
        ports.setdefault(device, []).append(
            RdmaPort(
                number=number,
                state=PortState.from_code(int(state.group(1))) if state else PortState.UNKNOWN,
                phys_state=PhysState.from_code(int(phys.group(1))) if phys else None,
                link_layer=fields.get("link_layer") or None,
                rate=fields.get("rate") or None,
            )
        )

    for _, line in numbered_lines(lines):
        head = _IBSTATUS_HEAD.match(line)
        if head:
            close()
            current = (head.group(1), int(head.group(2)), {})
            continue
        field = _IBSTATUS_FIELD.match(line)
        if field and current is not None:
            current[2].setdefault(field.group(1).strip(), field.group(2))
    close()
    if not ports:
        what = "no \"Infiniband device '<dev>' port <n> status:\" line"
        raise unrecognised("ibstatus", what, source)
    devices = tuple(
        RdmaDevice(name=name, driver=provider_for(name, None), ports=tuple(found))
        for name, found in ports.items()
    )
    return devices, ()


def parse_devinfo_list(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """``ibv_devinfo -l``: ``N HCAs found:`` and the names (no ports)."""
    devices: list[RdmaDevice] = []
    found = False
    for _, line in numbered_lines(lines):
        stripped = line.strip()
        if re.match(r"^\d+ HCAs? found:?$", stripped):
            found = True
            continue
        if found and _DEVICE_NAME.match(stripped):
            devices.append(RdmaDevice(name=stripped, driver=provider_for(stripped, None)))
    if not found:
        raise unrecognised("ibv_devinfo -l", "no 'N HCAs found:' line", source)
    return tuple(devices), ()


def parse_sys_class_infiniband(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """``ls [-l] /sys/class/infiniband``: device names (and PCI functions), no ports."""
    devices: dict[str, RdmaDevice] = {}
    for _, line in numbered_lines(lines):
        if not line.strip() or _prompt(line):
            continue
        long = _LS_LONG.match(line)
        if long:
            name, target = long.group(2), long.group(3) or ""
            if _DEVICE_NAME.match(name):
                pci = _PCI.search(target)
                devices[name] = RdmaDevice(
                    name=name,
                    driver=provider_for(name, None),
                    pci_address=pci.group(1).lower() if pci else None,
                )
            continue
        for token in line.split():
            if _DEVICE_NAME.match(token):
                devices.setdefault(token, RdmaDevice(name=token, driver=provider_for(token, None)))
    if not devices:
        raise unrecognised("ls /sys/class/infiniband", "no RDMA device name", source)
    return tuple(devices.values()), ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DevNodes:
    """What ``ls [-l] /dev/infiniband`` shows."""

    names: tuple[str, ...]  # uverbs0, rdma_cm, umad0, ...
    #: name -> mode string (``crw-rw-rw-``), when ``ls -l`` shows it
    modes: tuple[tuple[str, str], ...] = ()

    @property
    def uverbs(self) -> tuple[str, ...]:
        return tuple(sorted((n for n in self.names if n.startswith("uverbs")), key=_number))

    @property
    def has_rdma_cm(self) -> bool:
        return "rdma_cm" in self.names


def _number(name: str) -> int:
    digits = re.sub(r"\D", "", name)
    return int(digits) if digits else -1


def parse_dev_infiniband(lines: Iterable[str], *, source: str = "<input>") -> DevNodes:
    """``ls [-l] /dev/infiniband``.

    >>> parse_dev_infiniband(["rdma_cm  ucm0  uverbs0  uverbs2"]).uverbs
    ('uverbs0', 'uverbs2')
    """
    names: dict[str, None] = {}
    modes: dict[str, str] = {}
    for _, line in numbered_lines(lines):
        if not line.strip() or _prompt(line):
            continue
        long = _LS_LONG.match(line)
        if long:
            name = long.group(2)
            if _DEV_NODE.match(name) and name not in ("by-ibdev", "by-path"):
                names[name] = None
                modes[name] = long.group(1)
            continue
        for token in line.split():
            if _DEV_NODE.match(token) and token not in ("by-ibdev", "by-path"):
                names[token] = None
    if not names:
        raise unrecognised("ls /dev/infiniband", "no uverbsN / rdma_cm entry", source)
    return DevNodes(names=tuple(names), modes=tuple(modes.items()))
