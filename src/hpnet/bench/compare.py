"""``hpnet bench compare A B``: is B slower than A, where, and are they comparable?

Rows are matched by op, size and placement. A row's change is ``time_A / time_B - 1``
(+10%: B is 10% faster), which is the change in bandwidth at large sizes and in
latency at small ones; when A and B ran different rank counts it is
``busbw_B / busbw_A - 1`` (the same collective on more ranks takes longer by design).
The verdict looks at the large sizes (``large_bytes`` and up,
or each op's largest size when the sweep stops below): FAIL when B's mean change there
is below ``-threshold``; small sizes only warn, their run-to-run noise is larger.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from hpnet.bench.model import BenchReport, BenchRun, Measurement
from hpnet.result import Status

__all__ = ["Comparison", "OpComparison", "RowChange", "compare"]

#: metadata that changes what a benchmark measures
_COMPARABLE = ("backend", "device", "nranks", "nccl", "nccl_version", "torch", "fake_hosts")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RowChange:
    size_bytes: int
    placement: str  # out or in
    a_time_us: float
    b_time_us: float
    a_busbw_gbps: float
    b_busbw_gbps: float
    change: float  # time_A / time_B - 1
    regressed: bool  # change < -threshold


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class OpComparison:
    op: str
    a_avg: float | None
    b_avg: float | None
    avg_change: float | None  # b_avg / a_avg - 1
    large_change: float | None  # geometric mean change over the large rows
    rows: tuple[RowChange, ...]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    status: Status  # PASS, WARN or FAIL
    verdict: str
    a_source: str
    b_source: str
    threshold: float
    ops: tuple[OpComparison, ...]
    notes: tuple[str, ...]


def _placements(run: BenchRun) -> dict[tuple[int, str], Measurement]:
    cells: dict[tuple[int, str], Measurement] = {}
    for row in run.rows:
        for name, m in (("out", row.out_of_place), ("in", row.in_place)):
            if m is not None and m.time_us > 0:
                cells.setdefault((row.size_bytes, name), m)
    return cells


def _merge_runs(report: BenchReport) -> dict[str, BenchRun]:
    """One run per op (the first of repeated runs, as a user compares them)."""
    runs: dict[str, BenchRun] = {}
    for run in report.runs:
        runs.setdefault(run.op, run)
    return runs


def _metadata_notes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    notes = []
    for key in _COMPARABLE:
        if key in a and key in b and a[key] != b[key]:
            notes.append(f"{key} differs: A {a[key]!r}, B {b[key]!r}")
    env_a, env_b = a.get("nccl_env") or {}, b.get("nccl_env") or {}
    changed = sorted(k for k in set(env_a) | set(env_b) if env_a.get(k) != env_b.get(k))
    if changed:
        shown = ", ".join(
            f"{k}: {env_a.get(k, '(unset)')} -> {env_b.get(k, '(unset)')}" for k in changed[:6]
        )
        notes.append(f"NCCL environment differs: {shown}")
    return notes


def compare(
    a: BenchReport, b: BenchReport, *, threshold: float = 0.05, large_bytes: int = 64 << 20
) -> Comparison:
    runs_a, runs_b = _merge_runs(a), _merge_runs(b)
    notes = _metadata_notes(a.metadata, b.metadata)
    ops = []
    failed: list[str] = []
    warned: list[str] = []
    for op, run_a in runs_a.items():
        run_b = runs_b.get(op)
        if run_b is None:
            notes.append(f"{op} is only in A")
            continue
        # with other rank counts a collective's time is another collective's: bus
        # bandwidth is what nccl-tests normalises for that (busbw = algbw x factor(n))
        by_busbw = bool(run_a.nranks and run_b.nranks and run_a.nranks != run_b.nranks)
        if by_busbw:
            notes.append(
                f"{op}: A ran {run_a.nranks} ranks, B {run_b.nranks}: compared by bus "
                "bandwidth, not time"
            )
        cells_a, cells_b = _placements(run_a), _placements(run_b)
        rows = []
        for key in sorted(set(cells_a) & set(cells_b)):
            ma, mb = cells_a[key], cells_b[key]
            if by_busbw:
                change = mb.busbw_gbps / ma.busbw_gbps - 1 if ma.busbw_gbps > 0 else 0.0
            else:
                change = ma.time_us / mb.time_us - 1 if mb.time_us > 0 else 0.0
            rows.append(
                RowChange(
                    size_bytes=key[0],
                    placement=key[1],
                    a_time_us=ma.time_us,
                    b_time_us=mb.time_us,
                    a_busbw_gbps=ma.busbw_gbps,
                    b_busbw_gbps=mb.busbw_gbps,
                    change=change,
                    regressed=change < -threshold,
                )
            )
        if not rows:
            notes.append(f"{op}: no size measured in both")
            continue
        largest = max(r.size_bytes for r in rows)
        large = [r for r in rows if r.size_bytes >= min(large_bytes, largest)]
        large_change = math.exp(sum(math.log1p(r.change) for r in large) / len(large)) - 1
        avg_change = None
        if run_a.avg_busbw_gbps and run_b.avg_busbw_gbps is not None:
            avg_change = run_b.avg_busbw_gbps / run_a.avg_busbw_gbps - 1
        ops.append(
            OpComparison(
                op=op,
                a_avg=run_a.avg_busbw_gbps,
                b_avg=run_b.avg_busbw_gbps,
                avg_change=avg_change,
                large_change=large_change,
                rows=tuple(rows),
            )
        )
        if large_change < -threshold:
            failed.append(
                f"{op} {large_change:+.1%} at {min(r.size_bytes for r in large)} B and up"
            )
        elif any(r.regressed for r in rows):
            slow = [r for r in rows if r.regressed]
            warned.append(f"{op}: {len(slow)} smaller size(s) slower by more than {threshold:.0%}")
    notes += [f"{op} is only in B" for op in runs_b if op not in runs_a]
    if not ops:
        status = Status.FAIL
        verdict = "nothing to compare: no op and size measured in both"
    elif failed:
        status, verdict = Status.FAIL, "B is slower: " + "; ".join(failed)
    elif warned:
        status, verdict = Status.WARN, "large sizes within tolerance; " + "; ".join(warned)
    else:
        changes = ", ".join(
            f"{o.op} {o.large_change:+.1%}" for o in ops if o.large_change is not None
        )
        status, verdict = (
            Status.PASS,
            f"B is within {threshold:.0%} of A or faster at large sizes ({changes})",
        )
    return Comparison(
        status=status,
        verdict=verdict,
        a_source=a.source,
        b_source=b.source,
        threshold=threshold,
        ops=tuple(ops),
        notes=tuple(notes),
    )
