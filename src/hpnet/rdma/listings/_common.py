"""Pieces shared by the listing parsers: drafts, number and GUID spellings, errors."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from hpnet.errors import ParseError
from hpnet.rdma.model import Gid, RdmaDevice
from hpnet.result import Problem

__all__ = [
    "FIX",
    "MAX_LINE_CHARS",
    "DeviceDraft",
    "Parsed",
    "PortDraft",
    "key_value",
    "numbered_lines",
    "parse_int",
    "sysfs_guid",
    "unrecognised",
]

Parsed = tuple[tuple[RdmaDevice, ...], tuple[Problem, ...]]

FIX = (
    "pass the unedited output of ibv_devinfo [-v|-l], ibstat, ibstatus, show_gids, "
    "ibdev2netdev [-v], rdma link, ibv_devices, or ls [-l] of /dev/infiniband or "
    "/sys/class/infiniband (several in one file: each after its command line)"
)
#: No verbs tool prints lines this long; longer ones are not tool output and are skipped.
MAX_LINE_CHARS = 4096

# "key:<spaces or tabs>value"; the value is stripped in code, not by the pattern, so
# long runs of white space cannot make the match backtrack.
_KEY_VALUE = re.compile(r"^[ \t]*([A-Za-z_][\w ]*?):(.*)$")


@dataclasses.dataclass
class PortDraft:
    number: int
    line_number: int
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    gids: list[Gid] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class DeviceDraft:
    name: str
    line_number: int
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    ports: list[PortDraft] = dataclasses.field(default_factory=list)


def numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(1-based number, line)`` without line ends, skipping absurdly long lines."""
    for number, raw in enumerate(lines, start=1):
        if len(raw) <= MAX_LINE_CHARS:
            yield number, raw.rstrip("\r\n")


def key_value(line: str) -> tuple[str, str] | None:
    """``"\\tfw_ver:\\t\\t20.31.1014"`` -> ``("fw_ver", "20.31.1014")``."""
    match = _KEY_VALUE.match(line)
    if not match:
        return None
    return match.group(1).strip(), match.group(2).strip()


def parse_int(text: str | None) -> int | None:
    """Decimal or ``0x`` hex; None for anything else."""
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None


def sysfs_guid(text: str | None) -> str | None:
    """ibstat's ``0x0c42a10300f61234`` or ibv_devices' bare hex -> ``0c42:a103:00f6:1234``."""
    if not text:
        return None
    digits = text.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{16}", digits):
        return text
    return ":".join(digits[i : i + 4] for i in range(0, 16, 4))


def unrecognised(tool: str, what: str, source: str, line_number: int = 0) -> ParseError:
    return ParseError(
        f"{what}: this is not {tool} output",
        source=source,
        line_number=line_number,
        fix=FIX,
        code="listing-unrecognised",
    )
