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

Some sites end their error where they print it, WARN or none: ``ncclTransportCollNetSetup``
returns a flag, not the error (``return fail``, 2.10-2.22; ``return ret != ncclSuccess``,
2.23 on), which its caller ORs before it warns "Cannot initialize CollNet" and sets up the
communicator without CollNet; ``ncclIsCuMemSupported`` returns ``ret == ncclSuccess``, and
a CUDA call that fails there (its WARN "Cuda failure 3 'initialization error'") only turns
cuMem off. A process whose every trail is at such a site (:data:`ABSORBED`) passed no
error up either, and a WARN printed at one is no failure.

Where a WARN some caller recovers from is followed by a trail of its own thread, that
caller passed the error up: it recovers nothing. And a process whose first trail line
comes before any WARN of it, on another call's path (:func:`failed_first`), failed first:
what it passed up began before anything the input says of it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.ncclog.model import LogLine, ProcessLog

_TRANSPORT = (
    157,
    177,
    192,
    210,
    215,
    224,
    229,
    247,
    255,
    258,
    261,
    265,
    275,
    279,
    280,
    283,
    298,
    299,
    301,
    302,
    305,
    306,
    313,
    314,
    317,
    318,
    327,
    329,
    331,
    332,
    334,
    335,
    337,
    340,
    346,
    349,
    350,
    351,
    353,
    354,
    355,
    356,
    357,
    358,
    361,
    373,
    374,
    409,
    413,
    431,
    433,
    437,
)
_CUDAWRAP = (29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 41)
#: check sites (NCCLCHECK, CUDACHECK, CUCHECK, SYSCHECK and their GOTO forms) that are
#: inside a function returning a flag, not the error, in every release that has a check
#: there, 2.3.5 to 2.30.7 (tools/nccl_formats/absorbed_sites.py): ``transport.cc``'s in
#: ``ncclTransportCollNetSetup`` (a CollNet setup failure NCCL goes on without) and
#: ``cudawrap.cc``'s in ``ncclIsCuMemSupported`` / ``ncclCuMemHostEnable`` (a failed CUDA
#: call there is "cuMem not supported": NCCL goes on with its legacy buffers). A trail,
#: or a WARN, at one passed no error up
ABSORBED = frozenset(
    [f"transport.cc:{n}" for n in _TRANSPORT] + [f"cudawrap.cc:{n}" for n in _CUDAWRAP]
)
_TRAIL = re.compile(r"(\S+\.(?:cc|cu|c|h|cpp):\d+) (?:\([^)]*\) )?-> (\d+)")
#: the thread id after ``host:pid:`` in a line's prefix
_TID = re.compile(r"\d+")
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
        # its own thread passed the error up after it: the caller here did not go on
        and not _passed_up(p, line)
    ]
    known: set[tuple[str, int]] = set()
    for process, line in fallbacks:
        at = (line.source, line.line_number)
        for other in processes:
            if other.host == process.host:
                known |= _sites(other.trails, at)
    return tuple(
        dataclasses.replace(p, went_on=True)
        if p.trails and not p.went_on and _recovered(_sites(p.trails), known)
        else p
        for p in processes
    )


def _passed_up(process: ProcessLog, warn: LogLine) -> bool:
    """Does a trail of the thread that printed ``warn`` follow it (NCCL's
    ``proxy.cc:1076 -> 3`` after "Socket recv failed while polling": the error went on
    up, whatever another caller of the same call does)? Without thread ids, a trail of
    the same process."""
    thread = thread_of(warn, process.key)
    at = (warn.source, warn.line_number)
    return any(
        (t.source, t.line_number) > at and thread_of(t, process.key) == thread
        for t in process.trails
    )


def thread_of(line: LogLine, key: str) -> str | None:
    """The thread id of a ``host:pid:tid`` line of the process ``key``, if it says one.

    >>> thread_of(LogLine(source="x", line_number=6, text="h:7991:8061 [1] NCCL WARN x"), "h:7991")
    '8061'
    """
    at = line.text.find(key + ":")
    if at < 0:
        return None
    tid = _TID.match(line.text, at + len(key) + 1)
    return tid.group() if tid else None


def _recovered(sites: set[tuple[str, int]], known: set[tuple[str, int]]) -> bool:
    """Every site a trail of the failing call a fallback WARN followed, or one that ends
    its error where it prints it (a build's full path stands for its file)."""
    return bool(sites) and all(
        site in known or site[0].rsplit("/", 1)[-1] in ABSORBED for site in sites
    )


def failed_first(process: ProcessLog) -> bool:
    """Does the process's first trail line come before its first WARN in the same input,
    on another call's path? Then the error it passed up began before anything the input
    says of it (pytorch#124380: an Async thread's ``group.cc:64 -> 2``, its proxy's WARNs
    after). A WARN in the file the trail starts in heads that trail's call: the input
    began inside an earlier instance of the same failure (horovod#3871's excerpt opens
    with ``graph/xml.cc:469 -> 2``, its WARN ``graph/xml.cc:332`` follows)."""
    first = min(process.trails, key=lambda t: (t.source, t.line_number))
    warns = [
        w
        for w in process.warnings
        if w.source == first.source and w.line_number and w.message.startswith("WARN")
    ]
    if not warns or not first.line_number:
        return False
    warn = min(warns, key=lambda w: w.line_number)
    if warn.line_number < first.line_number:
        return False
    started = _TRAIL_FILE.search(first.message or first.text)
    warned = _WARN_FILE.match(warn.message)
    return not (started and warned and started.group(1) == warned.group(1))


#: the file of a trail line's first site, and of a WARN's location (a build's path cut)
_TRAIL_FILE = re.compile(r"([\w.-]+)\.(?:cc|cu|c|h|cpp):\d+ (?:\([^)]*\) )?-> ")
_WARN_FILE = re.compile(r"WARN (?:\S*/)?([\w.-]+)\.(?:cc|cu|c|h|cpp):\d+")
