"""The log scanner as it was before issue 28 (hpnet/ncclog/scan.py at fc889db), kept as
the definition of what the scanner must say: tests/unit/test_scan_identity.py holds
today's scanner to it, event for event. It reads every line: noise blanked and channel
numbers erased over the whole block, every line counted, each distinct line read.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator

from hpnet.artefacts.words import MARKS, RCCL_BYTES
from hpnet.ncclog.lines import LOCATED_KINDS, Classifier, Event
from hpnet.ncclog.programs import bare_warn_start

__all__ = ["MAX_LINE_BYTES", "BlockResult", "scan_block"]

#: a line longer than this is cut (binary data or a runaway progress bar); NCCL's own
#: lines are at most 1 KiB up to 2.28.9 (debug.cc) and a few KiB after
MAX_LINE_BYTES = 1 << 20

#: ``Channel 03/0 :`` and ``Channel 03 :``. The number is dropped so that the lines
#: of one connection on every channel become one line. The ring-order lines
#: (``Channel 00/24 :    0   1   2``) lose their channel count, which nothing reads.
_CHANNEL_NUMBER = re.compile(rb"Channel \d+(?:/\d+)? :")
_RING_NUMBER = re.compile(rb"INFO Ring \d+ :")
#: what the substitutions above leave in a line they changed
_EDITED = re.compile(rb"Channel :|INFO Ring :|NCCL INFO -$")
#: INFO messages that say nothing about transports, NICs, versions or failures, but
#: that NCCL prints for every communicator and connection (topology dumps, proxy
#: threads, tuning tables, plugin probes): blanked in C so that Python never looks at
#: them (with NCCL_DEBUG_SUBSYS including GRAPH they are most of a log's lines). A
#: process whose lines are all noise still appears (one "seen" event per prefix). A GPU's
#: NVLink in the topology dump (``+ NVL[370.8] - NVS/0-0``) is read, not noise, and so
#: is a PCIe link NCCL rates below 3 GB/s (``+ PCI[0.2] - PCI/0-65000``).
_NOISE = re.compile(
    rb"NCCL INFO (?:Connected to proxy|New proxy|Topology detection"
    rb"|(?! *\+ (?:NVL\[|PCI\[[0-2]\.\d+\]))[ +=]"
    rb"|\[Proxy|ENV/Plugin"
    rb"|RAS |MNNVL|TOPO/|ncclTopo|CPU/|GPU/|NET/\d|Pattern |Tree |Trees |P2P Chunksize"
    rb"|PROFILER/|TUNER/|Check P2P|ncclP2p|threadThresholds|CC Off|Init timings|Comm config"
    rb"|Could not get speed|Setting affinity|Allocated|DMA-BUF"
    rb"|Channel \d+/\d+ :(?: +\d+)+\r?$)[^\n]*",
    re.MULTILINE,
)
_LAST_ERROR = re.compile(rb"Last error:[ \t]*\n([^\n]*)")
#: terminal colour and cursor sequences (CSI: ``ESC [ ... final``) and titles (OSC:
#: ``ESC ] ... BEL``) that coloured launchers (Ray, rich, kubectl with a TTY) put around
#: lines: removed before anything is read, and from the lines quoted as evidence
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?")
#: words of the messages an NCCL line can hold without ``NCCL INFO`` / ``NCCL WARN`` (a
#: paste of the messages alone): a cheap test before the classifier's exact one
_BARE_HINT = re.compile(
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
#: evidence lines are quoted up to this many characters (NCCL's own lines are shorter)
MAX_QUOTE_CHARS = 4096
#: (process, transport) pairs whose first connection line is remembered as quoted
MAX_QUOTED = 100_000


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
        #: (hpnet.artefacts.words): the artefact readers read this input too
        self.framework = False


def scan_block(
    data: bytes, *, source: str, start_line: int, classifier: Classifier | None = None
) -> BlockResult:
    """Classify every distinct NCCL line of ``data`` (whole lines, ``\\n``-separated).

    ``start_line`` is the 1-based number of the block's first line in ``source``;
    events that are kept as evidence carry their own line number. A ``classifier``
    passed along from the block before keeps its caches (and its memory of what each
    process already said) for this one.

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
    text = _NOISE.sub(b"NCCL INFO -", data)
    text = _CHANNEL_NUMBER.sub(b"Channel :", text) if b"Channel " in text else text
    if b"INFO Ring " in text:  # NCCL 2.4-2.6 name channels "Ring"
        text = _RING_NUMBER.sub(b"INFO Ring :", text)
    lines = text.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    result.num_lines = len(lines)
    counts = collections.Counter(lines)
    locate = _Locator(text, start_line)
    classify = classifier if classifier is not None else Classifier()
    events = result.events
    nccl = 0
    originals = _InputLines(data, start_line, edited=text is not data)
    #: (process, transport) whose first connection line is quoted: the rest are not located
    quoted = classify.quoted
    for whole, count in counts.items():
        line = whole
        if len(line) > MAX_LINE_BYTES:
            line = line[:MAX_LINE_BYTES]
            result.num_cut += count
        if b"NCCL INFO " in line or b"NCCL WARN " in line:
            nccl += count
        if (
            b"NCCL" not in line
            and b"nccl" not in line
            and b"<warn>" not in line
            and b" Pid " not in line  # nccl-tests' rank table
            and not _BARE_HINT.search(line)  # a message pasted without its prefix
            and not bare_warn_start(line)  # a WARN pasted without its prefix
        ):
            continue
        # two NCCL lines glued together (no newline between): each is read
        parts = classify.split(line) if line.count(b"NCCL ") > 1 else (line,)
        for part in parts:
            event = classify(part, source)
            if event is None:
                continue
            event.count = count
            kind = event.kind
            # a process's first connection per transport, and its first Init START
            pair = None
            if event.process is not None and kind == "connection":
                pair = (event.process[0], event.data[5])
            elif (
                event.process is not None
                and kind == "comm"
                and event.data[:2]
                == (
                    "Init",
                    "START",
                )
            ):
                pair = (event.process[0], "Init START")
            if (
                kind in LOCATED_KINDS
                or (pair is not None and pair not in quoted)
                or (kind == "comm" and event.data[0] == "Abort")
            ):
                if pair is not None:
                    if len(quoted) >= MAX_QUOTED:
                        quoted.clear()  # quoted again: the folder keeps the first
                    quoted.add(pair)
                number = locate(whole)
                event.line_number = number
                if number:
                    event.raw = originals.quote(whole, number, part)
            events.append(event)
    if b"Last error:" in text:
        _last_errors(text, source, start_line, events)
    result.num_nccl_lines = nccl
    result.framework = any(word in data for word in RCCL_BYTES) or any(
        MARKS.search(line) for line in counts if b"NCCL INFO " not in line
    )
    return result


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

    __slots__ = ("_data", "_edited", "_lines", "_start_line")

    def __init__(self, data: bytes, start_line: int, *, edited: bool) -> None:
        self._data = data
        self._start_line = start_line
        self._edited = edited
        self._lines: list[bytes] | None = None

    def quote(self, whole: bytes, number: int, part: bytes) -> str:
        """How the event read from ``part`` of line ``number`` (``whole``) is quoted."""
        if not (self._edited and _EDITED.search(whole)):
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


class _Locator:
    """Line numbers of first occurrences, asked for in increasing order.

    ``Counter`` keeps lines in the order of their first occurrence, so each line asked
    for lies after the previous one: newlines are counted once over the block.
    """

    __slots__ = ("_at", "_line", "_text")

    def __init__(self, text: bytes, start_line: int) -> None:
        self._text = text
        self._at = 0
        self._line = start_line

    def __call__(self, line: bytes) -> int:
        text = self._text
        at = self._at
        while True:
            found = text.find(line, at)
            if found < 0:
                return 0
            if (found == 0 or text[found - 1] == 0x0A) and (
                found + len(line) == len(text) or text[found + len(line)] == 0x0A
            ):
                break
            at = found + 1
        self._line += text.count(b"\n", self._at, found)
        self._at = found
        return self._line


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
