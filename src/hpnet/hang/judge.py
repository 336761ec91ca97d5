"""Why a job is stuck, from every rank's Flight Recorder dump and error lines; pure.

Per process group, over the ranks that dumped (the rule torch's own analyser applies,
torch/distributed/flight_recorder/components/utils.py, error_analysis: "not all ranks
joining", "collective sequence number has errors"):

1. **mismatch** — the first sequence number at which the group's ranks recorded
   different collectives (op, sizes or dtypes): a program bug, whatever happened after.
   The ranks unlike the majority are named; with no majority, every side is.
2. **never-entered** — ranks whose last collective of the group comes before the one
   the others entered: they are stuck before it (their own work, a data loader,
   another group, a rank-dependent branch), and the others wait for them.
3. **gone** / **silent** — members that left no dump while the others wait in a
   collective: their peers' errors say the connection closed (the process died), or
   nothing does (frozen: stopped, in a driver call, the host down).
4. **stuck-in-collective** — every rank entered the same collective and none
   completed it (NCCL records started / completed): the collective itself is stuck,
   which points at the network or a GPU between them.

A group whose dumped ranks all agree and all reached the same collective is not the
cause. Nothing here imports torch.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.hang.analyzer import Analysis, analysis_causes, analysis_summary
from hpnet.hang.desync import DesyncReport, desync_causes
from hpnet.hang.fingerprint import fingerprint_mismatch
from hpnet.hang.flight import Entry, RankDump
from hpnet.hang.model import (
    MISMATCH_FIX,
    RECENT,
    STUCK_FIX,
    Cause,
    GroupView,
    HangReport,
    ranks_text,
)
from hpnet.hang.ranklog import RankError
from hpnet.hang.ras import ras_causes
from hpnet.hang.unhung import (
    crashed,
    never_met,
    ray_folded,
    store_unreached,
    store_waited,
    stuck_summary,
)
from hpnet.hang.watchdog import (
    lines_summary,
    rendezvous_missing,
    watchdog_all_in,
    watchdog_barrier,
    watchdog_behind,
    watchdog_mismatch,
    watchdog_summary,
    watchdog_unentered,
)  # fmt: skip

if TYPE_CHECKING:
    from hpnet.artefacts.model import RasReport

__all__ = ["Cause", "GroupView", "HangReport", "judge"]


def _collectives(dump: RankDump, pg: str) -> dict[int, Entry]:
    return {e.seq: e for e in dump.entries if e.pg == pg and not e.p2p}


def _where(dump: RankDump) -> str:
    return os.path.basename(dump.path)


def _mismatch(
    pg: str, desc: str, seqs: Mapping[int, dict[int, Entry]], common: int
) -> Cause | None:
    for seq in range(1, common + 1):
        present = {r: s[seq] for r, s in seqs.items() if seq in s}
        kinds = Counter(e.signature for e in present.values())
        if len(kinds) <= 1:
            continue
        (top, count), *rest = kinds.most_common()
        unique = not rest or rest[0][1] < count
        named = sorted(r for r, e in present.items() if not unique or e.signature != top)
        majority = next(e for e in present.values() if e.signature == top)
        evidence = tuple(
            f"rank {r}: #{seq} {present[r].describe()}"
            for r in sorted(present, key=lambda r: (present[r].signature == top, r))
        )
        return Cause(
            kind="mismatch", pg=pg, pg_desc=desc, seq=seq, collective=majority.describe(),
            ranks=tuple(named), waiting=(), evidence=evidence[:8], majority=unique,
            fix=MISMATCH_FIX,
        )  # fmt: skip
    return None


def _where_else(dump: RankDump, pg: str) -> str:
    """Where a rank that stopped issuing in ``pg`` went: its latest recorded collective."""
    if not dump.entries:
        return "it recorded no collective at all"
    latest = max(dump.entries, key=lambda e: (e.created_ns, e.seq))
    if latest.pg == pg:
        return "nothing later in any group"
    return f"its latest collective is #{latest.seq} {latest.describe()} of group {latest.pg}"


def _closed_first(closed: Sequence[RankError], timeouts: Sequence[RankError]) -> bool:
    """Whether a peer lost its connection before any rank timed out: the rank died. A
    frozen rank keeps its connections: its peers time out first, and a peer that exits on
    that closes its own to the others. Without times on both kinds of line, only a job
    with no timeout at all says the rank died."""
    if not closed:
        return False
    if not timeouts:
        return True
    first_closed = [e.at for e in closed if e.at is not None]
    first_timeout = [e.at for e in timeouts if e.at is not None]
    return bool(first_closed and first_timeout and min(first_closed) < min(first_timeout))


def _enqueued(dump: RankDump, pg: str) -> int:
    """The group's last collective the rank enqueued, by the dump's ``pg_status``, for a
    dump that lists none of the group's collectives (torch's dump of only the active
    ones, when none is): 0 where the dump does not say."""
    ids = [i for i, name in dump.pg_names.items() if name == pg] or [pg]
    return max((dump.pg_status[i][0] for i in ids if i in dump.pg_status), default=0)


def _waits(
    seqs: Mapping[int, dict[int, Entry]], ranks: Sequence[int], tracked: bool, top: int
) -> dict[int, list[int]]:
    """Where each rank waits: its first collective not completed (NCCL records states),
    else its last (gloo records none) -> the ranks waiting there."""
    at: dict[int, list[int]] = {}
    for r in ranks:
        open_ = [n for n, e in seqs[r].items() if e.state != "completed"] if tracked else []
        at.setdefault(min(open_) if open_ else max(seqs[r], default=top), []).append(r)
    return dict(sorted(at.items()))


def _wait_lines(seqs: Mapping[int, dict[int, Entry]], waits: Mapping[int, list[int]]) -> list[str]:
    """One line per place the ranks wait: ``ranks 0, 1: in #3 all_reduce [1024] Float
    (started), then 1 more scheduled`` (NCCL issues a rank's next collectives before the
    one it waits in completes)."""
    lines = []
    for seq, ranks in waits.items():
        entry = next((seqs[r][seq] for r in ranks if seq in seqs[r]), None)
        states = {seqs[r][seq].state for r in ranks if seq in seqs[r]}
        after = max((n for r in ranks for n in seqs[r]), default=seq) - seq
        text = f"{ranks_text(ranks)}: in #{seq} {entry.describe() if entry else '?'}"
        text += f" ({states.pop()})" if len(states) == 1 else ""
        lines.append(text + (f", then {after} more scheduled" if after > 0 else ""))
    return lines


def _group_causes(
    pg: str, members: Sequence[int], dumps: Mapping[int, RankDump], errors: Sequence[RankError]
) -> list[Cause]:
    seqs = {r: _collectives(dumps[r], pg) for r in members if r in dumps}
    last = {r: max(s, default=0) or _enqueued(dumps[r], pg) for r, s in seqs.items()}
    desc = next((e.pg_desc for s in seqs.values() for e in s.values()), "")
    if not last:
        return []
    found = _mismatch(pg, desc, seqs, min(last.values()))
    if found is not None:
        return [found]
    # NCCL enqueues without waiting: a rank records the collectives after the one it
    # waits in (scheduled). The ranks part at the lowest last sequence number; the
    # collective they wait in is the first one not completed (gloo's: the last).
    low, top = min(last.values()), max(last.values())
    # gloo records every collective "scheduled", never started or completed
    tracked = any(e.state != "scheduled" for s in seqs.values() for e in s.values())
    # a rank whose last collective did not complete waits in it: its peers' data never
    # came (NCCL: a peer died or its network stalled mid-collective), not its own work
    inside = {
        r for r, n in last.items() if tracked and n in seqs[r] and seqs[r][n].state != "completed"
    }
    behind = sorted(r for r, n in last.items() if n == low and r not in inside) if low < top else []
    ahead = sorted(r for r in last if r not in behind)
    pending = [n for r in ahead for n, e in seqs[r].items() if e.state != "completed"]
    pending = pending if tracked else [top]
    stuck = low + 1 if behind else min(pending, default=top)
    entry = next((seqs[r][stuck] for r in ahead if stuck in seqs[r]), None)
    collective = entry.describe() if entry else "?"
    waits = _waits(seqs, ahead, tracked, top)
    there = tuple(waits.get(stuck) or ahead)  # the ranks that wait in this collective
    missing = sorted(r for r in members if r not in dumps)
    if behind:
        evidence = [
            f"rank {r}: last collective #{last[r]}"
            + (f" {seqs[r][last[r]].describe()}" if last[r] in seqs[r] else "")
            + f" ({_where(dumps[r])}); {_where_else(dumps[r], pg)}"
            for r in behind
        ]
        evidence += _wait_lines(seqs, waits)
        return [
            Cause(
                kind="never-entered",
                pg=pg,
                pg_desc=desc,
                seq=stuck,
                collective=collective,
                ranks=tuple(behind),
                waiting=there,
                evidence=tuple(evidence[:8]),
                fix=f"{ranks_text(behind)} stopped before this collective, in its own work "
                "(compute, a data loader, I/O, another group's collective, a branch that skips "
                "it): dump its Python stack on its host (py-spy dump --pid PID) to see where",
            )
        ]
    told = [e for e in errors if e.mismatch and (e.rank is None or e.rank in members)]
    if missing and told:
        # a rank that left no dump said why it ended: the collectives did not match
        return [
            Cause(
                kind="mismatch",
                pg=pg,
                pg_desc=desc,
                seq=stuck,
                collective=collective,
                ranks=tuple(sorted({*ahead, *missing})),
                waiting=(),
                majority=False,
                evidence=(
                    *(f"{e.where}: {e.text}" for e in told[:2]),
                    *(
                        f"rank {r}: #{stuck} {seqs[r][stuck].describe()}"
                        for r in ahead
                        if stuck in seqs[r]
                    ),
                    f"{ranks_text(missing)}: no dump (its own call is not recorded)",
                )[:8],
                fix=MISMATCH_FIX,
            )
        ]
    # a rank that left no dump but whose own line says it timed out waiting, or lost a
    # peer, was alive and waiting on others: a victim, never the one named
    waited = sorted(
        r for r in missing if any(e.rank == r and (e.timeout or e.peer_closed) for e in errors)
    )
    missing = [r for r in missing if r not in waited]
    if missing and pending:
        # died: its peers lost the connection and none had timed out waiting for it first
        # (a frozen rank keeps its connections: its peers time out, and a peer that
        # exits on that closes theirs to the others)
        closed = [e for e in errors if e.peer_closed]
        kind = "gone" if _closed_first(closed, [e for e in errors if e.timeout]) else "silent"
        evidence = [f"{ranks_text(missing)}: no Flight Recorder dump"]
        own = [e for e in errors if e.rank in waited and (e.timeout or e.peer_closed)]
        if own:
            evidence.append(
                f"{ranks_text(waited)}: no dump either, but alive and waiting by its own "
                f"line (not named): {own[0].where}"
            )
        evidence += [f"{e.where}: {e.text}" for e in (closed or errors)[:4]]
        evidence += _wait_lines(seqs, waits)
        fix = (
            f"{ranks_text(missing)} ended while the others waited: read its own log and "
            "the host's kernel log (dmesg: the OOM killer, a GPU Xid) for why"
            if kind == "gone"
            else f"{ranks_text(missing)} did not answer the dump signal: the process is "
            "frozen (stopped, blocked in a driver call) or its host is down; look at it on "
            "its host (py-spy dump, nvidia-smi, dmesg)"
        )
        return [
            Cause(
                kind=kind,
                pg=pg,
                pg_desc=desc,
                seq=stuck,
                collective=collective,
                ranks=tuple(missing),
                waiting=there,
                evidence=tuple(evidence[:8]),
                fix=fix,
            )
        ]
    states = {seqs[r][stuck].state for r in ahead if stuck in seqs[r]}
    done = sorted(r for r in ahead if stuck in seqs[r] and seqs[r][stuck].state == "completed")
    # some ranks completed it and some never did: those waited for data that never came;
    # or every rank started it and none completed: the collective itself is stuck
    partial = bool(tracked and done and states - {"completed"})
    if partial or (states and states <= {"started", "scheduled"} and "started" in states):
        named = [r for r in ahead if stuck in seqs[r] and r not in done] if partial else ahead
        if partial:
            fix = (
                f"{ranks_text(named)} never received all of this collective that "
                f"{ranks_text(done)} completed: the network path into {ranks_text(named)} or "
                "a GPU; run `hpnet verify` on their NCCL logs and `hpnet isolate` on their nodes"
            )
            summary = (
                f"{ranks_text(named)} entered {collective.split(' ')[0]} #{stuck} of "
                f"group {pg}{f' ({desc})' if desc else ''} and never completed it; "
                f"{ranks_text(done)} did"
            )
        else:
            fix = STUCK_FIX
            summary = None
        return [
            Cause(
                kind="stuck-in-collective",
                pg=pg,
                pg_desc=desc,
                seq=stuck,
                collective=collective,
                ranks=tuple(named),
                waiting=(),
                evidence=tuple(
                    f"rank {r}: #{stuck} {seqs[r][stuck].state}" for r in [*named, *done]
                )[:8],
                fix=fix,
                summary=summary,
            )
        ]
    return []


def _members(pg: str, dumps: Mapping[int, RankDump], known: Sequence[int]) -> list[int]:
    listed = {r for d in dumps.values() for r in d.pg_ranks.get(pg, ())}
    entered = {r for r, d in dumps.items() if any(e.pg == pg for e in d.entries)}
    if pg == "0":  # the default group: every rank of the job
        return sorted(set(known) | listed | entered)
    return sorted(listed | entered)


def judge(
    dumps: Sequence[RankDump],
    errors: Sequence[RankError] = (),
    *,
    log_ranks: Sequence[int] = (),
    world: int | None = None,
    unreadable: Sequence[str] = (),
    ras: Sequence[RasReport] = (),
    analyses: Sequence[Analysis] = (),
    desync: Sequence[DesyncReport] = (),
    logged: int | None = None,
) -> HangReport:
    """The verdict over every rank's dump (one per rank: the last given wins). The job's
    ranks: those dumped, listed by a group, named by a log, and ``world`` (its size);
    ``logged``: its size by NCCL's logs (:func:`hpnet.hang.placement.logged_world`)."""
    by_rank = {d.rank: d for d in dumps}
    listed = {r for d in dumps for r in d.listed}
    said = {e.rank for e in errors if e.rank is not None} | set(log_ranks)
    # a process exiting without destroy_process_group() is no error: it says when
    exits = [e for e in errors if e.exiting]
    errors = [e for e in errors if not e.exiting]
    top = max({*by_rank, *listed, *said}, default=-1) + 1
    known = sorted(set(range(max(top, world or 0))))
    groups = sorted({e.pg for d in dumps for e in d.entries if not e.p2p}, key=_pg_order)
    causes: list[Cause] = []
    views = []
    for pg in groups:
        members = _members(pg, by_rank, known)
        causes += _group_causes(pg, members, by_rank, errors)
        desc = next((e.pg_desc for d in dumps for e in d.entries if e.pg == pg), "")
        last = {
            r: (
                max(_collectives(by_rank[r], pg), default=0) or _enqueued(by_rank[r], pg)
                if r in by_rank
                else None
            )
            for r in members
        }
        top = max((n for n in last.values() if n is not None), default=0)
        recent = {
            r: {
                seq: f"{e.describe()} {e.state}".strip()
                for seq, e in _collectives(by_rank[r], pg).items()
                if seq > top - RECENT
            }
            for r in members
            if r in by_rank
        }
        views.append(GroupView(pg=pg, desc=desc, ranks=tuple(members), last=last, recent=recent))
    without = tuple(r for r in known if r not in by_rank)
    if ras:  # after the dumps' causes: RAS names communicators, not groups
        causes += ras_causes(ras)
    # torch's own reading of the store's trace, where the dumps did not name the same ranks
    causes += [c for c in desync_causes(desync) if all(d.ranks != c.ranks for d in causes)]
    if not dumps:  # the analyzer's report stands for the dumps it read, where none is given
        causes += analysis_causes(analyses)
    causes = _roots_first(causes)
    if causes and all(c.consequence_of for c in causes):
        status = "hang"
        headline = (
            "ranks wait for each other across groups: "
            + "; ".join(c.headline() for c in causes[:2])
            + " (a deadlock: each group waits for ranks stuck in the other)"
        )
    elif causes:
        status, headline = "hang", causes[0].headline()
    elif analyses and not dumps and (reported := analysis_summary(analyses)) is not None:
        status, headline = "unknown", reported
    elif errors and not dumps and (never := never_met(errors)):
        status, headline = "unknown", never
    elif errors and not dumps and (ended := crashed(errors) or store_waited(errors)):
        status, headline = "unknown", ended
    elif (
        found := fingerprint_mismatch(errors)
        or watchdog_mismatch(errors, known)
        or watchdog_behind(errors)
        or watchdog_unentered(errors)
        or watchdog_barrier(errors)
        or rendezvous_missing(errors)
        or watchdog_all_in(
            errors, world or (logged if (logged or 0) >= len(known) else None), logs=not world
        )
    ) is not None:
        # the dumps (if any) showed no cause; the watchdogs timed out in different works
        # at one number, or some ranks timed out past a work the others wait in
        causes = [found]
        status, headline = "hang", found.headline()
    elif errors:
        status = "unknown"
        headline = (
            watchdog_summary(errors, dumped=bool(dumps))
            or stuck_summary(errors, exits, dumped=bool(dumps))
            or (
                f"{len({e.rank for e in errors})} rank(s) reported errors, but in every group "
                "the ranks that dumped reached the same collective: the dumps do not show which "
                "one failed"
                if dumps
                else lines_summary(errors)
            )
        )
        if (unreached := store_unreached(errors)) is not None:
            headline = f"{headline}; {unreached}"
        if folded := max((e.repeated for e in errors), default=0):
            headline += f"; {ray_folded(folded)}"
    elif not dumps and ras:
        # RAS said RUNNING OK while every rank of a 2-rank NCCL job sat in an all_reduce
        # whose network path had stalled (benchmarks/results/hang-plants-nccl-2026-11-27/
        # c-ras-live-net.txt): equal counts are a running job or a collective stuck on
        # every rank alike
        status = "unknown"
        headline = (
            "the RAS report shows no dead or missing rank and no rank behind in its operation "
            "counts: a running job, or one stuck inside a collective on every rank (a stalled "
            "link looks so); query again: counts that do not move are a hang, and the ranks' "
            "Flight Recorder dumps say where"
        )
    elif groups:
        status, headline = "no-hang", "every rank of every group reached the same collective"
    else:  # torch's dump of the active collectives only, on a job with none in flight
        status, headline = "no-hang", "no rank recorded a collective in flight"
    return HangReport(
        status=status, headline=headline, causes=tuple(causes), groups=tuple(views),
        ranks=tuple(known), without_dump=without, dumps=tuple(d.path for d in dumps),
        errors=tuple(errors), versions=tuple(sorted({d.version for d in dumps})),
        unreadable=tuple(unreadable), ras=tuple(ras), analyses=tuple(analyses),
        desync=tuple(desync),
    )  # fmt: skip


def _roots_first(causes: list[Cause]) -> list[Cause]:
    """A cause whose culprits all wait in (or are the culprits of) another cause follows
    from that one: a rank waiting in group 1 never reaches group 0's next collective.
    Roots first; each consequence names its root. The same ranks stopped the same way in
    another group is one cause, not two: the first names the others (``also_in``)."""
    folded: list[Cause] = []
    for cause in causes:
        same = next(
            (
                i
                for i, kept in enumerate(folded)
                if kept.kind == cause.kind in ("never-entered", "gone", "silent")
                and kept.ranks == cause.ranks
                and kept.pg != cause.pg
            ),
            None,
        )
        if same is None:
            folded.append(cause)
        else:
            kept = folded[same]
            folded[same] = dataclasses.replace(kept, also_in=(*kept.also_in, cause.label()))
    causes = folded
    marked = []
    for cause in causes:
        others = [d for d in causes if d is not cause]
        root = next((d for d in others if set(cause.ranks) & set(d.waiting)), None)
        covered = all(any(r in d.waiting or r in d.ranks for d in others) for r in cause.ranks)
        follows = cause.kind == "never-entered" and root is not None and covered
        marked.append(
            dataclasses.replace(cause, consequence_of=root.label()) if follows and root else cause
        )
    return sorted(marked, key=lambda c: c.consequence_of is not None)


def _pg_order(pg: str) -> tuple[int, str]:
    return (int(pg), "") if pg.isdigit() else (1 << 30, pg)
