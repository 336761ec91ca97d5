"""What nccl-tests output leaves out, inferred from its rows: the rank count and the op.

Old outputs print no device table (so no rank count) and some runs do not name their
op; :func:`infer_nranks` and :func:`infer_op` recover them from what every op prints
differently (its bus factor, ``redop`` and ``root`` columns, and whether ``count`` is
the size or one rank's share of it), and say how, or why they cannot.
"""

from __future__ import annotations

import bisect

from hpnet.bench.model import Row

__all__ = ["infer_nranks", "infer_op"]

#: bytes per element of each type nccl-tests prints (src/common.cu wordSize)
_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "bfloat16": 2, "bf16": 2,
    "int32": 4, "uint32": 4, "int": 4, "uint": 4, "float": 4,
    "int64": 8, "uint64": 8, "double": 8,
}  # fmt: skip
#: ops whose printed count is one rank's share: size = count x element x nranks
#: (their GetCollByteCount sets paramcount = count/nranks, src/*.cu)
_PER_RANK_COUNT = frozenset(
    {"all_gather", "reduce_scatter", "alltoall", "gather", "scatter", "hypercube"}
)


def _interval(numerator: float, denominator: float) -> tuple[float, float] | None:
    """The ratio of two numbers nccl-tests printed with two decimals, as an interval."""
    if denominator - 0.005 <= 0:
        return None
    return (numerator - 0.005) / (denominator + 0.005), (numerator + 0.005) / (denominator - 0.005)


def infer_nranks(rows: list[Row], op: str | None) -> tuple[int | None, str | None]:
    """The rank count when no device table says it: from size / count for the ops that
    print one rank's share (exact), else from the bus factor of every row that shows one
    (busbw / algbw, each printed with two decimals: the ranks whose factor lies inside
    every row's interval; given only when exactly one does)."""
    per_rank = [
        r.size_bytes / (r.count * _TYPE_BYTES[r.dtype])
        for r in rows
        if r.count and r.dtype in _TYPE_BYTES and r.size_bytes >= 1 << 16
    ]
    if per_rank and (op in _PER_RANK_COUNT or op is None):
        shares = {round(k) for k in per_rank if abs(k - round(k)) < 0.01}
        if len(shares) == 1 and (k := shares.pop()) > 1:
            return k, f"{k} ranks: each row's size is {k} x its count (one rank's share)"
    factor = {
        "all_reduce": lambda n: 2 * (n - 1) / n,
        "all_gather": lambda n: (n - 1) / n,
        "reduce_scatter": lambda n: (n - 1) / n,
        "alltoall": lambda n: (n - 1) / n,
    }.get(op or "")
    if factor is None:
        return None, None
    low, high = 0.0, float("inf")
    for row in rows:
        for m in (row.out_of_place, row.in_place):
            if m is None or m.algbw_gbps < 0.5:
                continue
            bounds = _interval(m.busbw_gbps, m.algbw_gbps)
            if bounds:
                low, high = max(low, bounds[0]), min(high, bounds[1])
    if high == float("inf") or low > high:
        return None, None
    # every factor grows with n: the counts that fit are one interval, found by bisection
    # (a loop over 100 000 counts cost 20 ms a run: minutes on a file of many runs)
    counts = range(2, 100_001)
    first = bisect.bisect_left(counts, low - 1e-9, key=factor)
    end = bisect.bisect_right(counts, high + 1e-9, key=factor)
    fits = counts[first:end]
    if len(fits) == 1:
        return fits[0], f"{fits[0]} ranks: the only count whose bus factor fits every row"
    if fits:
        return None, (
            f"the rank count is not shown: the bus factor fits {fits[0]} to {fits[-1]} ranks"
        )
    return None, None


def infer_op(
    rows: list[Row], nranks: int | None, *, redop_meaningful: bool = True
) -> tuple[str | None, str]:
    """Name an op the output does not name, from what every op prints differently:
    its bus factor (busbw / algbw: 2(n-1)/n only for all_reduce, (n-1)/n for the ops
    that move one rank's share, 1 for broadcast / reduce / sendrecv), its redop and
    root columns, and whether count is the size or one rank's share of it.

    No rank count is computed from one rounded ratio here: only the op's family, where
    that is unambiguous (:func:`infer_nranks` counts ranks from every row).
    """
    sample = max(
        (r for r in rows if r.out_of_place and r.out_of_place.algbw_gbps >= 0.1),
        key=lambda r: r.size_bytes,
        default=None,
    )
    if sample is None or sample.out_of_place is None:
        return None, "the op is not named in the output, and no row shows its bus factor"
    ratio = sample.out_of_place.busbw_gbps / sample.out_of_place.algbw_gbps
    reducing: bool | None = sample.redop not in ("none", "") if redop_meaningful else None
    rooted = sample.root >= 0
    share = (
        sample.size_bytes / (sample.count * _TYPE_BYTES[sample.dtype])
        if sample.count and sample.dtype in _TYPE_BYTES
        else None
    )
    why = f"the op is not named in the output; busbw/algbw = {ratio:.3f}"
    if ratio > 1.02:  # 2(n-1)/n, n > 2: no other op exceeds 1
        return "all_reduce", f"{why} (> 1: only all_reduce's 2(n-1)/n): all_reduce"
    if share is not None and share > 1.5:  # count is one rank's share
        if reducing is None:
            return None, (
                f"{why}, count = size / ranks, and this era's redop column says nothing: not told"
            )
        if reducing:
            return "reduce_scatter", f"{why}, a reduction, count = size / ranks: reduce_scatter"
        if rooted:
            return None, f"{why}, a root, count = size / ranks: gather or scatter"
        return None, f"{why}, count = size / ranks: all_gather or alltoall (not said which)"
    if abs(ratio - 1) < 0.02:
        if reducing is None:
            return None, (
                f"{why} = 1: all_reduce on 2 ranks, broadcast, reduce or sendrecv, which "
                "this era's redop column cannot tell apart (nccl-tests 2.13.0-2.13.3 print "
                "'sum' for every op)"
            )
        if rooted:
            op = "reduce" if reducing else "broadcast"
            return op, f"{why} = 1 with a root: {op}"
        if reducing:  # 2(n-1)/n = 1: all_reduce over 2 ranks
            return "all_reduce", f"{why} = 1 with a reduction and no root: all_reduce on 2 ranks"
        return "sendrecv", f"{why} = 1, no reduction, no root, count = size: sendrecv"
    return None, f"{why}: not enough to tell the op"
