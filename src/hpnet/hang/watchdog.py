"""What PyTorch's watchdog lines alone say about a stuck job: who timed out in which
collective, and whether the ranks timed out in different collectives at the same
sequence number (a mismatch: their programs parted). ``hpnet verify`` reads the same
lines to the same conclusion (:func:`hpnet.artefacts.judge._ranks_apart`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from hpnet.hang.model import MISMATCH_FIX, Cause, ranks_text
from hpnet.hang.ranklog import RankError

__all__ = ["watchdog_mismatch", "watchdog_summary"]


def _merged(known: RankError, new: RankError) -> RankError:
    """One rank's lines as one: each field from the line that has it."""
    fields = ("pg", "seq", "op", "numel_in", "last_enqueued", "last_completed")
    return dataclasses.replace(
        known,
        timeout=known.timeout or new.timeout,
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


def watchdog_summary(errors: Sequence[RankError]) -> str | None:
    """What the watchdog lines alone say: which ranks timed out in which collective, and
    how far each had enqueued (a rank that enqueued past it entered it and waits).

    >>> e = RankError(rank=1, where="l:1", text="", timeout=True, peer_closed=False, seq=808,
    ...     op="allreduce", pg="0", last_enqueued=811, last_completed=807)
    >>> watchdog_summary([e, dataclasses.replace(e, rank=0)])  # doctest: +ELLIPSIS
    'ranks 0, 1 timed out in allreduce #808 of group 0; ranks 0, 1 had enqueued up to #811: ...'
    """
    seen = _by_rank(errors)
    if not seen:
        return None
    first = min(seen.values(), key=lambda e: (e.seq or 0, e.pg is None))
    # a line that names no group is of the first's where its number is the same
    at = sorted(r for r, e in seen.items() if e.seq == first.seq and e.pg in (None, first.pg))
    text = f"{ranks_text(at)} timed out in {_work(first)}"
    ahead = sorted(r for r in at if (seen[r].last_enqueued or 0) > (first.seq or 0))
    if ahead:
        top = max(seen[r].last_enqueued or 0 for r in ahead)
        text += (
            f"; {ranks_text(ahead)} had enqueued up to #{top}: they entered it and wait for a peer"
        )
    told = [seen[r].last_completed for r in at if seen[r].last_completed is not None]
    if told and all(c == -1 for c in told):
        text += "; nothing had completed on the group yet (last completed -1)"
    # ranks that timed out elsewhere: another collective of the group, or another group
    others = sorted((e for r, e in seen.items() if r not in at), key=lambda e: e.seq or 0)
    for e in others[:3]:
        text += f"; rank {e.rank} in {_work(e)}"
    return text


def watchdog_mismatch(errors: Sequence[RankError], ranks: Sequence[int]) -> Cause | None:
    """Ranks whose watchdogs timed out at the same sequence number of one group in
    different collectives (another op, or another element count): their programs parted
    before it. The ranks unlike the others are named only when those that say so are
    most of the job's ``ranks`` and agree; else every side is named.

    Compared, as ``hpnet verify`` compares them: ranks with one timed-out work each (a
    rank timed out in several groups is not), at least two of them.
    """
    timeouts = [e for e in errors if e.timeout and e.rank is not None and e.seq is not None]
    works: dict[int, set[tuple[str | None, int | None]]] = {}
    for e in timeouts:
        works.setdefault(e.rank, set()).add((e.pg, e.seq))  # type: ignore[arg-type]
    if len(works) < 2 or any(len({seq for _, seq in w}) > 1 for w in works.values()):
        return None
    # each rank's lines as one (the group is often on the line after the timeout)
    seen = {r: e for r, e in _by_rank(errors).items() if r in works}
    for seq in sorted({e.seq or 0 for e in seen.values()}):
        at = {r: e for r, e in seen.items() if e.seq == seq}
        if len({e.pg for e in at.values()} - {None}) > 1:
            continue  # the same number in two groups: not one collective
        calls = Counter(_call(e) for e in at.values())
        if len(calls) < 2:
            continue
        (top, count), *rest = calls.most_common()
        majority = rest[0][1] < count and 2 * len(at) > len(ranks)
        named = sorted(r for r, e in at.items() if not majority or _call(e) != top)
        pg = next((e.pg for e in at.values() if e.pg is not None), None)
        order = sorted(at, key=lambda r: (_call(at[r]) == top, r))
        sides: dict[str, list[int]] = {}
        for r in sorted(at):
            sides.setdefault(_call(at[r]), []).append(r)
        said = "; ".join(f"{ranks_text(rs)} {call}" for call, rs in sides.items())
        where = f"#{seq}" + (f" of group {pg}" if pg else "")
        summary = (
            f"{ranks_text(named)} called another collective than the group's other ranks at "
            f"{where}: {said}"
            if majority
            else f"the ranks called different collectives at {where}: {said} ({len(at)} of "
            f"at least {len(ranks)} ranks say so: which side is wrong is not shown)"
        )
        return Cause(
            kind="mismatch", pg=pg or "", pg_desc="", seq=seq, collective=top,
            ranks=tuple(named), waiting=(), majority=majority, fix=MISMATCH_FIX,
            evidence=tuple(f"{at[r].where}: {at[r].text}" for r in order)[:8], summary=summary,
        )  # fmt: skip
    return None


def _call(error: RankError) -> str:
    """A timed-out work as compared: its op, and its element count where the line says."""
    op = error.op or "collective"
    return op if error.numel_in is None else f"{op} ({error.numel_in} elements)"


def _work(error: RankError) -> str:
    where = f" of group {error.pg}" if error.pg else ""
    return f"{error.op or 'collective'} #{error.seq}{where}"
