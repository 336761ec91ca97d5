"""How a log's connections are told: transport labels, NIC names, GPUDirect RDMA.

Helpers of :func:`hpnet.ncclog.report.analyse` over
:class:`~hpnet.ncclog.model.Connection`: the label of a connection (``NET/IB/GDRDMA``),
the names of the NICs a process's connections used, whether they used GPUDirect RDMA
per direction, and how lists of such names are ordered and shortened for a sentence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from hpnet.ncclog.model import Connection, ProcessLog, TransportKind

__all__ = [
    "combine_gdr",
    "gdr_state",
    "natural_sorted",
    "nic_names",
    "range_text",
    "rdma",
    "transport_label",
    "uniq",
]

#: a name's runs of digits (natural_sorted's numbers)
_DIGITS = re.compile(r"(\d+)")


def transport_label(connection: Connection, inter: bool) -> str:
    label = connection.transport.label
    if inter and connection.transport.gdr:
        label += "/GDRDMA"
    return label


def rdma(label: str) -> bool:
    """A network transport that can do GPUDirect RDMA (everything but TCP sockets)."""
    return label.startswith(("NET/", "CollNet")) and not label.startswith("NET/Socket")


def nic_names(process: ProcessLog, connections: Iterable[Connection]) -> list[str]:
    names: list[str] = []
    asked: set[tuple[str, int]] = set()  # a NIC is named by its network and index
    for connection in connections:
        nic = connection.transport.nic
        if connection.transport.kind is not TransportKind.NET or nic is None:
            continue
        if (connection.transport.name, nic) in asked:
            continue
        asked.add((connection.transport.name, nic))
        listed = (
            process.socket_interfaces if connection.transport.name == "Socket" else process.nics
        )
        match = next((n for n in listed if n.index == nic), None)
        if match is None:
            name = f"NIC {nic}"
        else:
            name = f"{match.name}:{match.port}" if match.port else match.name
        if name not in names:
            names.append(name)
    return names


def gdr_state(connections: Sequence[Connection]) -> str | None:
    """GPUDirect RDMA over RDMA network connections, per direction (a NIC may write
    into GPU memory but not read from it: ``GPU Direct RDMA ... read 0``)."""
    net = [
        c
        for c in connections
        if c.transport.kind in (TransportKind.NET, TransportKind.COLLNET)
        and c.transport.name != "Socket"
    ]
    if not net:
        return None
    if all(c.transport.gdr for c in net):
        return "yes"
    if not any(c.transport.gdr for c in net):
        return "no"
    sends = [c.transport.gdr for c in net if c.direction == "send"]
    receives = [c.transport.gdr for c in net if c.direction == "receive"]
    if sends and receives and all(receives) and not any(sends):
        return "receive only"
    if sends and receives and all(sends) and not any(receives):
        return "send only"
    return "partial"


def uniq(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def natural_sorted(names: Iterable[str]) -> tuple[str, ...]:
    """``mlx5_2:1`` before ``mlx5_10:1``; ``NIC 3`` before ``NIC 12``."""
    return tuple(sorted(dict.fromkeys(n for n in names if n), key=_natural_key))


@functools.lru_cache(maxsize=4096)
def _natural_key(name: str) -> tuple[int | str, ...]:
    """A name's digits as numbers (a job's processes name the same NICs again and
    again: each name is split once)."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(name))


def range_text(names: Sequence[str]) -> str:
    """``mlx5_0:1, mlx5_1:1, mlx5_2:1`` -> ``mlx5_0..2:1`` when they run in order."""
    if len(names) < 3:
        return ", ".join(names)
    parts = [re.fullmatch(r"(.*?)(\d+)(:\d+)?", n) for n in names]
    matches = [p for p in parts if p]
    if len(matches) == len(names):
        stems = {(p.group(1), p.group(3)) for p in matches}
        numbers = sorted(int(p.group(2)) for p in matches)
        if len(stems) == 1 and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            stem, port = stems.pop()
            return f"{stem}{numbers[0]}..{numbers[-1]}{port or ''}"
    return ", ".join(names)


def combine_gdr(values: Sequence[str | None]) -> str | None:
    known = {v for v in values if v is not None}
    if not known:
        return None
    return known.pop() if len(known) == 1 else "partial"
