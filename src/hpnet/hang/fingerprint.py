"""torch's collective fingerprint check (``TORCH_DISTRIBUTED_DEBUG=DETAIL``), read for
what it proves about the ranks it compared.

Before each collective, ProcessGroupWrapper all-gathers every rank's fingerprint (op,
sequence number, tensors) over a gloo group and compares them with its own
(torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp, ``verify_tensors``): first their
lengths, then their values, rank 0 first, and raises at the first rank that differs:

    Detected mismatch between collectives on ranks. Rank 13 is running collective:
    CollectiveFingerPrint(SequenceNumber=17OpType=BARRIER), but Rank 0 is running
    collective: CollectiveFingerPrint(SequenceNumber=45OpType=BARRIER).

So the line's first rank is the one that checked, the second is the lowest rank unlike
it, and every rank below that one is like it. A fingerprint is 3 values (op, sequence
number, number of tensors) and more per tensor; where the lengths differ, the first
comparison fails and torch prints the other rank's *length* read as a fingerprint: its
op is the length as an ``OpType`` (3 is REDUCE), its sequence number 0, no tensors. That
rank's own op and sequence number are then not in the line at all
(:func:`hpnet.hang.ranklog.read_errors` reads the line into ``versus_*``).
"""

from __future__ import annotations

from collections.abc import Sequence

from hpnet.hang.model import MISMATCH_FIX, Cause, ranks_text
from hpnet.hang.ranklog import OP_TYPES, RankError

__all__ = ["fingerprint_mismatch"]


def _collective(op: str | None, seq: int | None, numel: int | None) -> str:
    size = f" ({numel} element{'' if numel == 1 else 's'})" if numel is not None else ""
    number = f" #{seq}" if seq is not None else ""  # torch 2.0's fingerprints hold none
    return f"{op}{number}{size}"


def _theirs(error: RankError) -> str:
    """The other rank's collective, as far as the line shows it."""
    values = error.versus_values
    if values is not None:
        # a fingerprint is its op, its number (from torch 2.1) and its tensors' count
        # before the tensors: a collective without tensors holds only those
        bare = 3 if error.seq is not None else 2
        printed = f"{OP_TYPES[values]} #0" if error.seq is not None else OP_TYPES[values]
        return (
            f"rank {error.versus}'s fingerprint holds {values} values"
            + (", a collective without tensors" if values == bare else "")
            + f": its op and number are not in the line (torch printed that length as "
            f"{printed})"
        )
    said = f"rank {error.versus} at " + _collective(
        error.versus_op, error.versus_seq, error.versus_numel_in
    )
    if error.versus_op == error.op and error.versus_seq is not None and error.seq is not None:
        apart = abs(error.versus_seq - error.seq)
        said += f" ({apart} collective{'s' if apart != 1 else ''} apart)" if apart else ""
    return said


def fingerprint_mismatch(errors: Sequence[RankError]) -> Cause | None:
    """The first failed fingerprint check, as a mismatch of the two ranks it names, with
    the ranks below the other one said to be like the checking rank; which side is the
    program's mistake the check does not say."""
    for error in errors:
        if error.versus is None or error.rank is None:
            continue
        mine = _collective(error.op, error.seq, error.numel_in)
        # the same collective, number and op, with other tensors: not another collective
        same = (
            error.versus_op == error.op and error.versus_seq == error.seq
            and error.versus_values is None
        )  # fmt: skip
        parted = (
            "called the same collective with different tensors"
            if same
            else ("are in different collectives")
        )
        others = sorted(set(range(error.versus)) - {error.rank})
        # the ranks torch compared before: their fingerprints were equal to this rank's,
        # in full where the values were compared, else in length only
        alike = ""
        if others:
            verb = "is" if len(others) == 1 else "are"
            alike = (
                f"; {ranks_text(others)} {verb} in the same collective as rank {error.rank}"
                if error.versus_values is None
                else f"; {ranks_text(others)} {verb} in collectives of rank {error.rank}'s "
                "fingerprint length (their values were not compared)"
            )
        return Cause(
            kind="mismatch", pg="", pg_desc="", seq=error.seq, collective=mine,
            ranks=(error.rank, error.versus), waiting=(), majority=False, fix=MISMATCH_FIX,
            evidence=(f"{error.where}: {error.text}",),
            summary=f"ranks {error.rank} and {error.versus} {parted} "
            f"(torch's fingerprint check on rank {error.rank}): rank {error.rank} at {mine}, "
            f"{_theirs(error)}{alike}; which side is the program's mistake the check does "
            "not say",
        )  # fmt: skip
    return None
