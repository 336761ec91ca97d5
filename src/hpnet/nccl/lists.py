"""NCCL's interface and HCA list syntax, parsed and matched the way NCCL does.

``NCCL_SOCKET_IFNAME`` and ``NCCL_IB_HCA`` share one grammar (NVIDIA/nccl
``src/misc/utils.cc``, ``parseStringList`` / ``matchIfList``, used by
``src/os/linux.cc`` and ``src/transport/net_ib/init.cc``):

* a comma-separated list of entries; an entry is ``name[:port[:rail[:plane]]]``
  (HCA lists use the port; empty entries are skipped);
* a leading ``^`` inverts the list (select everything that does *not* match);
* a ``=`` (after the ``^`` if both) makes names match exactly, otherwise each name
  is a *prefix*: ``mlx5_1`` also selects ``mlx5_10``; ``eth`` selects ``eth0.100``;
* an entry without a port matches every port; a list that parses to no entries
  selects everything.

All functions here are pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

__all__ = ["ListEntry", "NcclList", "exact_list", "parse_list"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ListEntry:
    name: str
    port: int | None = None  # None: any port


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NcclList:
    """A parsed ``NCCL_SOCKET_IFNAME`` / ``NCCL_IB_HCA`` value."""

    entries: tuple[ListEntry, ...]
    exclude: bool = False  # leading ^
    exact: bool = False  # leading = (after ^)

    def matches(self, name: str, port: int | None = None) -> bool:
        """Whether NCCL would select ``name`` (and ``port``) with this value.

        >>> parse_list("mlx5_1").matches("mlx5_10")
        True
        >>> parse_list("=mlx5_1").matches("mlx5_10")
        False
        >>> parse_list("^docker,lo").matches("eth0")
        True
        """
        if not self.entries:
            return True
        hit = any(_match(name, port, entry, self.exact) for entry in self.entries)
        return hit != self.exclude

    def select(self, names: Iterable[str]) -> list[str]:
        """The names this value selects, in the given order."""
        return [name for name in names if self.matches(name)]

    def select_ports(self, ports: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
        """The ``(device, port)`` pairs this value selects."""
        return [(dev, port) for dev, port in ports if self.matches(dev, port)]


def _match(name: str, port: int | None, entry: ListEntry, exact: bool) -> bool:
    name_ok = name == entry.name if exact else name.startswith(entry.name)
    port_ok = port is None or entry.port is None or port == entry.port
    return name_ok and port_ok


def parse_list(value: str) -> NcclList:
    """Parse a list value; raises ValueError for a port that is not a number.

    >>> parsed = parse_list("^=mlx5_0:1,mlx5_1")
    >>> parsed.exclude, parsed.exact, [(e.name, e.port) for e in parsed.entries]
    (True, True, [('mlx5_0', 1), ('mlx5_1', None)])
    """
    text = value
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = text.startswith("=")
    if exact:
        text = text[1:]
    entries = []
    for raw in text.split(","):
        name, _, rest = raw.partition(":")
        if not name:
            continue
        port_text = rest.partition(":")[0]
        if port_text and not port_text.lstrip("-").isdigit():
            raise ValueError(f"port {port_text!r} of {name!r} is not a number")
        entries.append(ListEntry(name=name, port=int(port_text) if port_text else None))
    return NcclList(entries=tuple(entries), exclude=exclude, exact=exact)


def exact_list(items: Sequence[tuple[str, int | None]]) -> str:
    """The exact-match value selecting these devices (and ports): ``=mlx5_0:1,mlx5_1:1``."""
    parts = [f"{name}:{port}" if port is not None else name for name, port in items]
    return "=" + ",".join(parts)
