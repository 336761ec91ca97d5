"""Where a crash report says the signal stopped its process, read around the report.

A crash's own report names the function it stopped in on the lines around its banner
(UCX's backtrace frames before faulthandler's "Fatal Python error: Segmentation fault",
TVM FFI's frames after "!!!!!!! Segfault encountered !!!!!!!", abseil's "PC: @ ..." line):
lines the scanner reads only by their shapes. :func:`with_crash_sites` reads the lines
around each crash line of a file input again (one pass up to the last of them) and asks
``hpnet hang``'s reader of process endings (:func:`hpnet.hang.exits.read_exits`) where
each stopped, so that ``verify`` and ``hang`` say one place for one crash.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
from collections.abc import Iterator

from hpnet.ncclog.inputs import GZIP_MAGIC
from hpnet.ncclog.messages import CRASH_REPORT
from hpnet.ncclog.model import LogLine, NcclLog

__all__ = ["crash_site", "with_crash_sites"]

_CRASH = re.compile(CRASH_REPORT)
#: lines read on each side of a crash line: a backtrace of ~30 frames
_AROUND = 40
#: crash lines read again per input, at most
_MAX_CRASHES = 8


def with_crash_sites(log: NcclLog) -> NcclLog:
    """``log`` with :attr:`NcclLog.crash_sites` for the crash lines of its file inputs."""
    by_source: dict[str, list[int]] = {}
    for line in log.signals:
        if line.line_number and _CRASH.search(line.message or line.text):
            by_source.setdefault(line.source, []).append(line.line_number)
    sites: list[tuple[str, int, str]] = []
    for source, numbers in by_source.items():
        if not os.path.isfile(source):  # standard input: read once, gone
            continue
        wanted = sorted(set(numbers))[:_MAX_CRASHES]
        window = _window(source, wanted)
        for number in wanted:
            inside = _stopped_in(source, number, window)
            if inside is not None:
                sites.append((source, number, inside))
    return dataclasses.replace(log, crash_sites=tuple(sites)) if sites else log


def crash_site(log: NcclLog, line: LogLine) -> str | None:
    """Where the crash ``line`` reports stopped its process (``NCCL's SaveProxy
    (proxy.cc:518)``), if the lines around it say."""
    for source, number, inside in log.crash_sites:
        if source == line.source and number == line.line_number:
            return inside
    return None


def _window(source: str, numbers: list[int]) -> dict[int, str]:
    """The lines within :data:`_AROUND` of any of ``numbers``, by number."""
    keep = {n for at in numbers for n in range(max(1, at - _AROUND), at + _AROUND + 1)}
    last = max(keep)
    found: dict[int, str] = {}
    try:
        for number, raw in enumerate(_lines(source), 1):
            if number > last:
                break
            if number in keep:
                found[number] = raw.decode("utf-8", "replace").rstrip("\r\n")
    except OSError:  # gone or unreadable since it was scanned: nothing more to say
        return {}
    return found


def _lines(source: str) -> Iterator[bytes]:
    with open(source, "rb") as raw:
        packed = raw.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    with gzip.open(source, "rb") if packed else open(source, "rb") as handle:
        yield from handle


def _stopped_in(source: str, number: int, window: dict[int, str]) -> str | None:
    """What ``hang``'s reader says the crash at ``number`` stopped in."""
    from hpnet.hang.exits import read_exits  # noqa: PLC0415 - hang reads ncclog

    lines = [(n, window[n]) for n in range(number - _AROUND, number + _AROUND + 1) if n in window]
    for ended in read_exits(source, lines):
        name = ended.name or ""
        if "(in " in name and ended.where.endswith(f":{number}"):
            return name.split("(in ", 1)[1].removesuffix(")")
    return None
