"""Error trails a caller recovered from.

NCCL prints ``file.cc:N -> code`` at every function an error passes through
(include/checks.h), and hpnet reads a process whose last word is such a trail as failed.
Some calls fail on purpose and their caller goes on: in NCCL 2.13-2.15 and 2.19
``ncclTransportCollNetCheck`` warns "Cannot initialize CollNet, using point-to-point
network instead" and returns ncclSystemError, which init.cc's caller turns back into
success (the format table marks such a WARN ``recoverable`` for the releases where it
is). Only local rank 0 of a node prints the WARN, and an excerpt shows it for one node;
the other processes that took the same path print the same trail sites.

The rule: a process is recovered when its trails are the trails of the failing call
that a recoverable WARN's node printed before that WARN (the same ``file:line`` sites,
the same codes); its trails then say nothing failed. A process that passed an error up
from any other site still failed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.ncclog.model import LogLine, ProcessLog

_TRAIL = re.compile(r"(\S+\.(?:cc|cu|c|h|cpp):\d+) (?:\([^)]*\) )?-> (\d+)")
#: a WARN whose text, after its own file:line, is a trail
_WARN_TRAIL = re.compile(r"WARN (?:\S+ )?\S+\.(?:cc|cu|c|h|cpp):\d+ (?:\([^)]*\) )?-> \d+")


def _sites(
    trails: Sequence[LogLine], before: tuple[str, int] | None = None
) -> set[tuple[str, int]]:
    found = set()
    for line in trails:
        if before is not None and (line.source, line.line_number) > before:
            continue
        match = _TRAIL.search(line.text)
        if match:
            found.add((match.group(1), int(match.group(2))))
    return found


def recover(processes: Sequence[ProcessLog]) -> tuple[ProcessLog, ...]:
    """``processes`` with ``went_on`` set where their trails were recovered from."""
    fallbacks = [
        (p, line)
        for p in processes
        for line in p.warnings
        if p.warn_fatal.get(line.message) == "recoverable"
        # a WARN that is itself a trail ("WARN proxy.cc:979 -> 3 [Progress Thread]", a
        # vendor build's) names no call that fails on purpose: it passed an error up
        and not _WARN_TRAIL.match(line.message)
    ]
    if not fallbacks:
        return tuple(processes)
    known: set[tuple[str, int]] = set()
    for process, line in fallbacks:
        at = (line.source, line.line_number)
        for other in processes:
            if other.host == process.host:
                known |= _sites(other.trails, at)
    if not known:
        return tuple(processes)
    return tuple(
        dataclasses.replace(p, went_on=True)
        if p.trails and not p.went_on and _sites(p.trails) <= known
        else p
        for p in processes
    )
