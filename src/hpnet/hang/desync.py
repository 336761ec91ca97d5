"""torch's desync report: which ranks the watchdog found lagging when its collective
timed out (``TORCH_NCCL_DESYNC_DEBUG=1``); pure.

ProcessGroupNCCL's watchdog, on a timeout with desync debugging on, reads every rank's
last collective from the store (each rank records the start and end of its collectives
there, counted from 1 per group) and logs what it finds
(torch/csrc/distributed/c10d/TraceUtils.h, ``retrieveDesyncReport``; each line after
the first starts with a tab)::

    Rank 0
        - [0] Timeout at collective: ALLREDUCE, #315
        - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:
          - [4] joined but didn't finish collective #182 (count from 1)
            [7] finished collective #182, but didn't join collective #183 (count from 1)
        - Snapshot of ranks' latest states:
          #182 finished ranks:
            [7] finished ALLREDUCE
          #315 started ranks:
            [0, 1, 2] started ALLREDUCE

or, where some ranks recorded no collective at all, ``To our best knowledge, ranks [3,
5] are the lagging ranks that caused this timeout. They never joined any collectives``.
The lagging ranks are those at the lowest number any rank recorded: torch's count, not
the watchdog's ``SeqNum``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.artefacts.framework import PG_PREFIX
from hpnet.hang.model import Cause, ranks_text

__all__ = ["DesyncReport", "desync_causes", "read_desync"]

#: a log prefix before a line of the report (``[rank0]:``, a launcher's ``[default0]:``)
_PREFIX = re.compile(r"^(?:\[[^\]]*\]:)?\s*")
_TIMEOUT = re.compile(r"^- \[(\d+)\] Timeout at collective: (\S+), #(\d+)\s*$")
_MISSING = re.compile(
    r"To our best knowledge, ranks \[([\d, ]*)\] are the lagging ranks that caused this timeout"
)
_JOINED = re.compile(r"^-? ?\[([\d, ]+)\] joined but didn't finish collective #(\d+)")
_FINISHED = re.compile(
    r"^\[([\d, ]+)\] finished collective #(\d+), but didn't join collective #(\d+)"
)
_STATE_HEAD = re.compile(r"^#(\d+) (started|finished) ranks:\s*$")
_STATE = re.compile(r"^\[([\d, ]+)\] (started|finished) (\S+)\s*$")
#: the watchdog's next line names the group (2.3+): "[PG ID 1 PG GUID 1 Rank 0]  failure
#: detected by watchdog at work sequence id: 2" (framework.PG_PREFIX reads the prefix)
_FAILURE = "failure detected by watchdog"
MAX_REPORTS = 64


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DesyncReport:
    """One watchdog's desync report."""

    where: str  # file:line of its "Timeout at collective" line
    rank: int  # the rank whose watchdog wrote it
    pg: str = ""  # the group, where the watchdog's next line names it
    pg_desc: str = ""
    collective: str  # that rank's collective at the timeout (ALLREDUCE)
    seq: int  # its number in torch's count (from 1)
    #: ranks that recorded no collective ("never joined any collectives")
    missing: tuple[int, ...] = ()
    lag: int | None = None  # the collective the lagging ranks stopped at
    joined: tuple[int, ...] = ()  # joined collective #lag and did not finish it
    finished: tuple[int, ...] = ()  # finished #lag and did not join #lag + 1
    #: the snapshot: (number, started or finished, collective, ranks)
    states: tuple[tuple[int, str, str, tuple[int, ...]], ...] = ()
    lines: tuple[str, ...] = ()  # "file:line: text" of the lines that name the lagging


def _ranks(text: str) -> tuple[int, ...]:
    return tuple(int(r) for r in text.replace(" ", "").split(",") if r.isdigit())


def read_desync(path: str, lines: Sequence[tuple[int, str]]) -> list[DesyncReport]:
    """Every desync report in these numbered lines, in input order."""
    reports: list[DesyncReport] = []
    current: dict[str, object] | None = None
    head = ""  # the snapshot's "#N started ranks:" in force
    for number, raw in lines:
        line = raw[_PREFIX.match(raw).end() :]  # type: ignore[union-attr]
        said = f"{path}:{number}: {raw.strip()}"
        if found := _TIMEOUT.match(line):
            if current is not None and len(reports) < MAX_REPORTS:
                reports.append(DesyncReport(**current))  # type: ignore[arg-type]
            current = {
                "where": f"{path}:{number}", "rank": int(found.group(1)),
                "collective": found.group(2), "seq": int(found.group(3)), "lines": (),
                "states": (),
            }  # fmt: skip
            head = ""
            continue
        if current is None:
            continue
        if found := _MISSING.search(line):
            current["missing"] = _ranks(found.group(1))
        elif found := _JOINED.match(line):
            current["joined"], current["lag"] = _ranks(found.group(1)), int(found.group(2))
        elif found := _FINISHED.match(line):
            current["finished"], current["lag"] = _ranks(found.group(1)), int(found.group(2))
        elif found := _STATE_HEAD.match(line):
            head = found.group(1)
            continue
        elif head and (found := _STATE.match(line)):
            state = (int(head), found.group(2), found.group(3), _ranks(found.group(1)))
            current["states"] = (*current["states"], state)  # type: ignore[misc]
            continue
        elif "the lagging/dead/mismatched ranks" in line or "Snapshot of ranks" in line:
            if "lagging" in line:
                current["lines"] = (*current["lines"], said)  # type: ignore[misc]
            continue
        else:  # the report ended; the watchdog's line after it names the group
            if _FAILURE in line and (group := PG_PREFIX.search(line)):
                current["pg"], current["pg_desc"] = (
                    group.group(2) or group.group(1),
                    group.group(3) or "",
                )
            if len(reports) < MAX_REPORTS:
                reports.append(DesyncReport(**current))  # type: ignore[arg-type]
            current, head = None, ""
            continue
        current["lines"] = (*current["lines"], said)  # type: ignore[misc]
    if current is not None and len(reports) < MAX_REPORTS:
        reports.append(DesyncReport(**current))  # type: ignore[arg-type]
    return reports


def _waiting(report: DesyncReport) -> tuple[tuple[int, ...], str]:
    """The ranks the snapshot shows ahead of the lagging ones, and where each waits."""
    ahead = [s for s in report.states if report.lag is None or s[0] > report.lag]
    ranks = tuple(sorted({r for s in ahead for r in s[3]}))
    where = ", ".join(f"{ranks_text(s[3])} {s[1]} {s[2]} #{s[0]}" for s in ahead)
    return ranks, where


def desync_causes(reports: Sequence[DesyncReport]) -> list[Cause]:
    """The lagging ranks each report names (one cause per report and kind of lag; the
    same ranks named by several reports are said once)."""
    causes: list[Cause] = []
    seen: set[tuple[tuple[int, ...], int | None]] = set()
    for report in reports:
        waiting, where = _waiting(report)
        group = f" of group {report.pg}" if report.pg else ""
        by = f"as the desync report of rank {report.rank}'s watchdog says ({report.where})"
        found: list[tuple[tuple[int, ...], int | None, str]] = []
        if report.missing:
            found.append((report.missing, None, f"never joined any collective{group}"))
        if report.finished and report.lag is not None:
            found.append(
                (
                    report.finished,
                    report.lag + 1,
                    f"finished collective #{report.lag}{group} and never joined #{report.lag + 1} "
                    "(torch's count)",
                )
            )
        if report.joined and report.lag is not None:
            found.append(
                (
                    report.joined,
                    report.lag,
                    f"joined collective #{report.lag}{group} (torch's count) and never finished it",
                )
            )
        for ranks, seq, what in found:
            if (ranks, seq) in seen:
                continue
            seen.add((ranks, seq))
            ahead = f"; {where}" if where else ""
            causes.append(
                Cause(
                    kind="never-entered",
                    pg=report.pg,
                    pg_desc=report.pg_desc,
                    seq=seq,
                    collective="collective",
                    ranks=ranks,
                    waiting=tuple(r for r in waiting if r not in ranks),
                    evidence=report.lines,
                    fix=f"{ranks_text(ranks)} stopped there: its own log and a stack of it "
                    "(py-spy dump --pid PID on its host) say what it does instead; torch's "
                    "count here (from 1, per group) is not the watchdog's SeqNum",
                    summary=f"{ranks_text(ranks)} {what}, {by}{ahead}",
                )
            )
    return causes
