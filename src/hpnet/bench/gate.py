"""Pass or fail a benchmark against an expected bus bandwidth.

The expectation comes from ``--min-busbw GBPS`` or from a profile's reference figure
(what the vendor's guide measured, less a tolerance). Bus bandwidth is the number
nccl-tests makes comparable across rank counts (doc/PERFORMANCE.md), so one figure
holds for any number of ranks; it does not hold across fabrics: a reference measured
between hosts says nothing about a run inside one host (NVLink), and is skipped there.

The measured value is the best bus bandwidth (either placement) among the rows at or
above the reference's size, or at the largest size measured: the plateau nccl-tests'
readers look at, not the small-message average that "Avg bus bandwidth" mixes in.
"""

from __future__ import annotations

import dataclasses

from hpnet.bench.model import BenchReport, BenchRun
from hpnet.result import Expectation, Status

__all__ = ["GateResult", "evaluate", "from_profile"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GateResult:
    op: str
    status: Status  # PASS, FAIL or SKIP
    required_gbps: float
    busbw_gbps: float | None  # the best busbw among the compared rows
    size_bytes: int | None  # the row it was measured at
    detail: str


def _hosts(report: BenchReport) -> int:
    meta = report.metadata
    fake = int(meta.get("fake_hosts") or 0)
    if fake > 1:
        return fake
    return max(len(meta.get("hosts") or ()), 1)


def _judge(run: BenchRun, expectation: Expectation, need: float) -> GateResult:
    if not run.rows:
        return GateResult(
            op=run.op, status=Status.SKIP, required_gbps=need, busbw_gbps=None, size_bytes=None,
            detail="no rows measured",
        )  # fmt: skip
    threshold = expectation.min_size
    if threshold is None:
        threshold = max(row.size_bytes for row in run.rows)
    rows = [row for row in run.rows if row.size_bytes >= threshold]
    if not rows:
        largest = max(row.size_bytes for row in run.rows)
        return GateResult(
            op=run.op, status=Status.SKIP, required_gbps=need, busbw_gbps=None, size_bytes=None,
            detail=f"the sweep ends at {largest} B; the expectation is for {threshold} B "
            f"and up ({expectation.source}): raise -e to {threshold}",
        )  # fmt: skip
    best, size = max(
        (m.busbw_gbps, row.size_bytes)
        for row in rows
        for m in (row.out_of_place, row.in_place)
        if m is not None
    )
    passed = best >= need
    detail = (
        f"busbw {best:.2f} GB/s at {size} B {'>=' if passed else '<'} {need:.2f} GB/s "
        f"({expectation.source})"
    )
    return GateResult(
        op=run.op,
        status=Status.PASS if passed else Status.FAIL,
        required_gbps=need,
        busbw_gbps=best,
        size_bytes=size,
        detail=detail,
    )


def evaluate(report: BenchReport, expectation: Expectation) -> tuple[GateResult, ...]:
    """One result per run the expectation applies to (a SKIP says why it does not).

    The expectation's bandwidth part is judged (its transport part is ``hpnet verify``'s);
    ValueError if it has none.
    """
    need = expectation.busbw_gbps
    if need is None:
        raise ValueError(f"the expectation {expectation.describe()!r} sets no bus bandwidth")
    runs = [r for r in report.runs if expectation.op is None or r.op == expectation.op]
    if not runs:
        measured = ", ".join(r.op for r in report.runs) or "nothing"
        return (
            GateResult(
                op=expectation.op or "-", status=Status.SKIP, required_gbps=need,
                busbw_gbps=None, size_bytes=None,
                detail=f"the expectation is for {expectation.op}; this run measured {measured}",
            ),
        )  # fmt: skip
    hosts = _hosts(report)
    if expectation.hosts and expectation.hosts > 1 and hosts < 2:
        return tuple(
            GateResult(
                op=run.op, status=Status.SKIP, required_gbps=need,
                busbw_gbps=None, size_bytes=None,
                detail=f"the reference was measured across {expectation.hosts} hosts "
                f"({expectation.source}); this run stays inside one host, so its busbw is "
                "NVLink / PCIe, not the network: run it across hosts (or --fake-hosts 2)",
            )
            for run in runs
        )  # fmt: skip
    return tuple(_judge(run, expectation, need) for run in runs)


def from_profile(name: str, *, tolerance: float) -> Expectation:
    """The expectation a profile's reference measurement gives, less ``tolerance``
    (a fraction); InputError if the profile has none."""
    from hpnet.errors import InputError  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    profile = get_profile(name)
    if not profile.bandwidth:
        raise InputError(
            f"profile {name} records no measured bus bandwidth",
            code="no-reference",
            where=f"--profile {name}",
            fix="pass the bandwidth you expect: --min-busbw GBPS",
        )
    ref = profile.bandwidth[0]
    return Expectation(
        busbw_gbps=ref.busbw_gbps * (1 - tolerance),
        source=f"profile {name}: {ref.describe()}, less {tolerance:.0%}",
        op=ref.op,
        min_size=ref.size_bytes,
        hosts=ref.hosts,
    )
