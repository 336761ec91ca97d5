"""Which kinds of artefact a text holds, and every reader's facts: :func:`read_artefacts`.

A pure function of text. One input may hold several kinds (an ncclras report pasted
with PyTorch's watchdog lines; NCCL debug lines followed by XLA's error). NCCL debug
lines themselves are read by :mod:`hpnet.ncclog`; here they only count as a kind.
:class:`ArtefactTap` keeps what a stream (standard input, a FIFO, a gzip file) sent
so that it can be read here too; :func:`file_text` reads a regular file.
"""

from __future__ import annotations

import re

from hpnet.artefacts.framework import read_torch, read_wrapped
from hpnet.artefacts.lines import logical_lines
from hpnet.artefacts.model import ArtefactFacts, Kind, Quote, RasReport
from hpnet.artefacts.ras import looks_like_ras_json, parse_ras_json, parse_ras_text
from hpnet.artefacts.rccl import mentions_rccl, read_rccl
from hpnet.artefacts.words import FRAMEWORK_WORDS, RAS_WORDS

__all__ = ["MAX_TEXT_BYTES", "ArtefactTap", "combine", "file_text", "read_artefacts"]

#: a file up to this size is read whole; a larger one (a big NCCL log) by its first
#: :data:`EDGE_BYTES` (RAS reports and framework errors are small; the NCCL pipeline
#: keeps the failure lines of a large log itself)
MAX_TEXT_BYTES = 64 << 20
EDGE_BYTES = 1 << 20
_RAS_TEXT = re.compile(
    r"^(?:Job summary$|Group\s+Comms\s+Nodes\s+Ranks"
    r"|#\d+-\d+ \([0-9a-f]+\) (?:MISMATCH|ERROR|INCOMPLETE)"
    r"|NCCL version \S+ compiled with CUDA)",
    re.MULTILINE,
)
#: a literal of each of _RAS_TEXT's line starts: the pattern runs only where one is
_NCCL_LINE = re.compile(r"\bNCCL (?:INFO|WARN|TRACE)\b")
#: an NCCL debug line: the NCCL pipeline's to read, never part of a framework's message
_NCCL_INFO = "NCCL INFO "


def read_artefacts(source: str, text: str, first_line: int = 1) -> ArtefactFacts:
    """Every artefact fact in ``text`` (``source`` names it in quotes; its first line is
    line ``first_line`` of the input).

    >>> read_artefacts("f", "hello").kinds
    ()
    """
    kinds: list[Kind] = []
    ras: list[RasReport] = []
    if looks_like_ras_json(text):
        try:
            ras.append(parse_ras_json(source, text))
            kinds.append(Kind.RAS_JSON)
        except ValueError:  # json.JSONDecodeError too: a cut document is read as text
            pass
    physical = text.splitlines() if _needs_lines(text) else []
    if not ras and any(word in text for word in RAS_WORDS) and _RAS_TEXT.search(text):
        report = parse_ras_text(source, list(enumerate(physical, first_line)))
        if report.groups or report.comms or report.nccl_version:
            ras.append(report)
            kinds.append(Kind.RAS_TEXT)
    # an RCCL log says so on a line of its own (mentions_rccl); the lines are read one by
    # one only then: a 60 MB NCCL log took 30 s here where the whole verify took 8 s
    rccl = None
    if mentions_rccl(text):
        rccl = read_rccl(
            Quote(source=source, line=n, text=t) for n, t in enumerate(physical, first_line)
        )
    if rccl is not None:
        kinds.append(Kind.RCCL)
    elif _NCCL_LINE.search(text):
        kinds.append(Kind.NCCL_LOG)
    # NCCL's own INFO lines are the NCCL pipeline's, never part of a framework's
    # message: left out here (a gap in the line numbers ends a wrapped message, as the
    # INFO line did), so that a large log costs the framework readers little
    near = _near_framework_words(text, physical, first_line)
    framework = [(n, t) for n, t in near if _NCCL_INFO not in t]
    messages = list(logical_lines(source, framework))
    torch = read_torch(messages)
    if torch:
        kinds.append(Kind.TORCH)
    wrapped = read_wrapped(messages)
    if any(w.via == "xla" for w in wrapped):
        kinds.append(Kind.XLA)
    if any(w.via != "xla" for w in wrapped):
        kinds.append(Kind.WRAPPER)
    return ArtefactFacts(
        source=source,
        kinds=tuple(kinds),
        ras=tuple(ras),
        torch=tuple(torch),
        wrapped=tuple(wrapped),
        rccl=rccl,
    )


#: how far around a framework word a message it belongs to may reach (a wrapped message
#: spans up to MAX_PARTS lines; "Last error:" and NCCL's last WARN follow the error)
_REACH = 16
#: more places than this: read every line
_MAX_PLACES = 256
#: line breaks of str.splitlines other than \n and \r\n
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def _needs_lines(text: str) -> bool:
    """Does any reader need ``text``'s lines: a framework word, a RAS or RCCL word?"""
    return (
        any(word in text for word in FRAMEWORK_WORDS)
        or any(word in text for word in RAS_WORDS)
        or mentions_rccl(text)
    )


def _near_framework_words(text: str, physical: list[str], first_line: int) -> list[tuple[int, str]]:
    """The lines within :data:`_REACH` lines of a framework word, numbered: the framework
    readers' patterns cannot match elsewhere, and a large NCCL log has none of the words,
    so its lines are not walked one by one in Python (issue 24: not slower)."""
    if not physical:
        return []
    if _OTHER_BREAKS.search(text) or text.count("\r") != text.count("\r\n"):
        return list(enumerate(physical, first_line))  # splitlines' numbering, not \n's
    places: list[int] = []
    for word in FRAMEWORK_WORDS:
        at = text.find(word)
        while at != -1 and len(places) <= _MAX_PLACES:
            places.append(at)
            at = text.find(word, at + len(word))
    if len(places) > _MAX_PLACES:  # the framework text is the input: read it all
        return list(enumerate(physical, first_line))
    keep: set[int] = set()
    line = previous = 0
    for at in sorted(places):
        line += text.count("\n", previous, at)
        previous = at
        keep.update(range(max(0, line - _REACH), min(len(physical), line + _REACH + 1)))
    return [(i + first_line, physical[i]) for i in sorted(keep)]


def file_text(path: str, size_bytes: int, skip_bytes: int = 0) -> list[tuple[str, int]]:
    """A regular file's text, as parts with the line number each starts at: the whole
    file up to :data:`MAX_TEXT_BYTES`; else its first and its last :data:`EDGE_BYTES`
    (whole lines), where what a job wrote first (versions, RAS reports) and last (the
    watchdog's timeout, the framework's error) stand. The last part's line number is
    counted (newlines of what lies between, read in blocks at memory speed)."""
    with open(path, "rb") as handle:
        handle.seek(skip_bytes)
        if size_bytes - skip_bytes <= MAX_TEXT_BYTES:
            return [(handle.read().decode("utf-8", "replace"), 1)]
        head = handle.read(EDGE_BYTES)
        head = head[: head.rfind(b"\n") + 1]
        lines = head.count(b"\n")
        handle.seek(skip_bytes + len(head))
        left = size_bytes - skip_bytes - len(head) - EDGE_BYTES
        while left > 0:
            block = handle.read(min(left, 8 << 20))
            if not block:
                break
            lines += block.count(b"\n")
            left -= len(block)
        tail = handle.read()
        cut = tail.find(b"\n") + 1  # the first whole line of the tail
        lines += tail[:cut].count(b"\n")
        return [
            (head.decode("utf-8", "replace"), 1),
            (tail[cut:].decode("utf-8", "replace"), lines + 1),
        ]


def combine(parts: list[ArtefactFacts]) -> ArtefactFacts:
    """One input's facts from the facts of its parts (:func:`file_text`), in order.

    >>> combine([read_artefacts("f", "hello"), read_artefacts("f", "x", 9)]).kinds
    ()
    """
    kinds = tuple(dict.fromkeys(k for p in parts for k in p.kinds))
    return ArtefactFacts(
        source=parts[0].source,
        kinds=kinds,
        ras=tuple(r for p in parts for r in p.ras),
        torch=tuple(t for p in parts for t in p.torch),
        wrapped=tuple(w for p in parts for w in p.wrapped),
        rccl=next((p.rccl for p in parts if p.rccl is not None), None),
    )


class ArtefactTap:
    """Keeps the first :data:`MAX_TEXT_BYTES` of each stream it is fed."""

    def __init__(self) -> None:
        self.texts: dict[str, list[bytes]] = {}
        self.sizes: dict[str, int] = {}

    def __call__(self, name: str, chunk: bytes) -> None:
        kept = self.sizes.get(name, 0)
        if kept >= MAX_TEXT_BYTES:
            return
        self.texts.setdefault(name, []).append(chunk[: MAX_TEXT_BYTES - kept])
        self.sizes[name] = kept + len(chunk)

    def text(self, name: str) -> str:
        return b"".join(self.texts.get(name, [])).decode("utf-8", "replace")
