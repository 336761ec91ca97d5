"""Benchmark results: one model for runs of `hpnet bench` and imported nccl-tests output.

Plain frozen data. ``hpnet bench --json`` writes :class:`BenchReport` as JSON
(docs/bench-schema.md); :func:`report_from_data` reads it back for ``compare`` and
``--plot``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "BenchReport",
    "BenchRun",
    "BenchSpec",
    "Measurement",
    "Row",
    "average_busbw",
    "report_from_data",
]

SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BenchSpec:
    """What to measure, with nccl-tests' defaults."""

    ops: tuple[str, ...] = ("all_reduce",)
    sizes: tuple[int, ...] = ()
    iters: int = 20
    warmup: int = 1
    check: bool = True
    redop: str = "sum"
    dtype: str = "float"
    root: int = 0
    graph_launches: int = 0  # -G: 0 = no CUDA graph
    backend: str = "auto"  # auto, nccl (direct), torch-nccl, gloo
    device: str = "auto"  # auto, cuda, cpu
    per_iteration: bool = True  # time each iteration too (min / median / p99)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Measurement:
    """One placement (out-of-place or in-place) of one size."""

    time_us: float  # mean time per call, the slowest rank's (nccl-tests -a 3)
    algbw_gbps: float
    busbw_gbps: float
    #: elements that differ from the expected result; None: not checked (N/A)
    wrong: int | None = None
    #: the check's float error column of nccl-tests before 2.13 (imported files only)
    error: float | None = None
    min_us: float | None = None  # per-iteration distribution, over iterations and ranks
    median_us: float | None = None
    p99_us: float | None = None
    rank_times_us: tuple[float, ...] = ()  # each rank's mean time per call


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Row:
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place: Measurement | None
    in_place: Measurement | None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BenchRun:
    """One op's sweep (one table of nccl-tests)."""

    op: str
    nranks: int | None
    rows: tuple[Row, ...]
    #: the "# Avg bus bandwidth" line: printed (imported) or computed as nccl-tests does
    avg_busbw_gbps: float | None
    out_of_bounds: int | None = None  # "# Out of bounds values" (failed checks)
    graph_launches: int = 0
    #: where an imported table came from, and what of it could not be read
    notes: tuple[str, ...] = ()
    #: were the results checked (``-c``): True, False (``N/A``), None when not shown
    checked: bool | None = None
    #: the run's own failure message (nccl-tests' "Test NCCL failure ..."), if it failed
    failure: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BenchReport:
    """Runs plus the metadata that makes them comparable."""

    source: str  # "hpnet bench" or the imported file
    runs: tuple[BenchRun, ...]
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: why the sweep stopped before its end (the rows measured until then are kept)
    incomplete: str | None = None


def average_busbw(rows: Sequence[Row]) -> float | None:
    """nccl-tests' "Avg bus bandwidth": the mean busbw of every row, out-of-place and
    in-place together (src/common.cu: ``bw[0] /= bw_count[0]``).

    >>> m = Measurement(time_us=1.0, algbw_gbps=1.0, busbw_gbps=2.0)
    >>> average_busbw([Row(size_bytes=8, count=2, dtype="float", redop="sum", root=-1,
    ...                    out_of_place=m, in_place=m)])
    2.0
    """
    values = [
        m.busbw_gbps for row in rows for m in (row.out_of_place, row.in_place) if m is not None
    ]
    return sum(values) / len(values) if values else None


def _measurement(data: Mapping[str, Any] | None) -> Measurement | None:
    if data is None:
        return None
    return Measurement(
        time_us=float(data["time_us"]),
        algbw_gbps=float(data["algbw_gbps"]),
        busbw_gbps=float(data["busbw_gbps"]),
        wrong=data.get("wrong"),
        error=data.get("error"),
        min_us=data.get("min_us"),
        median_us=data.get("median_us"),
        p99_us=data.get("p99_us"),
        rank_times_us=tuple(data.get("rank_times_us", ())),
    )


def report_from_data(data: Mapping[str, Any], *, source: str) -> BenchReport:
    """A report from its JSON (``hpnet bench --json`` output); KeyError/TypeError on
    anything else (the caller turns them into an input error)."""
    runs = []
    for run in data["runs"]:
        rows = tuple(
            Row(
                size_bytes=int(r["size_bytes"]),
                count=int(r["count"]),
                dtype=str(r["dtype"]),
                redop=str(r["redop"]),
                root=int(r["root"]),
                out_of_place=_measurement(r.get("out_of_place")),
                in_place=_measurement(r.get("in_place")),
            )
            for r in run["rows"]
        )
        runs.append(
            BenchRun(
                op=str(run["op"]),
                nranks=run.get("nranks"),
                rows=rows,
                avg_busbw_gbps=run.get("avg_busbw_gbps"),
                out_of_bounds=run.get("out_of_bounds"),
                graph_launches=int(run.get("graph_launches", 0)),
                notes=tuple(run.get("notes", ())),
                checked=run.get("checked"),
                failure=run.get("failure"),
            )
        )
    return BenchReport(
        source=str(data.get("source", source)),
        runs=tuple(runs),
        metadata=data.get("metadata", {}),
        incomplete=data.get("incomplete"),
    )
