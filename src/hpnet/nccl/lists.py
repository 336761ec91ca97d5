"""NCCL's interface and HCA list syntax, parsed and matched the way NCCL does.

``NCCL_SOCKET_IFNAME`` and ``NCCL_IB_HCA`` share one grammar (NVIDIA/nccl v2.30.7-1
``src/misc/utils.cc``, ``parseStringList`` / ``matchIfList``, used by
``ncclOsFindInterfaces`` in ``src/os/linux.cc`` and ``ncclIbInitDevices`` in
``src/transport/net_ib/init.cc``):

* a leading ``^`` inverts the list (select everything that does *not* match), then a
  ``=`` makes names match exactly; otherwise each name is a *prefix*: ``mlx5_1`` also
  selects ``mlx5_10``; ``eth`` selects ``eth0.100``;
* the rest is split on ``,`` (``strtok_r``: empty pieces vanish); an entry is
  ``name[:port[:rail[:plane]]]`` read with ``atoi`` (``x`` is 0, ``1x`` is 1, empty or
  absent is -1 = any). Rail and plane exist since 2.30.7; text after the plane is
  ignored. An entry whose name is empty (``:1``) is skipped. Nothing is trimmed: a
  space is part of the name;
* only the first 16 interface entries (``MAX_IFS``) or 32 HCA entries (``MAX_IB_DEVS``)
  are read;
* ``matchIfList`` returns *true* for a list with no entries, and the caller XORs the
  result with ``^``: an empty list selects everything, ``^`` or ``^=`` with nothing
  after it selects **nothing**.

All functions here are pure.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

__all__ = ["MAX_HCA_ENTRIES", "MAX_IF_ENTRIES", "ListEntry", "NcclList", "exact_list", "parse_list"]

#: ``MAX_IFS`` (src/include/socket.h) and ``MAX_IB_DEVS`` (src/transport/net_ib/common.h)
MAX_IF_ENTRIES = 16
MAX_HCA_ENTRIES = 32
_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ListEntry:
    name: str
    port: int | None = None  # None: any port (NCCL's -1)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NcclList:
    """A parsed ``NCCL_SOCKET_IFNAME`` / ``NCCL_IB_HCA`` value, as NCCL reads it.

    ``problems`` says where NCCL reads the text differently from what it seems to
    say (a port that is not a number, a space inside a name, an entry it skips).
    """

    entries: tuple[ListEntry, ...]
    exclude: bool = False  # leading ^
    exact: bool = False  # leading = (after ^)
    problems: tuple[str, ...] = ()

    @property
    def selects_all(self) -> bool:
        """No entries and no ``^``: every name matches (as if the variable were unset)."""
        return not self.entries and not self.exclude

    @property
    def selects_none(self) -> bool:
        """``^`` with no entries: ``matchIfList`` is true, inverted to false for all."""
        return not self.entries and self.exclude

    def matches(self, name: str, port: int | None = None) -> bool:
        """Whether NCCL would select ``name`` (and ``port``) with this value.

        >>> parse_list("mlx5_1").matches("mlx5_10")
        True
        >>> parse_list("=mlx5_1").matches("mlx5_10")
        False
        >>> parse_list("^docker,lo").matches("eth0")
        True
        >>> parse_list("^=").matches("eth0")
        False
        """
        hit = not self.entries or any(
            _match(name, port, entry, self.exact) for entry in self.entries
        )
        return hit != self.exclude

    def select(self, names: Iterable[str]) -> list[str]:
        """The names this value selects, in the given order."""
        return [name for name in names if self.matches(name)]

    def select_ports(self, ports: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
        """The ``(device, port)`` pairs this value selects."""
        return [(dev, port) for dev, port in ports if self.matches(dev, port)]


def _match(name: str, port: int | None, entry: ListEntry, exact: bool) -> bool:
    # matchIf: strncmp over strlen(ref) (a prefix), or strlen(name)+1 (exact)
    name_ok = name == entry.name if exact else name.startswith(entry.name)
    # matchPort: -1 on either side matches
    port_ok = port is None or entry.port is None or port == entry.port
    return name_ok and port_ok


def _atoi(text: str) -> int:
    match = _ATOI.match(text)
    return int(match.group(1)) if match else 0


def parse_list(value: str, *, max_entries: int | None = None) -> NcclList:
    """Parse a list value as ``parseStringList`` does; never raises.

    >>> parsed = parse_list("^=mlx5_0:1,mlx5_1")
    >>> parsed.exclude, parsed.exact, [(e.name, e.port) for e in parsed.entries]
    (True, True, [('mlx5_0', 1), ('mlx5_1', None)])
    >>> parse_list("mlx5_0:x").problems
    ("port 'x' of 'mlx5_0' is not a number: NCCL reads it as 0, which is no port",)
    """
    text = value
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = text.startswith("=")
    if exact:
        text = text[1:]
    entries: list[ListEntry] = []
    problems: list[str] = []
    for raw in (piece for piece in text.split(",") if piece):
        if max_entries is not None and len(entries) == max_entries:
            problems.append(f"NCCL reads only the first {max_entries} entries; it ignores {raw!r}")
            break
        fields = raw.split(":")
        name = fields[0]
        if not name:
            problems.append(f"entry {raw!r} has no name: NCCL skips it")
            continue
        if name != name.strip():
            problems.append(f"{name!r} has white space, which NCCL keeps as part of the name")
        port: int | None = None
        if len(fields) > 1 and fields[1]:
            port_text = fields[1]
            port = _atoi(port_text)
            if not re.fullmatch(r"[0-9]+", port_text):
                problems.append(
                    f"port {port_text!r} of {name!r} is not a number: NCCL reads it as {port}"
                    + (", which is no port" if port < 1 else "")
                )
            if port == -1:
                port = None
        for label, field in zip(("rail", "plane"), fields[2:4], strict=False):
            if field and not re.fullmatch(r"[0-9]+", field):
                problems.append(f"{label} {field!r} of {name!r} is not a number")
        if len(fields) > 4:
            extra = ":" + ":".join(fields[4:])
            problems.append(
                f"{raw!r}: NCCL reads at most name:port:rail:plane and ignores {extra!r}"
            )
        entries.append(ListEntry(name=name, port=port))
    return NcclList(entries=tuple(entries), exclude=exclude, exact=exact, problems=tuple(problems))


def exact_list(items: Sequence[tuple[str, int | None]]) -> str:
    """The exact-match value selecting these devices (and ports): ``=mlx5_0:1,mlx5_1:1``."""
    parts = [f"{name}:{port}" if port is not None else name for name, port in items]
    return "=" + ",".join(parts)
