"""What PyTorch's watchdog lines alone say about a stuck job: who timed out in which
collective, and whether the ranks timed out in different collectives at the same
sequence number (a mismatch: their programs parted), by the rule ``hpnet verify`` applies
to the same lines (:mod:`hpnet.artefacts.parted`)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence

from hpnet.artefacts.framework import called_from
from hpnet.artefacts.parted import (
    Apart,
    Call,
    Work,
    apart,
    behind_text,
    parted,
    rank_works,
    signalled,
    unentered,
    unentered_text,
)  # fmt: skip
from hpnet.hang.model import MISMATCH_FIX, STUCK_FIX, Cause, ranks_text
from hpnet.hang.ranklog import DUMP_WAIT, TEARDOWN, RankError
from hpnet.hang.unhung import teardown_summary

__all__ = [
    "lines_summary",
    "rendezvous_missing",
    "watchdog_all_in",
    "watchdog_barrier",
    "watchdog_behind",
    "watchdog_mismatch",
    "watchdog_summary",
    "watchdog_unentered",
]


def _merged(known: RankError, new: RankError) -> RankError:
    """One rank's lines as one: each field from the line that has it."""
    fields = ("pg", "seq", "op", "numel_in", "last_enqueued", "last_completed")
    return dataclasses.replace(
        known,
        timeout=known.timeout or new.timeout,
        stack=known.stack or new.stack,
        **{
            f: getattr(known, f) if getattr(known, f) is not None else getattr(new, f)
            for f in fields
        },
    )


def _by_rank(errors: Sequence[RankError]) -> dict[int, RankError]:
    seen: dict[int, RankError] = {}
    for e in errors:
        if e.rank is not None and e.seq is not None:
            seen[e.rank] = _merged(seen[e.rank], e) if e.rank in seen else e
    return seen


def watchdog_summary(errors: Sequence[RankError], *, dumped: bool = True) -> str | None:
    """What the watchdog lines alone say: which ranks timed out in which collective, how
    far each had enqueued (a rank that enqueued past it entered it and waits), and, where
    some timed out at a later number of a group that not every line names, what they
    say of the others if it is one group. Without a Flight Recorder dump (not
    ``dumped``) it says what no dump shows.

    >>> e = RankError(rank=1, where="l:1", text="", timeout=True, peer_closed=False, seq=808,
    ...     op="allreduce", pg="0", last_enqueued=811, last_completed=807)
    >>> watchdog_summary([e, dataclasses.replace(e, rank=0)])  # doctest: +ELLIPSIS
    'ranks 0, 1 timed out in allreduce #808 of group 0; ranks 0, 1 had enqueued up to #811: ...'
    """
    seen = _by_rank(errors)
    if not seen:
        return _unranked(errors, dumped=dumped) or _unnumbered(errors, dumped=dumped)
    first = min(seen.values(), key=lambda e: (e.seq or 0, e.pg is None))
    # a line that names no group is of the first's where its number is the same
    at = sorted(r for r, e in seen.items() if e.seq == first.seq and e.pg in (None, first.pg))
    # a rank whose line is NCCL's error (its peer gone), not a timeout, failed in it
    gone = [seen[r].peer_closed and not seen[r].timeout for r in at]
    verb = "failed" if all(gone) else "timed out or failed" if any(gone) else "timed out"
    text = f"{ranks_text(at)} {verb} in {_work(first)}"
    if any(gone):
        text += " (NCCL: remote process exited or there was a network error)"
    ahead = sorted(r for r in at if (seen[r].last_enqueued or 0) > (first.seq or 0))
    if ahead:
        top = max(seen[r].last_enqueued or 0 for r in ahead)
        text += (
            f"; {ranks_text(ahead)} had enqueued up to #{top}: "
            + ("it entered it and waits" if len(ahead) == 1 else "they entered it and wait")
            + " for a peer"
        )
    inside = _inside(errors, first, at)
    if inside:
        text += (
            f"; {ranks_text(inside)} {'was' if len(inside) == 1 else 'were'} in it too when "
            f"told to dump (enqueued, #{(first.seq or 0) - 1} the last completed)"
        )
    called = [said for r in at if (said := called_from(r, seen[r].stack))]
    if called:
        text += f"; {called[0]}"
    told = [seen[r].last_completed for r in at if seen[r].last_completed is not None]
    if told and all(c == -1 for c in told):
        text += "; nothing had completed on the group yet (last completed -1)"
    # ranks that timed out elsewhere: another collective of the group, or another group
    others = sorted((e for r, e in seen.items() if r not in at), key=lambda e: e.seq or 0)
    for e in others[:3]:
        text += f"; rank {e.rank} in {_work(e)}"
    found = _apart(errors)
    if found is not None and (found[0].named or found[0].pg is not None):
        where = found[0]
        text += (
            f"; {_behind(where, seen)}"
            if where.named
            else f"; where the #{where.seq} of {ranks_text(where.ahead)} is of group "
            f"{where.pg} too (not every line names its group), {_behind(where, seen)}"
        )
        if not dumped:
            low = min(where.behind.values())
            text += f"; no Flight Recorder dump shows what each rank called at #{low}"
    elif not dumped:
        text += "; no Flight Recorder dump says which rank is behind"
    return text


def _inside(errors: Sequence[RankError], first: RankError, at: Sequence[int]) -> list[int]:
    """Ranks whose group status, when told to dump, shows them inside ``first``'s work:
    it enqueued, the one before it their last completed (the same group)."""
    seq = first.seq or 0
    return sorted(
        {
            e.rank
            for e in errors
            if e.rank is not None
            and e.rank not in at
            and e.seq is None
            and e.pg is not None
            and e.pg == first.pg
            and e.last_completed == seq - 1
            and (e.last_enqueued or 0) >= seq
        }
    )


def _unranked(errors: Sequence[RankError], *, dumped: bool) -> str | None:
    """Timeouts whose line names no job rank (no ``[rankN]:`` prefix, and a group other
    than the default one, whose ``Rank N`` is the rank within that group): the work,
    and where the line is, for the job's rank is not printed."""
    timed = [e for e in errors if e.timeout and e.seq is not None and e.rank is None]
    if not timed:
        return None
    first = min(timed, key=lambda e: e.seq or 0)
    text = (
        f"a rank whose job rank the line does not print ({first.where}) timed out in {_work(first)}"
    )
    if first.numel_in is not None:
        text += f" ({_elements(first.numel_in)})"
    if len(timed) > 1:
        text += f", and {len(timed) - 1} more such line(s)"
    return text if dumped else text + "; no Flight Recorder dump says which rank is behind"


def _unnumbered(errors: Sequence[RankError], *, dumped: bool) -> str | None:
    """Timeouts whose line shows no sequence number (a post that cut it: ``WorkNCCL(...,
    OpType=ALLREDUCE, ...``): who timed out in which op, no more."""
    cut = [e for e in errors if e.timeout and e.seq is None and e.op and e.rank is not None]
    if not cut:
        return None
    ranks = sorted({e.rank for e in cut if e.rank is not None})
    text = (
        f"{ranks_text(ranks)} timed out in {_text((cut[0].op or '', cut[0].numel_in))}; the "
        "line shows no sequence number or group"
    )
    return text if dumped else text + "; no Flight Recorder dump says which rank is behind"


def _single(errors: Sequence[RankError], minimum: int = 2) -> dict[int, Work] | None:
    """Each rank's one timed-out work, its group from the rank's other lines where the
    timeout line names none (:func:`hpnet.artefacts.parted.single_works`); a rank whose
    only line is its watchdog's status ("failure detected by watchdog at work sequence
    id: N") is at that work, its call not known."""
    works: dict[int, list[Work]] = {}
    for e in errors:
        if e.timeout and e.rank is not None and e.seq is not None:
            works.setdefault(e.rank, []).append((e.pg, e.seq, (e.op or "?", e.numel_in)))
    # the group is often on the line after the timeout: the status line, with its work
    stated = {
        rank: (e.pg, e.seq if e.last_completed is not None else None)
        for rank, e in _by_rank(errors).items()
    }
    return rank_works(works, stated, minimum)


def _apart(errors: Sequence[RankError]) -> tuple[Apart, dict[int, Work]] | None:
    """:func:`hpnet.artefacts.parted.apart` of the ranks' lines, unless a rank ahead says
    it had not completed the works the others wait in (its ``last completed``)."""
    single = _single(errors)
    completed = {r: e.last_completed for r, e in _by_rank(errors).items()}
    found = apart(single, completed) if single is not None else None
    return (found, single) if found is not None and single is not None else None


def _behind(found: Apart, seen: dict[int, RankError], *, enqueued: bool = True) -> str:
    last = {r: e.last_enqueued for r, e in seen.items()}
    return behind_text(found, last, never=enqueued)


def watchdog_behind(errors: Sequence[RankError]) -> Cause | None:
    """Ranks whose watchdogs timed out at a lower sequence number of one group than
    others, where every line names the group and the lower ranks never enqueued the
    higher number: they never entered it, and wait in a work the others completed
    (:func:`hpnet.artefacts.parted.apart`)."""
    found = _apart(errors)
    if found is None or not found[0].named:
        return None
    where, single = found
    seen = _by_rank(errors)
    if not all((e := seen[r].last_enqueued) is not None and e < where.seq for r in where.behind):
        return None
    top = single[where.ahead[0]][2]
    label = f"{top[0] if top[0] != '?' else 'collective'} #{where.seq} of group {where.pg}"
    summary = (
        f"{ranks_text(sorted(where.behind))} never entered {label}, in which "
        f"{ranks_text(where.ahead)} {'waits' if len(where.ahead) == 1 else 'wait'}: "
        + _behind(where, seen, enqueued=False)
    )
    low = min(where.behind.values())
    # each rank's timeout, and the line that says how far a rank behind had enqueued
    quoted = [
        next((e for e in errors if e.rank == r and e.timeout), seen[r]) for r in sorted(single)
    ]
    quoted += [
        e
        for e in errors
        if e.rank in where.behind and e.last_enqueued is not None and e not in quoted
    ][:1]
    return Cause(
        kind="never-entered", pg=where.pg or "", pg_desc="", seq=where.seq,
        collective=_text(top), ranks=tuple(sorted(where.behind)), waiting=where.ahead,
        evidence=tuple(f"{e.where}: {e.text}" for e in quoted)[:8], summary=summary,
        fix=f"compare what the ranks called at #{low}: a branch on the rank (or on data "
        "that differs between ranks) is a program bug (TORCH_DISTRIBUTED_DEBUG=DETAIL checks "
        "each collective's op and sizes across ranks); a Flight Recorder dump of every rank "
        "(TORCH_NCCL_DUMP_ON_TIMEOUT=1) shows each rank's own #" + str(low),
    )  # fmt: skip


def watchdog_all_in(errors: Sequence[RankError], world: int | None, *, logs: bool) -> Cause | None:
    """Every rank of the job (``world``: --world, or by NCCL's ``logs``, whose group the lines
    must then name) timed out in one work of the default group, having enqueued it, and none
    lost a peer: none is behind; the collective itself is stuck (the network, or a GPU)."""
    seen, single = _by_rank(errors), _single(errors, minimum=1)
    if world is None or single is None or set(single) != set(range(world)):
        return None
    works = {(pg or ("" if logs else "0"), seq, call) for pg, seq, call in single.values()}
    if len(works) != 1 or any(not seen[r].timeout or seen[r].peer_closed for r in single):
        return None
    pg, seq, call = works.pop()
    if pg != "0" or any((e := seen[r].last_enqueued) is not None and e < seq for r in single):
        return None
    quoted = [next((e for e in errors if e.rank == r and e.timeout), seen[r]) for r in single]
    size = "the size of NCCL's one communicator of them all" if logs else "--world"
    return Cause(
        kind="stuck-in-collective", pg=pg, pg_desc="", seq=seq, collective=_text(call),
        ranks=tuple(range(world)), waiting=(),
        evidence=tuple(f"{e.where}: {e.text}" for e in quoted)[:8],
        summary=f"every rank of the job ({world}, {size}) timed out in "
        f"{call[0] if call[0] != '?' else 'collective'} #{seq} of group {pg}, having "
        "enqueued it: none is behind, and none completed it",
        fix=STUCK_FIX,
    )  # fmt: skip


def watchdog_unentered(errors: Sequence[RankError]) -> Cause | None:
    """Ranks that timed out in one work of a group, and others whose status of that group,
    when told to dump ("Received a dump signal ... Last enqueued NCCL work: E"), shows
    they never enqueued it (:func:`hpnet.artefacts.parted.unentered`)."""
    single = _single(errors, minimum=1)
    found = unentered(single, signalled(errors)) if single is not None else None
    if found is None or single is None:
        return None
    call = single[found.waiting[0]][2]
    label = f"{call[0] if call[0] != '?' else 'collective'} #{found.seq} of group {found.pg}"
    waits = "waits" if len(found.waiting) == 1 else "wait"
    summary = (
        f"{ranks_text(sorted(found.ranks))} never entered {label}, in which "
        f"{ranks_text(found.waiting)} {waits}: {unentered_text(found)}"
    )
    quoted = [next(e for e in errors if e.rank == r and e.timeout) for r in found.waiting]
    quoted += [next(e for e in errors if e.rank == r and e.seq is None) for r in found.ranks]
    return Cause(
        kind="never-entered", pg=found.pg, pg_desc="", seq=found.seq, collective=_text(call),
        ranks=tuple(sorted(found.ranks)), waiting=found.waiting,
        evidence=tuple(f"{e.where}: {e.text}" for e in quoted)[:8], summary=summary,
        fix=f"see where rank(s) {', '.join(map(str, sorted(found.ranks)))} were instead of "
        f"#{found.seq}: a branch on the rank (or on data that differs between ranks) is a "
        "program bug; a Flight Recorder dump of every rank (TORCH_NCCL_DUMP_ON_TIMEOUT=1) and "
        "py-spy dump on a rank that waits outside NCCL show where",
    )  # fmt: skip


def watchdog_mismatch(errors: Sequence[RankError], ranks: Sequence[int]) -> Cause | None:
    """Ranks whose watchdogs timed out at the same sequence number of one group in
    different collectives (another op, or another element count): their programs parted
    before it, by the rule ``hpnet verify`` applies (:mod:`hpnet.artefacts.parted`). The
    ranks unlike the others are named only when the side they parted from is most of the
    job's ``ranks`` (so the ranks whose lines are not shown cannot outvote it); else every
    side is named."""
    single = _single(errors)
    found = parted(single) if single is not None else []
    if single is None or not found:
        return None
    seq, calls = found[0]
    (top, count), *rest = Counter(calls.values()).most_common()
    # the side most ranks took is the group's only if no unseen ranks could outvote it
    majority = rest[0][1] < count and 2 * count > len(ranks)
    named = sorted(r for r, call in calls.items() if not majority or call != top)
    pg = next((single[r][0] for r in calls if single[r][0] is not None), None)
    sides: dict[Call, list[int]] = {}
    for r, call in calls.items():
        sides.setdefault(call, []).append(r)
    said = "; ".join(f"{ranks_text(rs)} {_text(call)}" for call, rs in sides.items())
    where = f"#{seq}" + (f" of group {pg}" if pg else "")
    summary = (
        f"{ranks_text(named)} called another collective than the group's other ranks at "
        f"{where}: {said}"
        if majority
        else f"the ranks called different collectives at {where}: {said} ({len(calls)} of "
        f"at least {len(ranks)} ranks say so: which side is wrong is not shown)"
    )
    order = sorted(calls, key=lambda r: (calls[r] == top, r))
    quoted = {r: next(e for e in errors if e.rank == r and e.timeout) for r in calls}
    return Cause(
        kind="mismatch", pg=pg or "", pg_desc="", seq=seq, collective=_text(top),
        ranks=tuple(named), waiting=(), majority=majority, fix=MISMATCH_FIX,
        evidence=tuple(f"{quoted[r].where}: {quoted[r].text}" for r in order)[:8],
        summary=summary,
    )  # fmt: skip


def _text(call: Call) -> str:
    """A call as the verdict says it: the op, and its element count where known."""
    op, numel = call
    return op if numel is None else f"{op} ({_elements(numel)})"


def _elements(numel: int) -> str:
    return f"{numel} element{'' if numel == 1 else 's'}"


def _work(error: RankError) -> str:
    where = f" of group {error.pg}" if error.pg else ""
    return f"{error.op or 'collective'} #{error.seq}{where}"


def watchdog_barrier(errors: Sequence[RankError]) -> Cause | None:
    """Ranks a monitored barrier says did not pass it: torch's own verdict, rank 0's
    (ProcessGroupGloo::monitoredBarrier; TORCH_DISTRIBUTED_DEBUG=DETAIL runs one before
    every collective). A rank that did not answer in time, or whose connection broke
    first (a process gone fails it at once), is where the job stopped."""
    lines = [e for e in errors if e.barrier]
    if not lines:
        return None
    failed = tuple(sorted({r for e in lines for r in e.barrier}))
    monitors = tuple(sorted({e.rank for e in lines if e.rank is not None}))
    who = ranks_text(list(failed))
    by = f" {ranks_text(list(monitors))} ran" if monitors else ""
    they, their = ("it", "its") if len(failed) == 1 else ("they", "their")
    return Cause(
        kind="barrier", pg="", pg_desc="", seq=0, collective="monitored barrier",
        ranks=failed, waiting=monitors,
        evidence=tuple(f"{e.where}: {e.text}" for e in lines)[:8],
        summary=f"{who} failed to pass the monitored barrier{by} (torch's check that every "
        "rank arrived, TORCH_DISTRIBUTED_DEBUG=DETAIL runs one before each collective): "
        f"{they} never arrived in time, or {their} process was gone (a broken connection "
        "fails it at once)",
        fix=f"read the log of {who} for what stopped it (an exception, an out-of-memory "
        "kill, a branch that skips the collective); `py-spy dump` on a live process shows "
        "where it waits",
    )  # fmt: skip


def lines_summary(errors: Sequence[RankError]) -> str:
    """Error lines that name no collective, where no dump was given: what the first
    says, and whose it is.

    >>> e = RankError(rank=None, where="l:1", text="", timeout=False, peer_closed=False,
    ...     mismatch=True)
    >>> lines_summary([e])  # doctest: +ELLIPSIS
    "a rank the lines do not name: the ranks' collectives did not match (l:1); ..."
    """
    if all(TEARDOWN.search(e.text) or DUMP_WAIT.search(e.text) for e in errors):
        return teardown_summary(errors)
    first = next((e for e in errors if not e.random_id), errors[0])
    said = (
        "the ranks' collectives did not match"
        if first.mismatch
        else "a peer's connection closed"
        if first.peer_closed
        else "the process group could not be made"
        if first.init
        else "an operation timed out"
        if first.timeout
        else "an error"
    )
    said = _status(first) or said
    ranks = sorted({e.rank for e in errors if e.rank is not None})
    who = ranks_text(ranks) if ranks else "a rank the lines do not name"
    if labels := _sglang_watchdogs(errors):  # SGLang names its ranks in its prefix
        who, said = ", ".join(labels), "SGLang's scheduler watchdog fired: a forward batch stalled"
    more = f", and {len(errors) - 1} more line(s)" if len(errors) > 1 else ""
    return (
        f"{who}: {said} ({first.where}{more}); no Flight Recorder dump says which "
        "collective, or which rank is behind"
    )


def _status(error: RankError) -> str | None:
    """What a group's status line, printed when its rank was told to dump, says: the
    works it had enqueued and completed; where the signal came from its own watchdog
    ("due to a collective timeout from this local rank", 2.5.1 on), the first work not
    completed is the one that timed out (a group's works complete in order).

    >>> e = RankError(rank=1, where="l:2", text="Received a dump signal due to a collective "
    ...     "timeout from this local rank", timeout=False, peer_closed=False, pg="0",
    ...     last_enqueued=427698, last_completed=427697)
    >>> _status(e)  # doctest: +ELLIPSIS
    'its own watchdog found a collective of group 0 timed out: #427698, its last enqueued, ...'
    """
    done, queued = error.last_completed, error.last_enqueued
    if error.seq is not None or done is None or queued is None:
        return None
    group = f" of group {error.pg}" if error.pg is not None else ""
    if "collective timeout from this local rank" in error.text and queued > done:
        last = ", its last enqueued," if queued == done + 1 else f" (enqueued up to #{queued})"
        return (
            f"its own watchdog found a collective{group} timed out: #{done + 1}{last} had not "
            "completed"
        )
    told = "told to dump"
    if found := _SIGNAL_FROM.search(error.text):  # "from  rank 2": the rank that timed out
        told += f" on rank {found.group(1)}'s timeout"
    if queued == done:
        return f"{told}, it had completed every work it enqueued{group} (#{done})"
    return f"{told}, it had enqueued up to #{queued}{group} and completed #{done}"


#: the rank whose timeout a dump signal came from (torch 2.5.1 on)
_SIGNAL_FROM = re.compile(r"dump signal due to a collective timeout from\s+rank (\d+)")


#: SGLang's logging prefix (``[2025-07-11 17:40:14 DP0 TP2] ``) and its watchdog's line
_SGLANG = re.compile(
    r"\[\d{4}-\d\d-\d\d [\d:]+ ((?:[A-Z]+\d+ ?)+)\] (?:Scheduler w|W)atchdog timeout"
)


def _sglang_watchdogs(errors: Sequence[RankError]) -> list[str]:
    """The ranks (``DP0 TP2``) whose SGLang scheduler watchdog fired."""
    return list(dict.fromkeys(m.group(1).strip() for e in errors if (m := _SGLANG.search(e.text))))


def rendezvous_missing(errors: Sequence[RankError]) -> Cause | None:
    """XLA's participants that never arrived at a rendezvous the others wait at: those
    it expects (every device of the key, where all are this process's; ids 0..N-1) less
    those whose wait is in the lines. Only where the lines name each waiting
    participant, and no line says a waiter went on ("Thread is unstuck!"); the first
    such rendezvous."""
    if any(e.rendezvous == "" for e in errors):  # XLA: a waiter went on after all
        return None
    waits: dict[str, list[RankError]] = {}
    for e in errors:
        if e.rendezvous is not None and e.participant is not None and e.participants:
            waits.setdefault(e.rendezvous, []).append(e)
    for key, lines in waits.items():
        waiting = sorted({e.participant for e in lines if e.participant is not None})
        expected = sorted({p for e in lines for p in e.participants})
        missing = [p for p in expected if p not in waiting]
        if not missing or len(missing) == len(expected):
            continue
        kind = "device ordinal" if "RendezvousKey" in lines[0].text else "participant"
        names = ", ".join(map(str, missing))
        them = ", ".join(map(str, waiting))
        plural = "s" if len(missing) > 1 else ""
        return Cause(
            kind="never-entered", pg="", pg_desc="", seq=0, collective=f"rendezvous {key}",
            ranks=tuple(missing), waiting=tuple(waiting),
            evidence=tuple(f"{e.where}: {e.text}" for e in lines)[:8],
            summary=f"XLA's {kind}{plural} {names} never arrived at the rendezvous of {key}, "
            f"where {kind}s {them} wait (XLA warns once a participant has waited past its "
            "limit): the missing one is busy elsewhere, stuck before it, or runs another "
            "program",
            fix=f"see what {kind}{plural} {names} did instead: a stack of its thread "
            "(py-spy dump --native) and XLA's dump of the program (XLA_FLAGS=--xla_dump_to) "
            "show where it is",
        )  # fmt: skip
    return None
