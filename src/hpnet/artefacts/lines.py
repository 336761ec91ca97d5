"""Physical lines -> logical lines: messages a terminal hard-wrapped are joined again.

Pasted PyTorch errors are often wrapped at the terminal's width (116 or 140
characters: ``... ProcessGroupNCCL'`` / ``s watchdog got stuck ...``). A physical line
continues the one before when that one is at least :data:`WRAP_MIN` characters long
and this one does not start a record of its own (a ``[rank`` / glog / timestamp
prefix, also behind a launcher's own prefix, a stack frame, an NCCL line, the ``what():``
of a C++ exception that ends the process). A poster may
also break a message by hand, indenting its parts under a first line that ends in ``:``
(``[Rank 0] Watchdog caught collective operation timeout:`` / ``  WorkNCCL(...)``):
those continue it too, joined with a space. Evidence always quotes the physical lines.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from hpnet.artefacts.model import Quote

__all__ = ["Logical", "logical_lines"]

#: a line this long may have been wrapped by a terminal (80 columns and up)
WRAP_MIN = 80
#: how many physical lines one message may span
MAX_PARTS = 12
_RECORD = re.compile(
    r"^\s*(?:\[|\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d|[IWEF]\d{4} |frame #\d|Exception raised|Traceback"
    r"|\s*File \"|[\w.-]+:\d+:\d+ \[|\((?:[\w.-]+,? )?(?:rank=\d+, )?pid=\d+|#|NCCL |RCCL "
    r"|Last error:"
    r"|\S+Error\b|\S+Exception\b|what\(\):|terminate called|\s*$"
    # torch's rank prefix behind a launcher's own (``node1 [stderr] [rank13]:[E909 ...``)
    r"|.{0,160}?\[(?:rank|default)\d+\]:(?:\[[IWEF]\d{3,4} | ))"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Logical:
    """One message: its text joined, and the physical lines it came from."""

    text: str
    parts: tuple[Quote, ...]


def logical_lines(source: str, lines: Iterable[tuple[int, str]]) -> Iterator[Logical]:
    """Join wrapped lines; ``lines`` are ``(line number, text)`` without newlines.

    >>> [l.text for l in logical_lines("f", [(1, "a" * 80), (2, "b"), (3, "[x")])]
    ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab', '[x']
    >>> [l.text for l in logical_lines("f", [(1, "[Rank 0] timeout:"), (2, "  Work(x)"),
    ...                                      (3, "  ran."), (4, "next")])]
    ['[Rank 0] timeout: Work(x) ran.', 'next']
    """
    text = ""
    parts: list[Quote] = []
    for number, line in lines:
        if not line:  # a blank line ends a message and is none
            if parts:
                yield Logical(text=text, parts=tuple(parts))
            text, parts = "", []
            continue
        quote = Quote(source=source, line=number, text=line)
        if parts and len(parts) < MAX_PARTS and not _RECORD.match(line):
            if len(parts[-1].text) >= WRAP_MIN:  # a terminal wrapped it
                text += line
                parts.append(quote)
                continue
            if line[:1] in " \t" and parts[0].text.rstrip().endswith(":"):
                text += " " + line.strip()  # indented under a line ending in ':', by hand
                parts.append(quote)
                continue
        if parts:
            yield Logical(text=text, parts=tuple(parts))
        text, parts = line, [quote]
    if parts:
        yield Logical(text=text, parts=tuple(parts))
