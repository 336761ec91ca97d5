"""A program's own output in an NCCL log: can a line that is not NCCL's be an NCCL
message or WARN pasted without its prefix, asked of one line or of a block's lines at
once (:func:`program_output`: in a training log most lines besides NCCL's are the
program's, and each is new: a step, a loss)."""

from __future__ import annotations

import collections
import re

from hpnet.artefacts.words import MARKS
from hpnet.ncclog.formats import BARE_PREFIX_CHARS, load_table
from hpnet.ncclog.lines import BARE_TAGS_PATTERN, Classifier

__all__ = [
    "BARE_HINT", "ProgramOutput", "any_bare_warn_start", "bare_warn_start", "program_output",
]  # fmt: skip

#: words of the messages an NCCL line can hold without ``NCCL INFO`` / ``NCCL WARN`` (a
#: paste of the messages alone): a cheap test before the classifier's exact one
BARE_HINT = re.compile(
    rb" via |NET/|Using network|Bootstrap|NCCL_|GPU Direct|Init COMPLETE|comm 0x| -> \d"
    rb"|coll channels|NVLS multicast|cudaDriverVersion|Call to ibv_|Connected all rings"
    rb"|NET plugin| Network "
)
_BARE_TAGS_BYTES = re.compile(BARE_TAGS_PATTERN.encode())
#: the start of each line's message after its tags, in a text of many lines: the same
#: tags and the same spaces (none that crosses a newline), then the first characters
_BARE_RESTS = re.compile(
    rb"(?m)^(?:"
    + BARE_TAGS_PATTERN[4:-5].replace(r"\s*(?:", r"[^\S\n]*(?:", 1).encode()
    + rb")*[^\S\n]*([^\n]{0,%d})" % BARE_PREFIX_CHARS
)
#: program lines below this many in a block are read one by one
_MIN_PROGRAM_LINES = 64
_DIGITS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def bare_warn_start(line: bytes) -> bool:
    """Can ``line`` be a WARN pasted without its prefix (a cheap test for the scanner:
    the start of its message is the start of a WARN format)?"""
    tags = _BARE_TAGS_BYTES.match(line)
    rest = line[tags.end() :] if tags else line
    return rest.lstrip()[:BARE_PREFIX_CHARS] in load_table().bare_starts


def any_bare_warn_start(text: bytes, *, digits_zero: bool = False) -> bool:
    """Does any line of ``text`` pass :func:`bare_warn_start` (one pass in C)? With
    ``digits_zero``, ``text``'s digits are all 0: may any line with its digits pass?

    >>> any_bare_warn_start(b"step 1 loss 2.3\\n[rank1]: Call to ibv_reg_mr failed")
    True
    >>> any_bare_warn_start(b"step 1 loss 2.3\\n[rank1]: step 2")
    False
    """
    table = load_table()
    starts = table.bare_starts_digits_zero if digits_zero else table.bare_starts
    return not starts.isdisjoint(_BARE_RESTS.findall(text))


class ProgramOutput:
    """The counted lines that are a program's own output, when none of them can be an
    NCCL line (the scanner's first test of a line, made once over all of them)."""

    __slots__ = ("framework", "lines")

    def __init__(self) -> None:
        #: the program lines, none of which is read (empty when some must be)
        self.lines: frozenset[bytes] = frozenset()
        #: one of them holds a framework word (hpnet.artefacts.words)
        self.framework = False


def program_output(
    counts: collections.Counter[bytes], classify: Classifier, max_line_bytes: int
) -> ProgramOutput:
    """Program output (a line without ``NCCL``, ``nccl``, ``<warn>`` or `` Pid ``) is
    most of what a training log prints besides NCCL, and each such line is new (a step,
    a loss). Whether any of them reads as a pasted NCCL message or WARN is asked of all
    of them at once, in C; if one may, each is read as before."""
    programs = ProgramOutput()
    lines = [
        line
        for line in counts
        if b"NCCL" not in line
        and b"nccl" not in line
        and b"<warn>" not in line
        and b" Pid " not in line
        and len(line) <= max_line_bytes
    ]
    if len(lines) < _MIN_PROGRAM_LINES:
        return programs
    # lines that differ only in their digits (steps, losses, times) are one shape; no
    # test below tells digits apart (a start of a WARN with digits is matched with its
    # digits made 0 too: the test may only say "maybe")
    shapes = b"\n".join(set(b"\n".join(lines).translate(_DIGITS_ZERO).split(b"\n")))
    if BARE_HINT.search(shapes) or any_bare_warn_start(shapes, digits_zero=True):
        return programs
    programs.lines = frozenset(lines)
    programs.framework = not classify.scan.framework_seen and bool(MARKS.search(shapes))
    # a program line said again is dead: nothing in it is read
    classify.scan.dead.update(line for line in lines if counts[line] > 1)
    return programs
