"""The scanner's passes over every byte of a block, before Python reads a line.

Two passes, each in C when the compiled module (``_fastscan.c`` and its files, built by
``hatch_build.py`` where a C compiler is) is there, else in Python's own C
(``re.sub``, ``bytes.split``, ``Counter``): erasing channel numbers and counting the
distinct lines (noise blanked as they are counted, a program's own lines put apart:
:func:`count_split`). Both forms give the same bytes and counts
(tests/unit/test_fastscan.py); ``HPNET_PURE_PYTHON=1`` runs the Python. The module also
reads the two commonest new lines of a large job, communicator and connection lines
(:data:`read_comm`, :data:`read_connection`), as the Python readers do, and holds the
scanner's dead lines where the counting asks them without making bytes objects
(:func:`dead_lines`). What the compiled forms buy: benchmarks/README.md, issue 28 steps
5, 6, 8 and 9.
"""

from __future__ import annotations

import collections
import importlib
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import NamedTuple, Protocol

__all__ = [
    "COMPILED", "NOISE", "NOISE_ERASED", "DeadLines", "Split", "count_lines", "count_split",
    "dead_lines", "erased", "read_comm", "read_connection",
]  # fmt: skip

#: ``Channel 03/0 :`` and ``Channel 03 :``. The number is dropped so that the lines
#: of one connection on every channel become one line. The ring-order lines
#: (``Channel 00/24 :    0   1   2``) lose their channel count, which nothing reads.
_CHANNEL_NUMBER = re.compile(rb"Channel \d+(?:/\d+)? :")
_CHANNEL_SLASH = re.compile(rb"Channel \d+/\d+ :")
_CHANNEL_BARE = re.compile(rb"Channel \d+ :")
_RING_NUMBER = re.compile(rb"INFO Ring \d+ :")
#: INFO messages that say nothing about transports, NICs, versions or failures, but
#: that NCCL prints for every communicator and connection (topology dumps, proxy
#: threads, tuning tables, plugin probes): blanked in C so that Python never looks at
#: them (with NCCL_DEBUG_SUBSYS including GRAPH they are most of a log's lines). A
#: process whose lines are all noise still appears (one "seen" event per prefix). A GPU's
#: NVLink in the topology dump (``+ NVL[370.8] - NVS/0-0``) is read, not noise, and so
#: is a PCIe link NCCL rates below 3 GB/s (``+ PCI[0.2] - PCI/0-65000``: x1 at 2.5 GT/s).
NOISE = re.compile(
    rb"NCCL INFO (?:Connected to proxy|New proxy|Topology detection"
    rb"|(?! *\+ (?:NVL\[|PCI\[[0-2]\.\d+\]))[ +=]"
    rb"|\[Proxy|ENV/Plugin"
    rb"|RAS |MNNVL|TOPO/|ncclTopo|CPU/|GPU/|NET/\d|Pattern |Tree |Trees |P2P Chunksize"
    rb"|PROFILER/|TUNER/|Check P2P|ncclP2p|threadThresholds|CC Off|Init timings|Comm config"
    rb"|Could not get speed|Setting affinity|Allocated|DMA-BUF"
    rb"|Channel \d+/\d+ :(?: +\d+)+\r?$)[^\n]*",
    re.MULTILINE,
)
#: :data:`NOISE` for a line whose channel numbers are erased (only the ring-order
#: lines with "/" are in a block so erased: :func:`erased`)
NOISE_ERASED = re.compile(NOISE.pattern.replace(rb"Channel \d+/\d+ :", rb"Channel :"), re.MULTILINE)


def _compiled() -> ModuleType | None:
    if os.environ.get("HPNET_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module("hpnet.ncclog._fastscan")
    except ImportError:  # not built: no C compiler where hpnet was installed
        return None


_FAST = _compiled()
#: whether the passes run compiled
COMPILED = _FAST is not None


class DeadLines(Protocol):
    """What the scanner asks of its dead lines (a set of bytes, or the compiled
    ``LineSet``)."""

    def __contains__(self, line: object, /) -> bool: ...
    def __len__(self) -> int: ...
    def add(self, line: bytes, /) -> None: ...
    def update(self, lines: Iterable[bytes], /) -> None: ...
    def clear(self) -> None: ...


def dead_lines() -> DeadLines:
    """An empty set of the scanner's dead lines: the compiled ``LineSet``, which
    ``count_split`` asks from where each line lies (hashed as it counts, no bytes object
    made for a dead line), where the module is there; else a set."""
    if _FAST is not None:
        made: DeadLines = _FAST.LineSet()
        return made
    return set()


def _python_readers(message: bytes) -> None:
    """Without the compiled module, every message is read by the Python readers."""
    return None


#: ``read_comm(message)``: what :func:`hpnet.ncclog.messages.read_message` reads from a
#: communicator line (``ncclCommInitRank comm 0x55d0 rank 3 nranks 8 ... - Init START``),
#: as its data ``(what, state, fields)``, where the message is plain words and the
#: compiled module is there; None where the Python readers read it. Each communicator's
#: lines are new (their addresses), and most of what a long job's log says anew
#: (tests/unit/test_fastscan.py holds the two readings to the same data)
read_comm: Callable[[bytes], tuple[str, str, dict[str, str]] | None] = (
    _FAST.read_comm if _FAST is not None else _python_readers
)
#: ``read_connection(message)``: what :func:`hpnet.ncclog.messages.read_message` reads
#: from a connection line (``Channel : 0[0] -> 1[1] via P2P/CUMEM``), as its data
#: ``(source, its device, destination, its device, direction, transport)``, where the
#: message is of exactly that form with single spaces and the module is there; None
#: where the Python readers read it. A large job's ranks make most connection lines new
#: (tests/unit/test_fastscan.py holds the two readings to the same data)
read_connection: Callable[[bytes], tuple[int, str, int, str, str | None, str] | None] = (
    _FAST.read_connection if _FAST is not None else _python_readers
)


def erased(data: bytes) -> tuple[bytes, bool]:
    """The block with channel numbers erased: lines of one connection on every channel
    become one line; and whether its noise is blanked already. A ring-order line without
    "/" (``Channel 00 :   0   1``, older releases) is not noise while its number stands
    (:data:`NOISE`): a block that has one is blanked before it is erased, as the lines
    are read, and must not be blanked again (erased, that line reads as noise).

    >>> erased(b"h:1:1 [0] NCCL INFO Channel 03/0 : 0[0] -> 1[1] via P2P/CUMEM")
    (b'h:1:1 [0] NCCL INFO Channel : 0[0] -> 1[1] via P2P/CUMEM', False)
    """
    text = _FAST.erase_channels(data) if _FAST is not None else erased_py(data)
    blanked = text is None
    if text is None:  # a ring-order line without "/"
        text = _CHANNEL_NUMBER.sub(b"Channel :", NOISE.sub(b"NCCL INFO -", data))
    # NCCL's graph search prints its rings, and NCCL 2.4-2.6 name channels "Ring"
    text = _FAST.erase_rings(text) if _FAST is not None else erased_rings_py(text)
    return text, blanked


def erased_rings_py(data: bytes) -> bytes:
    """What the compiled ``erase_rings`` does: every ``INFO Ring <n> :`` made
    ``INFO Ring :``."""
    if b"INFO Ring " not in data:
        return data
    return _RING_NUMBER.sub(b"INFO Ring :", data)


def erased_py(data: bytes) -> bytes | None:
    """What the compiled ``erase_channels`` does: every ``Channel <n>/<m> :`` made
    ``Channel :``, or None when ``data`` holds a ``Channel <n> :``."""
    if _CHANNEL_BARE.search(data):
        return None
    return _CHANNEL_SLASH.sub(b"Channel :", data)


def count_lines(text: bytes, counts: collections.Counter[bytes], dead: DeadLines) -> int:
    """Put each line of ``text`` not in ``dead`` in ``counts`` (empty) with how often it
    occurs, in the order of its first occurrence; the number of lines (a last empty piece
    after the final newline is not a line).

    >>> counts = collections.Counter()
    >>> count_lines(b"a\\nb\\na\\nc\\n", counts, {b"b"}), counts
    (4, Counter({b'a': 2, b'c': 1}))
    """
    if _FAST is not None:
        # no program lines apart: there are never sys.maxsize of them
        return int(_FAST.count_split(text, counts, dead if dead else None, sys.maxsize, 0)[0])
    return count_lines_py(text, counts, dead)


def count_lines_py(text: bytes, counts: collections.Counter[bytes], dead: DeadLines) -> int:
    """What the compiled ``count_lines`` does, in Python's C: a split, counted."""
    lines = text.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    counts.update(itertools.filterfalse(dead.__contains__, lines) if dead else lines)
    return len(lines)


DIGITS_ZERO = bytes.maketrans(b"123456789", b"000000000")


class Split(NamedTuple):
    """A block's lines counted, a program's own lines apart (:func:`count_split`)."""

    #: the lines of the block
    lines: int
    #: occurrences of the program lines put apart (0 when they are counted)
    program_total: int
    #: their distinct shapes (digits 1-9 made 0) joined by newlines, in the order of
    #: their first occurrence; None when the program lines are counted with the rest
    shapes: bytes | None
    #: the program lines put apart that occur more than once in the block
    repeats: list[bytes]
    #: for each line counted, in the counts' order, the index of its first occurrence
    #: among the block's lines (its line number less the block's first)
    firsts: list[int]
    #: the NCCL markers (``NCCL INFO ``, ``NCCL WARN ``) of the block's lines as
    #: counted: those of the text, less those that blanking noise took away (NCCL lines
    #: glued behind a noise message)
    markers: int
    #: a line not dead, or what blanking took away, held one of the ``words`` asked for
    worded: bool
    #: a line as counted holds ``Last error:`` (PyTorch's line before NCCL's error)
    last_error: bool


def count_split(
    text: bytes,
    counts: collections.Counter[bytes],
    dead: DeadLines,
    min_programs: int,
    max_line: int,
    *,
    blank: bool = False,
    words: tuple[bytes, ...] = (),
) -> Split:
    """:func:`count_lines`, but a program's own lines (without ``NCCL``, ``nccl``,
    ``<warn>`` or `` Pid ``, at most ``max_line`` bytes) are put apart when at least
    ``min_programs`` distinct ones are not dead: most of a training log's lines besides
    NCCL's are a program's, each new (a step, a loss), and none is read when none of
    their shapes can be an NCCL line (:func:`hpnet.ncclog.programs.program_output`).
    With ``blank``, each line is counted as ``NOISE_ERASED.sub(b"NCCL INFO -", text)``
    has it, without that copy of the text being made (``dead`` then holds lines as
    counted: blanking leaves them as they are). Whether a line not dead, or what
    blanking takes away, holds one of ``words`` (non-empty, without digits: a program
    line's shape holds them as the line does) is said too, and the NCCL markers and
    ``Last error:`` of the lines as counted: the block's text is searched once, here.

    >>> counts = collections.Counter()
    >>> split = count_split(b"step 1\\nNCCL INFO x\\nstep 2\\nstep 1\\n", counts, set(), 2, 99)
    >>> split.lines, split.program_total, split.shapes, split.repeats, split.firsts
    (4, 3, b'step 0', [b'step 1'], [1])
    >>> split.markers, split.worded, split.last_error
    (1, False, False)
    >>> counts
    Counter({b'NCCL INFO x': 1})
    """
    if _FAST is not None:
        dead_or_none = dead if dead else None
        found = _FAST.count_split(text, counts, dead_or_none, min_programs, max_line, blank, words)
        return Split(*found)
    return count_split_py(text, counts, dead, min_programs, max_line, blank=blank, words=words)


def count_split_py(
    text: bytes,
    counts: collections.Counter[bytes],
    dead: DeadLines,
    min_programs: int,
    max_line: int,
    *,
    blank: bool = False,
    words: tuple[bytes, ...] = (),
) -> Split:
    """What the compiled ``count_split`` does, in Python's C. Noise is blanked in the
    distinct lines once they are counted, not in the whole text: most of a block's lines
    are repeats (a dead line is never a noise line blanked: the dead are blanked)."""
    lines = text.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    found = collections.Counter(itertools.filterfalse(dead.__contains__, lines) if dead else lines)
    if any(not word for word in words):
        raise TypeError("count_split() takes a tuple of non-empty bytes as words")
    # each line's first occurrence: from the end, the last entry of a line is its first
    first = dict(zip(reversed(lines), range(len(lines) - 1, -1, -1), strict=True))
    removed = 0
    worded = False
    firsts: dict[bytes, int] = {}
    if not blank:
        counts.update(found)
        firsts = {line: first[line] for line in found}
    else:
        distinct = list(found)
        joined = b"\n".join(distinct)
        blanked = NOISE_ERASED.sub(b"NCCL INFO -", joined)
        keys = blanked.split(b"\n") if distinct else []
        if _markers(blanked) != _markers(joined):  # NCCL lines glued behind noise
            removed = sum(found[line] * (_markers(line) - _markers(key))
                          for line, key in zip(distinct, keys, strict=True))  # fmt: skip
        if words:  # in what blanking took away ("NCCL INFO " holds none of them)
            noise = b"\n".join(
                line[len(key) - 11 :]
                for line, key in zip(distinct, keys, strict=True)
                if line != key
            )
            worded = any(word in noise for word in words)
        for line, key in zip(distinct, keys, strict=True):
            if key in firsts:
                counts[key] += found[line]
            elif line == key or key not in dead:
                counts[key] = found[line]
                firsts[key] = first[line]
    if words and not worded:  # in a line not dead (words hold no newline)
        fresh = b"\n".join(counts)
        worded = any(word in fresh for word in words)
    markers = _markers(text) - removed
    last_error = b"Last error:" in text and (
        not blank or b"Last error:" in NOISE_ERASED.sub(b"NCCL INFO -", text)
    )
    number = len(lines)
    programs = [
        line
        for line in counts
        if len(line) <= max_line
        and b"NCCL" not in line
        and b"nccl" not in line
        and b"<warn>" not in line
        and b" Pid " not in line
    ]
    if not programs or len(programs) < min_programs:
        firsts_counted = [firsts[line] for line in counts]
        return Split(number, 0, None, [], firsts_counted, markers, worded, last_error)
    total = 0
    repeats = []
    for line in programs:
        count = counts.pop(line)
        total += count
        if count > 1:
            repeats.append(line)
    zeroed = b"\n".join(programs).translate(DIGITS_ZERO).split(b"\n")
    shapes = b"\n".join(dict.fromkeys(zeroed))
    firsts_counted = [firsts[line] for line in counts]
    return Split(number, total, shapes, repeats, firsts_counted, markers, worded, last_error)


def _markers(text: bytes) -> int:
    return text.count(b"NCCL INFO ") + text.count(b"NCCL WARN ")
