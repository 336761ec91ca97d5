"""Mellanox OFED's scripts: ``show_gids`` and ``ibdev2netdev [-v]``.

``show_gids`` prints one row per non-empty GID, ``DEV PORT INDEX GID IPv4 VER DEV``,
then ``n_gids_found=N``; InfiniBand rows have no netdev column. ``ibdev2netdev``
prints ``mlx5_0 port 1 ==> ib0 (Up)`` (the netdev's state, not the port's);
``-v`` adds the PCI address, the HCA, firmware and the port state padded
inside parentheses (``(DOWN  )``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.rdma.gid import make_gid
from hpnet.rdma.listings._common import Parsed, numbered_lines, unrecognised
from hpnet.rdma.model import Gid, PortState, RdmaDevice, RdmaPort
from hpnet.rdma.providers import provider_for
from hpnet.result import Problem

__all__ = ["parse_ibdev2netdev", "parse_show_gids"]

_IPV4 = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_FOUND = re.compile(r"n_gids_found=(\d+)")


def parse_show_gids(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``show_gids``; a row that cannot be read, or fewer rows than
    ``n_gids_found`` announces, is reported as a problem."""
    ports: dict[tuple[str, int], list[Gid]] = {}
    problems: list[Problem] = []
    saw_header = False
    announced: tuple[int, int] | None = None
    rows = 0
    for number, line in numbered_lines(lines):
        fields = line.split()
        if not fields:
            continue
        found = _FOUND.search(line)
        if found:
            announced = (int(found.group(1)), number)
            continue
        if fields[0] == "DEV" or set(fields[0]) == {"-"}:
            saw_header = True
            continue
        if not saw_header:
            continue  # a prompt or a note before the table
        gid = _row(fields)
        if gid is None:
            problems.append(
                Problem(
                    code="listing-bad-row",
                    what=f"not a show_gids row: {line.strip()[:60]!r}",
                    where=f"{source}:{number}",
                )
            )
            continue
        rows += 1
        ports.setdefault((fields[0], int(fields[1])), []).append(gid)
    if not saw_header and announced is None:
        raise unrecognised("show_gids", "no 'DEV PORT INDEX GID' header", source)
    if announced is not None and announced[0] != rows:
        problems.append(
            Problem(
                code="listing-truncated",
                what=f"n_gids_found={announced[0]} but {rows} GID rows were read (cut short?)",
                where=f"{source}:{announced[1]}",
            )
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


def _row(fields: list[str]) -> Gid | None:
    """``DEV PORT INDEX GID [IPv4] VER [NETDEV]`` -> a GID, or None if malformed."""
    if len(fields) < 5 or not fields[1].isdigit() or not fields[2].isdigit():
        return None
    rest = fields[4:]
    if rest and _IPV4.match(rest[0]):
        rest = rest[1:]
    if not rest:
        return None
    try:
        return make_gid(int(fields[2]), fields[3], rest[0], rest[1] if len(rest) > 1 else None)
    except ValueError:
        return None


_IBDEV2NETDEV = re.compile(
    r"^[ \t]*(?:(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)[ \t]+)?"
    r"(?P<dev>\S+)[ \t]+(?:\((?P<hca>[^)]*)\)[ \t]*)?(?P<desc>[^=]*?)"
    r"port[ \t]+(?P<port>\d+)[ \t]*(?:\([ \t]*(?P<state>[A-Z_]+)[ \t]*\)[ \t]*)?"
    r"==>[ \t]*(?P<netdev>\S+)"
)


_NETDEV_STATE = re.compile(r"^\s*\((Up|Down)\)")


def parse_ibdev2netdev(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``ibdev2netdev`` (``mlx5_0 port 1 ==> ib0 (Up)``) and its ``-v`` form.

    The plain form shows the netdev's link (``Up``/``Down``), not the RDMA port state;
    ``-v`` adds ``(ACTIVE)`` and the PCI address. What the netdev tells:

    * its name: ``ib*`` is an IPoIB interface, so the port's link layer is InfiniBand;
      any other name (``eth*``, ``ens*``, ``enp*np*``, ``bond*``) an Ethernet (RoCE) one;
    * ``(Up)``: the netdev has carrier, which an IPoIB interface gets only on an ACTIVE
      port and a RoCE netdev only with its link up: the port is ACTIVE;
    * ``(Down)`` of an Ethernet netdev: no link, the RoCE port is DOWN; of an IPoIB
      interface it says nothing of the port (IPoIB is often left down on GPU fabrics):
      the port's state stays unknown (``ibstat`` or ``ibv_devinfo`` show it).
    """
    info: dict[str, re.Match[str]] = {}
    port_lists: dict[str, list[RdmaPort]] = {}
    for _, line in numbered_lines(lines):
        match = _IBDEV2NETDEV.match(line) if "==>" in line else None
        if not match:
            continue
        dev = match.group("dev")
        netdev = match.group("netdev")
        state_text = match.group("state") or ""
        link = "InfiniBand" if netdev.startswith("ib") else "Ethernet"
        state = PortState(state_text) if state_text in PortState.__members__ else PortState.UNKNOWN
        if state is PortState.UNKNOWN:
            updown = _NETDEV_STATE.search(line[match.end() :])
            if updown and updown.group(1) == "Up":
                state = PortState.ACTIVE
            elif updown and link == "Ethernet":
                state = PortState.DOWN
        info.setdefault(dev, match)
        port_lists.setdefault(dev, []).append(
            RdmaPort(number=int(match.group("port")), state=state, link_layer=link, netdev=netdev)
        )
    if not info:
        raise unrecognised("ibdev2netdev", "no '<dev> port <n> ==> <netdev>' line", source)
    devices = []
    for dev, match in info.items():
        fw = re.search(r"\bfw[ \t]+(\S+)", match.group("desc") or "")
        hca = match.group("hca")
        devices.append(
            RdmaDevice(
                name=dev,
                driver=provider_for(dev, None),
                pci_address=match.group("bdf").lower() if match.group("bdf") else None,
                hca_type=hca.split(" - ")[0].strip() if hca else None,
                board_id=hca.split(" - ")[1].strip() if hca and " - " in hca else None,
                fw_ver=fw.group(1) if fw else None,
                netdevs=tuple(p.netdev for p in port_lists[dev] if p.netdev),
                ports=tuple(port_lists[dev]),
            )
        )
    return tuple(devices), ()
