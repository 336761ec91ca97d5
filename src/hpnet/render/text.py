"""Text from the outside world (a listing, a log, a sysfs value), made safe to print.

What hpnet shows on a terminal was often read from a file someone else wrote: a device
name in a saved listing, a line of a job's log. Such text can carry characters a
terminal acts on (``ESC [ 2 J`` clears the screen, ``ESC ] 0 ; ... BEL`` sets the
title, a carriage return overwrites the line, C1 controls such as ``\\x9b`` start a
sequence on their own) or that reorder what is shown (bidi overrides). They are shown
escaped, as ``\\x1b`` or ``\\u202e``: visible and inert.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import TypeVar

__all__ = ["escape_controls", "escaped", "size_text"]

#: C0 controls (tab and newline too: a value is one cell of one line), DEL, C1 controls,
#: the line and paragraph separators, and the bidi embeddings, overrides and isolates
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
T = TypeVar("T")


def escape_controls(text: str) -> str:
    """``text`` with every control character escaped.

    >>> escape_controls("mlx5_0\\x1b[31m\\x9b2J\\u202e")
    'mlx5_0\\\\x1b[31m\\\\x9b2J\\\\u202e'
    """
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )


def escaped(value: T) -> T:
    """``value`` with every string in it escaped: strings, tuples, lists, dicts and
    dataclasses are walked; enum members (fixed words) and other values stay as they
    are.

    >>> escaped({"name": ("a\\x07",)})
    {'name': ('a\\\\x07',)}
    """
    if isinstance(value, enum.Enum):
        return value
    if isinstance(value, str):
        return escape_controls(value)  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(escaped(v) for v in value)  # type: ignore[return-value]
    if isinstance(value, list):
        return [escaped(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: escaped(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    return value


def size_text(size: float) -> str:
    """A message size as nccl-tests' users read it: binary units.

    >>> size_text(8), size_text(512 << 10), size_text(1 << 30), size_text(3 << 19)
    ('8 B', '512 KiB', '1 GiB', '1.5 MiB')
    """
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


#: a quoted line of an input: ``path:line: text`` (never wrapped: it is the input's line)
_QUOTED = re.compile(r"^\S+:\d+: ")
_WORD = re.compile(r"\S*`[^`]*`\S*|\S+")


def wrap_words(text: str, width: int, indent: str) -> list[str]:
    """``text`` as lines of at most ``width`` characters after ``indent``, broken at
    spaces only: a span in backticks (a command to paste) is never broken, nor is a
    quoted input line (``file:line: ...``), which stays one line as the input has it.

    >>> wrap_words("run `hpnet doctor --sysfs-root x` on it, then return it", 24, "  ")
    ['run', '  `hpnet doctor --sysfs-root x`', '  on it, then return it']
    >>> wrap_words("rank0.log:7: NCCL INFO NET/IB : No device found.", 10, "")
    ['rank0.log:7: NCCL INFO NET/IB : No device found.']
    """
    if len(text) <= width or _QUOTED.match(text):
        return [text]
    lines: list[str] = []
    current = ""
    for word in _WORD.findall(text):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return [lines[0], *(indent + line for line in lines[1:])]
