"""nccl-tests' arithmetic: sizes, counts, algorithm and bus bandwidth, percentiles.

Pure functions, checked against nccl-tests' own definitions (NVIDIA/nccl-tests
``doc/PERFORMANCE.md`` and each test's ``GetBw``, e.g. ``src/all_reduce.cu:60-64``
at v2.19.6; tests/data/nccl-tests/FORMAT.md section 12 cites every op):

============== ====================================== ===========
op             size (the "size" column, bytes)        bus factor
============== ====================================== ===========
all_reduce     count * typesize                       2(n-1)/n
all_gather     count * typesize * n (count per rank)  (n-1)/n
reduce_scatter count * typesize * n (count per rank)  (n-1)/n
alltoall       count * typesize * n (count per peer)  (n-1)/n
broadcast      count * typesize                       1
reduce         count * typesize                       1
sendrecv       count * typesize                       1
============== ====================================== ===========

algbw = size / time (GB/s, 1 GB = 1e9 bytes), busbw = algbw * factor.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

__all__ = [
    "DTYPES",
    "OPS",
    "REDOPS",
    "OpShape",
    "algbw_gbps",
    "bus_factor",
    "busbw_gbps",
    "parse_size",
    "percentile",
    "shape",
    "size_sweep",
]

#: every collective, in nccl-tests' naming
OPS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
    "reduce",
    "alltoall",
    "sendrecv",
)
#: nccl-tests' -d names -> bytes per element
DTYPES = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
}
#: nccl-tests' -o names
REDOPS = ("sum", "prod", "max", "min", "avg")
_REDUCING = frozenset({"all_reduce", "reduce_scatter", "reduce"})
_ROOTED = frozenset({"broadcast", "reduce"})


def parse_size(text: str) -> int:
    """nccl-tests' size syntax: a number with an optional K, M, G or T suffix (x1024).

    >>> parse_size("8"), parse_size("1K"), parse_size("512M"), parse_size("1G"), parse_size("1B")
    (8, 1024, 536870912, 1073741824, 1)
    """
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[bB]?\s*", text)
    if not found:
        raise ValueError(f"not a size: {text!r} (write e.g. 8, 1K, 64M, 1G)")
    number, unit = found.groups()
    scale = 1024 ** ("kmgt".index(unit.lower()) + 1) if unit else 1
    return int(float(number) * scale)


def size_sweep(
    minimum: int, maximum: int, *, factor: int | None = 2, step: int | None = None
) -> list[int]:
    """Sizes from ``minimum`` to ``maximum``: times ``factor``, or plus ``step`` bytes.

    >>> size_sweep(8, 64)
    [8, 16, 32, 64]
    >>> size_sweep(1024, 4096, factor=None, step=1024)
    [1024, 2048, 3072, 4096]
    """
    if minimum <= 0 or maximum < minimum:
        raise ValueError(f"sizes must satisfy 0 < min <= max (got {minimum}, {maximum})")
    sizes = []
    size = minimum
    while size <= maximum:
        sizes.append(size)
        if step:
            size += step
        elif factor and factor > 1:
            size *= factor
        else:
            break
    return sizes


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class OpShape:
    """What one call moves at one size, in nccl-tests' terms."""

    size_bytes: int  # the row's size (rounded down so that it divides)
    count: int  # the row's count column: elements per call (per rank / per peer where noted)
    send_count: int  # elements in each rank's send buffer
    recv_count: int  # elements in each rank's receive buffer


def shape(op: str, size_bytes: int, nranks: int, typesize: int) -> OpShape:
    """Buffer sizes for ``op`` at a requested size (as nccl-tests' ``getCollByteCount``).

    >>> shape("all_gather", 1024, 4, 4)
    OpShape(size_bytes=1024, count=64, send_count=64, recv_count=256)
    >>> shape("all_reduce", 1000, 4, 4).count
    250
    """
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        per_rank = size_bytes // (typesize * nranks)
        total = per_rank * nranks
        if op == "all_gather":
            send, recv = per_rank, total
        elif op == "reduce_scatter":
            send, recv = total, per_rank
        else:  # alltoall: per_rank elements to every peer
            send, recv = total, total
        return OpShape(
            size_bytes=total * typesize, count=per_rank, send_count=send, recv_count=recv
        )
    count = size_bytes // typesize
    return OpShape(size_bytes=count * typesize, count=count, send_count=count, recv_count=count)


def bus_factor(op: str, nranks: int) -> float:
    """busbw / algbw (doc/PERFORMANCE.md).

    >>> bus_factor("all_reduce", 4), bus_factor("all_gather", 4), bus_factor("broadcast", 4)
    (1.5, 0.75, 1.0)
    """
    n = nranks
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    if op in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise ValueError(f"unknown op {op!r}")


def algbw_gbps(size_bytes: int, seconds: float) -> float:
    """Algorithm bandwidth in GB/s (1e9 bytes), as nccl-tests prints it."""
    return size_bytes / 1e9 / seconds if seconds > 0 else 0.0


def busbw_gbps(op: str, size_bytes: int, seconds: float, nranks: int) -> float:
    """Bus bandwidth: algbw times the op's factor."""
    return algbw_gbps(size_bytes, seconds) * bus_factor(op, nranks)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear-interpolated percentile (numpy's default), ``fraction`` in [0, 1].

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    >>> percentile([5.0], 0.99)
    5.0
    """
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def reduces(op: str) -> bool:
    """Whether the op takes a reduction operator (-o)."""
    return op in _REDUCING


def rooted(op: str) -> bool:
    """Whether the op has a root rank (-r)."""
    return op in _ROOTED
