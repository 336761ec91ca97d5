"""Where the ranks PyTorch's watchdog caught part: one rule for ``hpnet verify``
(:mod:`hpnet.artefacts.judge`) and ``hpnet hang`` (:mod:`hpnet.hang.watchdog`), so that
the two commands give the same answer on the same lines.

Each rank's timed-out work is (group, sequence number, call), a call being the op and the
element count (``NumelIn``) where the line says it. Ranks are compared only when at least
two timed out and each in one work: a rank caught in several works (several groups) is
not comparable by sequence number alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["Call", "Work", "parted", "single_works"]

#: a collective as the ranks are compared by it: its op, its input element count
Call = tuple[str, int | None]
#: a timed-out work: its group (None where the line names none), sequence number, call
Work = tuple[str | None, int, Call]


def single_works(works: Mapping[int, Sequence[Work]]) -> dict[int, Work] | None:
    """Each rank's one timed-out work (the first line's, where lines repeat it), or None
    when fewer than two ranks timed out or a rank timed out at several numbers.

    >>> single_works({0: [(None, 5, ("REDUCE", None))], 1: [("0", 5, ("BROADCAST", 9))]})
    {0: (None, 5, ('REDUCE', None)), 1: ('0', 5, ('BROADCAST', 9))}
    >>> single_works({0: [(None, 5, ("REDUCE", None)), (None, 6, ("REDUCE", None))],
    ...               1: [(None, 5, ("REDUCE", None))]}) is None
    True
    """
    if len(works) < 2 or any(not w or len({seq for _, seq, _ in w}) > 1 for w in works.values()):
        return None
    return {rank: w[0] for rank, w in works.items()}


def parted(single: Mapping[int, Work]) -> list[tuple[int, dict[int, Call]]]:
    """Each sequence number at which ranks timed out in different calls, lowest first,
    with each rank's call there: a mismatch, the ranks' programs parted before it. A
    number at which the ranks name different groups is not one collective, and skipped.

    >>> parted({0: (None, 7, ("REDUCE", None)), 1: (None, 7, ("_ALLGATHER_BASE", None)),
    ...         5: (None, 7, ("_ALLGATHER_BASE", None))})
    [(7, {0: ('REDUCE', None), 1: ('_ALLGATHER_BASE', None), 5: ('_ALLGATHER_BASE', None)})]
    """
    found = []
    for seq in sorted({seq for _, seq, _ in single.values()}):
        at = {rank: work for rank, work in single.items() if work[1] == seq}
        if len({pg for pg, _, _ in at.values()} - {None}) > 1:
            continue
        calls = {rank: call for rank, (_, _, call) in sorted(at.items())}
        if len(set(calls.values())) > 1:
            found.append((seq, calls))
    return found
