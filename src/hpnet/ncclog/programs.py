"""A program's own output in an NCCL log: can a line that is not NCCL's be an NCCL
message or WARN pasted without its prefix, asked of one line or of a block's lines at
once (:func:`program_output`: in a training log most lines besides NCCL's are the
program's, and each is new: a step, a loss)."""

from __future__ import annotations

import re

from hpnet.artefacts.words import MARKS
from hpnet.ncclog.formats import BARE_PREFIX_CHARS, load_table
from hpnet.ncclog.lines import BARE_TAGS_PATTERN, Classifier
from hpnet.ncclog.passes import Split

__all__ = [
    "BARE_HINT", "MIN_PROGRAM_LINES", "ProgramOutput", "any_bare_warn_start", "bare_warn_start",
    "program_output",
]  # fmt: skip

#: words of the messages an NCCL line can hold without ``NCCL INFO`` / ``NCCL WARN`` (a
#: paste of the messages alone): a cheap test before the classifier's exact one
BARE_HINT = re.compile(
    rb" via |NET/|Using network|Bootstrap|NCCL_|GPU Direct|Init COMPLETE|comm 0x| -> \d"
    rb"|coll channels|NVLS multicast|cudaDriverVersion|Call to ibv_|Connected all rings"
    rb"|NET plugin| Network |Process received signal|Nccl error, "
    rb"|taking the entire process down"
    # a crash as the shell (bash's "Bus error (core dumped)"), faulthandler, UCX or abseil says it
    rb"|Segmentation fault|Bus error|Illegal instruction|Floating point exception"
    rb"|core dumped|Fatal Python error: |] Caught signal | received at time=|Segfault encountered"
    rb"|: line \d+: +\d+ |(?m:^\s*(?:Killed|Aborted)\s*$)"
    # a launcher's report that a process failed (messages.LAUNCHER_FAILED)
    rb"|failed \(exitcode: |ChildFailedError|exited on signal \d|Per user-direction"
    rb"|exited with non-zero status| died, exit code: |srun: error: |exits with return code = "
    # nccl-tests' failed data check (messages.TESTS_WRONG)
    rb"|Out of bounds values"
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
MIN_PROGRAM_LINES = 64


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
    """A block's program output (a program's own lines, put apart by
    :func:`hpnet.ncclog.passes.count_split`) when none of it can be an NCCL line."""

    __slots__ = ("apart", "framework", "recount", "shapes", "total")

    def __init__(self) -> None:
        #: the program lines are apart, and none is read
        self.apart = False
        #: they are apart, but one may be an NCCL line: every line must be counted and read
        self.recount = False
        #: their distinct shapes (digits made 0), joined by newlines
        self.shapes = b""
        #: their occurrences
        self.total = 0
        #: one of them holds a framework word (hpnet.artefacts.words)
        self.framework = False


def program_output(split: Split, classify: Classifier) -> ProgramOutput:
    """Program output (a line without ``NCCL``, ``nccl``, ``<warn>`` or `` Pid ``) is
    most of what a training log prints besides NCCL, and each such line is new (a step,
    a loss). Whether any of them reads as a pasted NCCL message or WARN is asked of their
    shapes at once, in C (lines that differ only in their digits are one shape: no test
    below tells digits apart, and a start of a WARN with digits is matched with its
    digits made 0 too, so the test may only say "maybe"); if one may, each is read as
    before. Fewer than :data:`MIN_PROGRAM_LINES` were counted with the rest and are read."""
    programs = ProgramOutput()
    shapes = split.shapes
    if shapes is None:
        return programs
    if BARE_HINT.search(shapes) or any_bare_warn_start(shapes, digits_zero=True):
        programs.recount = True
        return programs
    programs.apart = True
    programs.shapes = shapes
    programs.total = split.program_total
    programs.framework = not classify.scan.framework_seen and bool(MARKS.search(shapes))
    # a program line said again is dead: nothing in it is read
    classify.scan.dead.update(split.repeats)
    return programs
