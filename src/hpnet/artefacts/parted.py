"""Where the ranks PyTorch's watchdog caught part: one rule for ``hpnet verify``
(:mod:`hpnet.artefacts.judge`) and ``hpnet hang`` (:mod:`hpnet.hang.watchdog`), so that
the two commands give the same answer on the same lines.

Each rank's timed-out work is (group, sequence number, call), a call being the op and the
element count (``NumelIn``) where the line says it. Ranks are compared only when at least
two timed out and each in one work: a rank caught in several works (several groups) is
not comparable by sequence number alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

__all__ = [
    "P2P_OPS", "UNEVEN_OPS", "Apart", "Call", "Unentered", "Work", "apart", "behind_text",
    "parted", "rank_works", "ranks_named", "signalled", "single_works", "unentered",
    "unentered_text",
]  # fmt: skip

#: a collective as the ranks are compared by it: its op, its input element count
Call = tuple[str, int | None]
#: a timed-out work: its group (None where the line names none), sequence number, call
Work = tuple[str | None, int, Call]


#: point-to-point ops: torch numbers them apart from the collectives (its ``seqP2P_``:
#: 2.6's ``initWork(..., isP2P ? seqP2P_ : seqCollective_)``), so their sequence numbers
#: are not compared with a collective's
P2P_OPS = frozenset({"SEND", "RECV", "RECVANYSOURCE"})
#: ops whose input size may differ from rank to rank by design (uneven split sizes:
#: ProcessGroupNCCL's ``checkSplitSizes`` checks each rank's own sums only): their
#: sizes are not compared, their op is
UNEVEN_OPS = frozenset({"ALLTOALL", "ALLTOALL_BASE"})


def single_works(works: Mapping[int, Sequence[Work]], minimum: int = 2) -> dict[int, Work] | None:
    """Each rank's one timed-out work (the first line's, where lines repeat it), or None
    when fewer than ``minimum`` ranks timed out, a rank timed out at several numbers, or in a
    send or receive (:data:`P2P_OPS`, or a COALESCED work without its size); an op whose
    sizes may differ by design (:data:`UNEVEN_OPS`) is compared without its size.

    >>> single_works({0: [(None, 5, ("REDUCE", None))], 1: [("0", 5, ("BROADCAST", 9))]})
    {0: (None, 5, ('REDUCE', None)), 1: ('0', 5, ('BROADCAST', 9))}
    >>> single_works({0: [(None, 5, ("REDUCE", None)), (None, 6, ("REDUCE", None))],
    ...               1: [(None, 5, ("REDUCE", None))]}) is None
    True
    >>> single_works({0: [(None, 5, ("SEND", None))], 1: [(None, 5, ("ALLREDUCE", None))]}) is None
    True
    >>> single_works({0: [(None, 5, ("ALLTOALL_BASE", 8))], 1: [(None, 5, ("ALLTOALL_BASE", 6))]})
    {0: (None, 5, ('ALLTOALL_BASE', None)), 1: (None, 5, ('ALLTOALL_BASE', None))}
    """
    if len(works) < minimum or any(not w or len({s for _, s, _ in w}) > 1 for w in works.values()):
        return None
    if any(_p2p(call) for w in works.values() for _, _, call in w):
        return None
    return {rank: _compared(w[0]) for rank, w in works.items()}


def _p2p(call: Call) -> bool:
    """A send or receive, or a COALESCED work without its size: a batch of sends and
    receives (``batch_isend_irecv``) is one, numbered apart from 2.6 on; a coalesced
    collective (``collectiveCoalesced``) states its first tensor's size. A size of 0
    (NeMo-RL #2140, a pipeline group's first work) tells neither apart."""
    op, numel = call
    name = op.upper().lstrip("_")
    return name in P2P_OPS or (name == "COALESCED" and not numel)


def _compared(work: Work) -> Work:
    """The work as ranks are compared by it: no size where sizes may differ by design."""
    pg, seq, (op, _) = work
    return (pg, seq, (op, None)) if op.upper().lstrip("_") in UNEVEN_OPS else work


def rank_works(
    timed_out: Mapping[int, Sequence[Work]],
    stated: Mapping[int, tuple[str | None, int | None]],
    minimum: int = 2,
) -> dict[int, Work] | None:
    """:func:`single_works` of the ranks' timed-out works, joined with what each rank's
    watchdog status line says (``stated``: rank -> its group, and the work it names):
    a timeout line names no group, the status line after it does; a rank with a status
    line alone stands at its work, its call not known (``?``).

    >>> rank_works({5: [(None, 8, ("ALLREDUCE", 1))]}, {5: ("1", 8), 7: ("1", 7)})
    {5: ('1', 8, ('ALLREDUCE', 1)), 7: ('1', 7, ('?', None))}
    """
    works = {
        rank: [
            (pg if pg is not None or rank not in stated else stated[rank][0], seq, call)
            for pg, seq, call in listed
        ]
        for rank, listed in timed_out.items()
    }
    for rank, (pg, seq) in stated.items():
        if rank not in works and seq is not None:
            works[rank] = [(pg, seq, ("?", None))]
    return single_works(works, minimum)


def parted(single: Mapping[int, Work]) -> list[tuple[int, dict[int, Call]]]:
    """Each sequence number at which ranks timed out in different calls, lowest first,
    with each rank's call there: a mismatch, the ranks' programs parted before it. A
    number at which the ranks name different groups is not one collective, and skipped;
    a rank whose call is not known (op ``?``: only its status line names the work) is
    not compared.

    >>> parted({0: (None, 7, ("REDUCE", None)), 1: (None, 7, ("_ALLGATHER_BASE", None)),
    ...         5: (None, 7, ("_ALLGATHER_BASE", None))})
    [(7, {0: ('REDUCE', None), 1: ('_ALLGATHER_BASE', None), 5: ('_ALLGATHER_BASE', None)})]
    """
    found = []
    for seq in sorted({seq for _, seq, _ in single.values()}):
        at = {rank: work for rank, work in single.items() if work[1] == seq}
        if len({pg for pg, _, _ in at.values()} - {None}) > 1:
            continue
        calls = {rank: call for rank, (_, _, call) in sorted(at.items()) if call[0] != "?"}
        if len(set(calls.values())) > 1:
            found.append((seq, calls))
    return found


class Apart(NamedTuple):
    """Ranks whose watchdogs timed out at different sequence numbers (:func:`apart`)."""

    #: the highest number a rank timed out at
    seq: int
    #: the ranks that timed out there: each completed every work of the group before it
    ahead: tuple[int, ...]
    #: every other rank, with the lower number it timed out at (and waits in)
    behind: dict[int, int]
    #: the group the lines name, if any
    pg: str | None
    #: every rank's line names that group (else some name none: "where it is one group")
    named: bool


def apart(
    single: Mapping[int, Work], last_completed: Mapping[int, int | None] | None = None
) -> Apart | None:
    """Where the ranks timed out at different numbers of one group, which are ahead.

    A rank's watchdog checks its works oldest first and drops each once completed
    (ProcessGroupNCCL.cpp: the loop over ``workMetaList_`` from its ``begin()``, each
    work's ``checkTimeout()``; so in torch 1.x's ``workCleanupLoop`` and 2.x's watchdog),
    and a work's timer starts when it is enqueued, with the group's one timeout: a rank
    that timed out at #m had completed its every earlier work. So the ranks ahead
    completed the works the others wait in. None where all stand at one number, the
    lines name different groups (their numbers are not comparable), or a rank ahead
    says it had not completed them (its ``last_completed``, where a line states it).

    >>> apart({0: ("1", 1516, ("ALLREDUCE", 25427968)), 1: (None, 1517, ("ALLREDUCE", 1))})
    Apart(seq=1517, ahead=(1,), behind={0: 1516}, pg='1', named=False)
    """
    seqs = sorted({seq for _, seq, _ in single.values()})
    groups = {pg for pg, _, _ in single.values()} - {None}
    if len(seqs) < 2 or len(groups) > 1:
        return None
    top = seqs[-1]
    ahead = tuple(sorted(r for r, (_, seq, _) in single.items() if seq == top))
    told = last_completed or {}
    if any((told.get(r) or seqs[-2]) < seqs[-2] for r in ahead):
        return None
    return Apart(
        seq=top,
        ahead=ahead,
        behind={r: seq for r, (_, seq, _) in sorted(single.items()) if seq != top},
        pg=next(iter(groups), None),
        named=all(pg is not None for pg, _, _ in single.values()),
    )


def behind_text(found: Apart, last_enqueued: Mapping[int, int | None], *, never: bool) -> str:
    """What the ranks ahead say of those behind, as both commands say it; with ``never``,
    also which ranks behind never enqueued the later number (their ``last enqueued``).

    >>> behind_text(apart({0: ("1", 6, ("ALLREDUCE", 9)), 1: ("1", 7, ("ALLREDUCE", 1))}),
    ...             {0: 6}, never=True)  # doctest: +NORMALIZE_WHITESPACE
    "rank 1 completed #6, which rank 0 did not (and never enqueued #7): rank 0 is behind,
    its #6 unlike rank 1's (another op or size: NCCL lets the smaller side finish) or
    stalled or failed on its side alone"
    """
    ahead = ranks_named(found.ahead)
    parts = []
    for seq in sorted(set(found.behind.values())):
        ranks = [r for r, s in found.behind.items() if s == seq]
        told = [last_enqueued.get(r) for r in ranks]
        unsent = never and all(e is not None and e < found.seq for e in told)
        parts.append(
            f"{ahead} completed #{seq}, which {ranks_named(ranks)} did not"
            + (f" (and never enqueued #{found.seq})" if unsent else "")
        )
    behind = sorted(found.behind)
    one = len(behind) == 1
    its = "its" if one else "their"
    return (
        "; ".join(parts) + f": {ranks_named(behind)} {'is' if one else 'are'} behind, {its} "
        f"#{min(found.behind.values())} unlike {ahead}'s (another op or size: NCCL lets the "
        f"smaller side finish) or stalled or failed on {its} side alone"
    )


def ranks_named(ranks: Sequence[int]) -> str:
    """``rank 3``, ``ranks 0, 2``."""
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


class Unentered(NamedTuple):
    """Ranks whose group's status, when they were told to dump, shows they never
    enqueued the work the others timed out in (:func:`unentered`)."""

    seq: int
    pg: str
    #: the ranks that timed out in it
    waiting: tuple[int, ...]
    #: the others: their last enqueued and last completed work of the group
    ranks: dict[int, tuple[int, int]]


class Status(Protocol):
    """A rank's line as both commands read it (hang's RankError, verify's TorchEvent)."""

    @property
    def rank(self) -> int | None: ...
    @property
    def pg(self) -> str | None: ...
    @property
    def seq(self) -> int | None: ...
    @property
    def last_enqueued(self) -> int | None: ...
    @property
    def last_completed(self) -> int | None: ...


def signalled(lines: Iterable[Status]) -> dict[int, tuple[str | None, int, int]]:
    """Each rank's group status that names no work (the dump signal's): rank -> group,
    last enqueued, last completed, for :func:`unentered`."""
    return {
        line.rank: (line.pg, line.last_enqueued, line.last_completed)
        for line in lines
        if line.rank is not None and line.seq is None and line.last_enqueued is not None
        and line.last_completed is not None
    }  # fmt: skip


def unentered(
    single: Mapping[int, Work], signalled: Mapping[int, tuple[str | None, int, int]]
) -> Unentered | None:
    """Where every rank that timed out did so in one work of a named group, and another
    rank's status of that group (``signalled``: rank -> group, last enqueued, last
    completed, as its "Received a dump signal" line says) shows it had not enqueued that
    work when told to dump, after the others had waited their whole timeout in it: that
    rank never entered it. A status of another group says nothing of this one.

    >>> unentered({1: ("0", 2, ("ALLREDUCE", 1024))}, {0: ("0", 1, 1), 5: ("1", 0, 0)})
    Unentered(seq=2, pg='0', waiting=(1,), ranks={0: (1, 1)})
    """
    works = {(pg, seq) for pg, seq, _ in single.values()}
    if len(works) != 1:
        return None
    ((pg, seq),) = works
    if pg is None:
        return None
    ranks = {
        rank: (enqueued, completed)
        for rank, (group, enqueued, completed) in sorted(signalled.items())
        if group == pg and rank not in single and enqueued < seq
    }
    if not ranks:
        return None
    return Unentered(seq=seq, pg=pg, waiting=tuple(sorted(single)), ranks=ranks)


def unentered_text(found: Unentered) -> str:
    """What both commands say of it: where each rank stood instead.

    >>> unentered_text(Unentered(seq=2, pg="0", waiting=(1,), ranks={0: (1, 1), 3: (1, 0)}))
    ... # doctest: +NORMALIZE_WHITESPACE
    'rank 0 had enqueued up to #1 and completed it (its program had not called #2: it waits
    outside NCCL); rank 3 had enqueued up to #1 and completed none of them (it waits in #1,
    which rank 1 completed)'
    """
    said = []
    for rank, (enqueued, completed) in found.ranks.items():
        if completed >= enqueued:
            said.append(
                f"rank {rank} had enqueued up to #{enqueued} and completed it (its program had "
                f"not called #{found.seq}: it waits outside NCCL)"
            )
        else:
            done = f"#{completed}" if completed > 0 else "none of them"
            said.append(
                f"rank {rank} had enqueued up to #{enqueued} and completed {done} (it waits "
                f"in #{completed + 1}, which {ranks_named(found.waiting)} completed)"
            )
    return "; ".join(said)
