"""What ``hpnet hang`` decides: a cause, a group's progress, the report; plain data."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.hang.ranklog import RankError

if TYPE_CHECKING:
    from hpnet.artefacts.model import RasReport
    from hpnet.hang.analyzer import Analysis
    from hpnet.hang.desync import DesyncReport
    from hpnet.hang.exits import Exit
    from hpnet.hang.placement import Place
    from hpnet.hang.stacks import Stack

__all__ = ["Cause", "GroupView", "HangReport", "ranks_text"]

SCHEMA_VERSION = 1
#: collectives per group the ranks x sequence numbers view shows
RECENT = 8
MISMATCH_FIX = (
    "a program bug: every rank of a group must call the same collectives, with the same "
    "sizes and dtypes, in the same order; look for a branch on the rank (or on data that "
    "differs between ranks) around this collective"
)

#: a collective every rank entered and none completed
STUCK_FIX = (
    "the collective itself did not finish on any rank: the network between these ranks or a "
    "GPU; run `hpnet verify` on their NCCL logs and `hpnet isolate` on their nodes"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Cause:
    kind: str  # mismatch, never-entered, gone, silent, stuck-in-collective
    pg: str
    pg_desc: str
    #: the group's collective where the ranks part (None: the line names no number, as
    #: torch 2.0's fingerprint check, whose fingerprints held none)
    seq: int | None
    collective: str  # what the waiting (or majority) ranks recorded there
    ranks: tuple[int, ...]  # the ranks named
    waiting: tuple[int, ...]  # the ranks that entered and wait
    evidence: tuple[str, ...]
    fix: str
    #: the cause this one follows from (its culprits wait in that one), if any
    consequence_of: str | None = None
    #: a mismatch: whether most ranks agree (else every side is named)
    majority: bool = True
    #: the verdict line where the source says it its own way (RAS: a communicator's
    #: ranks and counts, not a group's sequence number)
    summary: str | None = None
    #: other groups where the same ranks stopped the same way (NCCL enqueues ahead: a
    #: rank that stopped leaves every group it is in waiting), as labels
    also_in: tuple[str, ...] = ()

    def label(self) -> str:
        group = _group(self)  # none where only watchdog lines without one say it
        where = f" of group {group}" if group else ""
        number = f" #{self.seq}" if self.seq is not None else ""
        return f"{self.collective.split(' ')[0]}{number}{where}"

    def headline(self) -> str:
        if self.summary:
            return self.summary
        who = ranks_text(self.ranks)
        where = self.label()
        verb = "waits" if len(self.waiting) == 1 else "wait"
        waiting = f"; {ranks_text(self.waiting)} {verb} in it" if self.waiting else ""
        return {
            "mismatch": f"{who} called another collective than the group at {where}"
            if self.majority
            else f"{who} called different collectives at {where} (no majority says which "
            "side is wrong)",
            "never-entered": f"{who} never entered {where}{waiting}",
            "gone": f"{who} died: no dump, peers lost the connection, at {where}{waiting}",
            "silent": f"{who} left no dump and never answered, at {where}{waiting}",
            "stuck-in-collective": f"every rank entered {where} and none completed it",
        }.get(self.kind, self.kind)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GroupView:
    pg: str
    desc: str
    ranks: tuple[int, ...]
    #: rank -> its last collective's sequence number in this group (None: no dump)
    last: Mapping[int, int | None]
    #: rank -> {sequence number: what it recorded there} for the group's last
    #: :data:`RECENT` collectives (the ranks x sequence numbers view)
    recent: Mapping[int, Mapping[int, str]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HangReport:
    status: str  # hang, no-hang, unknown
    headline: str
    causes: tuple[Cause, ...]
    groups: tuple[GroupView, ...]
    ranks: tuple[int, ...]  # every rank known (dumps, group lists)
    without_dump: tuple[int, ...]
    dumps: tuple[str, ...]
    errors: tuple[RankError, ...]
    versions: tuple[str, ...]  # Flight Recorder format versions seen
    unreadable: tuple[str, ...] = ()  # "path: why" of dumps that could not be read
    ras: tuple[RasReport, ...] = ()  # the NCCL RAS reports read
    #: where the ranks the causes name ran, by NCCL's logs (hpnet.hang.placement)
    places: tuple[Place, ...] = ()
    nccl_logs: int = 0  # NCCL debug logs read
    #: the collectives Flight Recorder analyzer reports name (hpnet.hang.analyzer)
    analyses: tuple[Analysis, ...] = ()
    #: where each process a py-spy dump shows waits (hpnet.hang.stacks)
    stacks: tuple[Stack, ...] = ()
    #: the processes a launcher says ended (hpnet.hang.exits)
    exits: tuple[Exit, ...] = ()
    #: torch's desync reports (hpnet.hang.desync)
    desync: tuple[DesyncReport, ...] = ()

    @property
    def exit_code(self) -> int:
        return 0 if self.status == "no-hang" else 1


def ranks_text(ranks: Sequence[int]) -> str:
    if not ranks:
        return "no rank"
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _group(cause: Cause) -> str:
    return f"{cause.pg} ({cause.pg_desc})" if cause.pg_desc else cause.pg
