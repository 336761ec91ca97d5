"""Stage one of the log parser: a block of log text -> counted, classified events.

A block is a run of whole lines (bytes). :func:`scan_block` needs nothing from the
blocks before it, so blocks can be scanned in any order, in other processes, and
folded afterwards in order (:class:`hpnet.ncclog.facts.LogFolder`).

Why it is shaped this way: an NCCL log is mostly connection lines
(``Channel 03/0 : 2[2] -> 3[3] via P2P/CUMEM``), one per channel, and the channel
number is the only thing that differs between them; and a long job's processes say the
same lines again for every communicator they create. The scanner erases channel numbers
in one pass over the block and counts its distinct lines in another, each noise message
(proxy connections, topology dumps, plugin probes: :data:`hpnet.ncclog.passes.NOISE`)
blanked as it is counted (both compiled where hpnet was built with a C compiler:
:mod:`hpnet.ncclog.passes`), keeping only the lines
its classifier has not marked dead (:attr:`ScanState.dead`: a line that, read again,
would say nothing: an idempotent message already said, a known process's irrelevant
line, program output said again). Python then looks once at each distinct new line;
a block's program output (lines without ``NCCL``/``nccl``) is tested at once, its
lines alike but for their digits made one. What it says is, event for event, what
reading every line says (tests/unit/test_scan_identity.py holds it to the scanner
that did, tests/scan_reference.py). See ``benchmarks/README.md`` ("hpnet verify") for
what this buys.
"""

from __future__ import annotations

import collections
import re
import sys
from collections.abc import Iterator, Mapping, Sequence

from hpnet.artefacts.words import MARKS, RCCL_BYTES
from hpnet.ncclog.lines import IDEMPOTENT, LOCATED_KINDS, Classifier, Event
from hpnet.ncclog.passes import NOISE_ERASED, count_split, erased
from hpnet.ncclog.programs import BARE_HINT, MIN_PROGRAM_LINES, bare_warn_start, program_output

__all__ = ["MAX_LINE_BYTES", "BlockResult", "scan_block"]

#: a line longer than this is cut (binary data or a runaway progress bar); NCCL's own
#: lines are at most 1 KiB up to 2.28.9 (debug.cc) and a few KiB after
MAX_LINE_BYTES = 1 << 20

#: what the substitutions leave in a line they changed (a line without it is the input's)
_EDITED = re.compile(rb"Channel :|INFO Ring :|NCCL INFO -$")
_LAST_ERROR = re.compile(rb"Last error:[ \t]*\n([^\n]*)")
#: terminal colour and cursor sequences (CSI: ``ESC [ ... final``) and titles (OSC:
#: ``ESC ] ... BEL``) that coloured launchers (Ray, rich, kubectl with a TTY) put around
#: lines: removed before anything is read, and from the lines quoted as evidence
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?")
#: evidence lines are quoted up to this many characters (NCCL's own lines are shorter)
MAX_QUOTE_CHARS = 4096
#: (process, transport) pairs whose first connection line is remembered as quoted
MAX_QUOTED = 100_000
#: input lines a classifier remembers as dead (:attr:`ScanState.dead`) before it
#: starts anew: memory flat in the log's size, speed where lines repeat
MAX_DEAD = 200_000


def normalise(data: bytes) -> bytes:
    r"""Bytes as a terminal would show them: NUL bytes (a torn page, copytruncate's hole),
    colour sequences and the CR of CRLF line ends removed. Newlines are never touched, so
    line numbers stay those of the input.

    >>> normalise(b"\x1b[36mnode1:1:1 [0] NCCL INFO Using network IB\x1b[0m\r\n")
    b'node1:1:1 [0] NCCL INFO Using network IB\n'
    """
    if b"\0" in data:  # NCCL never writes NUL
        data = data.replace(b"\0", b"")
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    if b"\r" in data:  # one byte: memchr, not a two-byte search
        data = data.replace(b"\r\n", b"\n")
    return data


class BlockResult:
    """The events of one block, in the order of their first line, and its counts."""

    __slots__ = (
        "events", "framework", "num_bytes", "num_cut", "num_lines", "num_nccl_lines", "source",
        "start_line",
    )  # fmt: skip

    def __init__(self, source: str, start_line: int) -> None:
        self.source = source
        self.start_line = start_line
        self.events: list[Event] = []
        self.num_lines = 0
        self.num_nccl_lines = 0
        self.num_bytes = 0
        #: lines longer than MAX_LINE_BYTES, read up to that length
        self.num_cut = 0
        #: a line other than an NCCL INFO line holds a word an artefact reader needs
        #: (hpnet.artefacts.words): the artefact readers read this input too. Said by
        #: the first such block of a source only (the classifier remembers it, the
        #: folder keeps it per source)
        self.framework = False


def scan_block(
    data: bytes, *, source: str, start_line: int, classifier: Classifier | None = None
) -> BlockResult:
    """Classify every distinct NCCL line of ``data`` (whole lines, ``\\n``-separated).

    ``start_line`` is the 1-based number of the block's first line in ``source``;
    events that are kept as evidence carry their own line number. A ``classifier``
    passed along from the block before keeps its caches (and its memory of what each
    process already said, and of the lines that say nothing new) for this one.

    >>> block = b"vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\\n" * 2
    >>> result = scan_block(block, source="x.log", start_line=1)
    >>> [(e.kind, e.count) for e in result.events]
    [('connection', 2)]
    """
    result = BlockResult(source, start_line)
    result.num_bytes = len(data)
    if not data:
        return result
    data = normalise(data)
    classify = classifier if classifier is not None else Classifier()
    state = classify.scan
    state.start(source)
    text, blanked = erased(data)
    dead = state.dead
    # the lines not known to be dead, noise blanked, counted; a program's own lines apart
    counts: collections.Counter[bytes] = collections.Counter()
    words = () if state.framework_seen else RCCL_BYTES
    blank = not blanked
    split = count_split(
        text, counts, dead, MIN_PROGRAM_LINES, MAX_LINE_BYTES, blank=blank, words=words
    )
    result.num_lines = split.lines
    programs = program_output(split, classify)
    if programs.recount:  # one may be an NCCL line: all are counted, and read
        counts.clear()
        split = count_split(
            text, counts, dead, sys.maxsize, MAX_LINE_BYTES, blank=blank, words=words
        )
    reader = _Reader(classify, result, split.firsts, _InputLines(data, start_line))
    reader.read_all(counts)
    # each marker of the lines as counted is one NCCL line, but those counted as more
    result.num_nccl_lines = split.markers - reader.extra
    if len(dead) > MAX_DEAD:
        dead.clear()
    if split.last_error:
        _last_errors(NOISE_ERASED.sub(b"NCCL INFO -", text), source, start_line, result.events)
    # a word of a dead line was seen when it was new; count_split looked in the others
    # and in what blanking took away
    framework = reader.framework or programs.framework or split.worded
    # noise blanked before the count: what blanking took away was not looked at there
    framework = framework or (blanked and any(word in data for word in words))
    state.framework_seen = state.framework_seen or framework
    result.framework = framework
    return result


class _Reader:
    """Reads the distinct lines of a block into its events, in the order of their first
    line; a line that would say nothing if read again is remembered as dead."""

    __slots__ = (
        "classify", "events", "extra", "firsts", "framework", "marks", "originals", "result",
    )  # fmt: skip

    def __init__(
        self,
        classify: Classifier,
        result: BlockResult,
        firsts: Sequence[int],
        originals: _InputLines,
    ) -> None:
        self.classify = classify
        self.result = result
        self.events = result.events
        self.firsts = firsts
        self.originals = originals
        #: framework words are looked for until a block of this source had one
        self.marks = not classify.scan.framework_seen
        self.framework = False
        #: markers that are not one NCCL line each (two lines glued together, a line cut
        #: at MAX_LINE_BYTES): a line with one ``NCCL `` that is not cut holds a marker
        #: exactly when it is an NCCL line
        self.extra = 0

    def read_all(self, counts: Mapping[bytes, int]) -> None:
        """Read each distinct line (noise blanked: the input's line, or the key of the
        input's lines that read alike) in the order of its first occurrence. One loop,
        its names bound once: a block of a large job has hundreds of thousands of new
        lines."""
        classify = self.classify
        source = self.result.source
        dead = classify.scan.dead
        events = self.events
        quoted = classify.quoted
        start_line = self.result.start_line
        marks = self.marks
        for (whole, count), first in zip(counts.items(), self.firsts, strict=True):
            lines = whole.count(b"NCCL ")  # more than 1: NCCL lines glued together
            long = len(whole) > MAX_LINE_BYTES
            may_die = lines <= 1 and not long
            if not may_die:
                cut = whole[:MAX_LINE_BYTES]
                self.extra += count * (
                    whole.count(b"NCCL INFO ")
                    + whole.count(b"NCCL WARN ")
                    - (b"NCCL INFO " in cut or b"NCCL WARN " in cut)
                )
            line = whole
            if long:
                line = line[:MAX_LINE_BYTES]
                lines = line.count(b"NCCL ")
                self.result.num_cut += count
            if marks and b"NCCL INFO " not in whole and MARKS.search(whole):
                self.framework = True
                marks = False
            if (
                b"NCCL" not in line
                and b"nccl" not in line
                and b"<warn>" not in line
                and b" Pid " not in line  # nccl-tests' rank table
                and not BARE_HINT.search(line)  # a message pasted without its prefix
                and not bare_warn_start(line)  # a WARN pasted without its prefix
            ):
                if count > 1 and may_die:  # program output that repeats: dead
                    dead.add(whole)
                continue
            # two NCCL lines glued together (no newline between): each is read
            glued = lines > 1
            silent = may_die and not glued
            for part in classify.split(line) if glued else (line,):
                event = classify(part, source)
                if event is None:
                    continue
                kind = event.kind
                if (
                    silent
                    and kind != "seen"
                    and not (kind in IDEMPOTENT and classify.repeats_silently(part))
                ):
                    silent = False
                event.count = count
                if _located(event, quoted):
                    number = start_line + first
                    event.line_number = number
                    event.raw = self.originals.quote(whole, number, part)
                events.append(event)
            if silent and not classify.pending:
                # read again, the line would say nothing (a repeat of an idempotent
                # message, a known process's irrelevant line): not read again while so
                dead.add(whole)


def _located(event: Event, quoted: set[tuple[str, object]]) -> bool:
    """Is the event's line quoted as evidence (and so located)? Connections: the first
    line of each process and transport (remembered in ``quoted``); a communicator's Init
    START: the first of each process (its GPU's busId)."""
    kind = event.kind
    if kind in LOCATED_KINDS or (kind == "comm" and event.data[0] == "Abort"):
        return True
    if event.process is None:
        return False
    if kind == "comm" and event.data[:2] == ("Init", "START"):
        pair: tuple[str, object] = (event.process[0], "Init START")  # where its GPU is said
    elif kind == "connection":
        pair = (event.process[0], event.data[5])
    else:
        return False
    if pair in quoted:
        return False
    if len(quoted) >= MAX_QUOTED:
        quoted.clear()  # quoted again: the folder keeps the first
    quoted.add(pair)
    return True


def _last_errors(text: bytes, source: str, start_line: int, events: list[Event]) -> None:
    """PyTorch prints NCCL's last error on the line after "Last error:", without any
    prefix ("Bootstrap : no socket interface found"): a signal, which replaces the
    same line read as a WARN pasted alone."""
    quoted_errors = set()
    for found in _LAST_ERROR.finditer(text):
        message = found.group(1).decode("utf-8", "replace").strip()
        if message:
            event = Event("signal", None, (), f"Last error: {message}", source)
            event.line_number = start_line + text.count(b"\n", 0, found.start(1))
            event.raw = message
            events.append(event)
            quoted_errors.add(event.line_number)
    # the same line read as a WARN pasted alone: the signal says it
    events[:] = [
        e
        for e in events
        if not (e.kind == "warn" and e.data == (None,) and e.line_number in quoted_errors)
    ]


class _InputLines:
    """The input's own lines of a block, for quoting: the block's text may differ from
    them (noise blanked, channel numbers erased); split only when a quote needs it."""

    __slots__ = ("_data", "_lines", "_start_line")

    def __init__(self, data: bytes, start_line: int) -> None:
        self._data = data
        self._start_line = start_line
        self._lines: list[bytes] | None = None

    def quote(self, whole: bytes, number: int, part: bytes) -> str:
        """How the event read from ``part`` of line ``number`` (``whole``) is quoted."""
        if not _EDITED.search(whole):
            return _quote(whole, part)  # the line as the input has it
        if self._lines is None:  # channel numbers erased: the input's own line
            self._lines = self._data.split(b"\n")
        return _quote(self._lines[number - self._start_line], part)


def _quote(raw: bytes, part: bytes) -> str:
    """The input line a located event is quoted by; of a line longer than
    :data:`MAX_QUOTE_CHARS`, the stretch that holds the event's own line."""
    text = raw.decode("utf-8", "replace")
    if len(text) <= MAX_QUOTE_CHARS:
        return text.rstrip()
    piece = part.decode("utf-8", "replace")
    at = text.find(piece[:200])
    at = max(at, 0)
    return text[at : at + MAX_QUOTE_CHARS].rstrip()


def iter_blocks(data: bytes, block_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Split ``data`` into blocks of whole lines of about ``block_bytes``, with the
    1-based number of each block's first line."""
    start = 0
    line = 1
    size = len(data)
    while start < size:
        end = min(size, start + block_bytes)
        if end < size:
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else end
        block = data[start:end]
        yield block, line
        line += block.count(b"\n")
        start = end
