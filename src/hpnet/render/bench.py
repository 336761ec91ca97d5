"""``hpnet bench`` output: nccl-tests' table, CSV, and the comparison of two results.

The table keeps nccl-tests' columns and widths (src/common.cu ``printHeader`` and
``BenchTime`` at v2.19.6) so that it reads like the tables users know and so that
``hpnet bench import`` reads it back. A placement a backend does not have (torch's
all_reduce is in-place only) prints ``--`` in its four columns. What nccl-tests does
not print follows the table as ``#`` lines: the per-iteration distribution, each
rank's time, the gate.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.bench.compare import Comparison
    from hpnet.bench.gate import GateResult
    from hpnet.bench.model import BenchReport, BenchRun, Measurement
    from hpnet.bench.train import TrainReport

__all__ = [
    "CSV_COLUMNS",
    "render_compare",
    "render_csv",
    "render_report",
    "render_train",
]

HEADER = (
    "#                                                              out-of-place"
    "                       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
    "     time   algbw   busbw  #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)        "
    "     (us)  (GB/s)  (GB/s)         "
)


def _header(run: BenchRun) -> str:
    """:data:`HEADER`, whose check column is named for what it holds: nccl-tests before
    2.13 printed the largest error as a float (``%5.0le``, column ``error``: src/common.cu
    at v2.11.0), 2.13+ the count of wrong elements (``#wrong``, src/common.cu at v2.13.0);
    a float error is never shown under ``#wrong``."""
    measured = [m for row in run.rows for m in (row.out_of_place, row.in_place) if m is not None]
    if any(m.error is not None for m in measured) and all(m.wrong is None for m in measured):
        return HEADER.replace("#wrong", " error")
    return HEADER


def _cells(m: Measurement | None) -> str:
    if m is None:
        return f"  {'--':>7}  {'--':>6}  {'--':>6}  {'--':>6}"
    wrong = "N/A" if m.wrong is None else str(m.wrong)
    if m.wrong is None and m.error is not None:
        wrong = f"{m.error:.0e}"
    return f"  {m.time_us:7.2f}  {m.algbw_gbps:6.2f}  {m.busbw_gbps:6.2f}  {wrong:>6}"


def _banner(report: BenchReport, run: BenchRun) -> str:
    meta = report.metadata
    hosts = meta.get("hosts") or []
    where = f" on {len(hosts)} host{'s' if len(hosts) != 1 else ''}" if hosts else ""
    fake = int(meta.get("fake_hosts") or 0)
    if fake > 1:
        where += f" split into {fake} NCCL hosts"
    ranks = f"{run.nranks} ranks" if run.nranks is not None else "ranks not shown"
    op = run.op if run.op != "unknown" else "op not shown"
    parts = [f"# hpnet bench: {op}, {ranks}{where}"]
    backend = meta.get("backend")
    if backend:
        stack = [str(backend), str(meta.get("device", ""))]
        if meta.get("nccl"):
            stack.append(f"NCCL {meta['nccl']}")
        if meta.get("torch"):
            stack.append(f"torch {meta['torch']}")
        parts.append(" (" + ", ".join(s for s in stack if s) + ")")
    spec = meta.get("spec") or {}
    if spec:
        parts.append(
            f"; iters {spec.get('iters')} warmup {spec.get('warmup')} "
            f"check {'on' if spec.get('check') else 'off'} graph {spec.get('graph_launches', 0)}"
        )
    return "".join(parts)


def _run_table(report: BenchReport, run: BenchRun) -> list[str]:
    lines = [_banner(report, run)]
    gpus = report.metadata.get("gpus") or []
    if gpus:
        counted = all(" x " in str(g) for g in gpus)  # imported: "16 x NVIDIA B200"
        if counted:
            lines.append(f"#   GPUs: {', '.join(str(g) for g in gpus)}")
        else:
            lines.append(
                f"#   GPUs: {len(gpus)} x {gpus[0]}" if len(set(gpus)) == 1 else f"#   GPUs: {gpus}"
            )
    lines += ["#", _header(run)]
    for row in run.rows:
        lines.append(
            f"{row.size_bytes:12d}  {row.count:12d}  {row.dtype:>8}  {row.redop:>6}  {row.root:6d}"
            + _cells(row.out_of_place)
            + _cells(row.in_place)
        )
    if run.out_of_bounds is not None:
        verdict = "OK" if run.out_of_bounds == 0 else "FAILED"
        lines.append(f"# Out of bounds values : {run.out_of_bounds} {verdict}")
    avg = "-" if run.avg_busbw_gbps is None else f"{run.avg_busbw_gbps:.6g}"
    lines.append(f"# Avg bus bandwidth    : {avg} ")
    lines += _distribution(run)
    lines += [f"# note: {note}" for note in run.notes]
    return lines


def _spread(m: Measurement | None) -> str:
    if m is None or m.min_us is None:
        return f"{'':>8} {'':>8} {'':>8} {'':>11}"
    slowest = "-"
    times = m.rank_times_us
    if len(times) > 1:
        worst = max(range(len(times)), key=times.__getitem__)
        lead = times[worst] / min(times) - 1 if min(times) > 0 else 0.0
        slowest = f"r{worst} +{lead:.0%}"
    return f"{m.min_us:8.2f} {m.median_us or 0:8.2f} {m.p99_us or 0:8.2f} {slowest:>11}"


def _distribution(run: BenchRun) -> list[str]:
    """The per-iteration columns and the slowest rank, where they were measured."""
    body = [
        f"#{row.size_bytes:11d}   {_spread(row.out_of_place)}   {_spread(row.in_place)}".rstrip()
        for row in run.rows
        if any(m is not None and m.min_us is not None for m in (row.out_of_place, row.in_place))
    ]
    if not body:
        return []
    return [
        "#",
        "# per iteration: time (us) over every iteration of every rank; slowest: the rank",
        "# with the longest mean time, and how much longer it is than the fastest rank's",
        "#                            out-of-place                              in-place",
        "#       size        min   median      p99     slowest        min   median      p99"
        "     slowest",
        *body,
    ]


def render_report(
    report: BenchReport, *, gates: Sequence[GateResult] = (), verdict: str | None = None
) -> str:
    """Every run as an nccl-tests table, then the gate and the verdict."""
    lines: list[str] = []
    for run in report.runs:
        if lines:
            lines.append("#")
        lines += _run_table(report, run)
    if report.incomplete:
        lines += ["#", f"# INCOMPLETE: {report.incomplete}"]
    if gates:
        lines.append("#")
        for gate in gates:
            lines.append(f"# expect {gate.op}: {gate.status} — {gate.detail}")
    if verdict:
        lines.append(verdict)
    return "\n".join(lines) + "\n"


CSV_COLUMNS = (
    "op", "nranks", "size_bytes", "count", "dtype", "redop", "root", "placement",
    "time_us", "algbw_gbps", "busbw_gbps", "wrong", "min_us", "median_us", "p99_us",
    "rank_times_us", "backend", "device", "hosts", "gpus", "nccl", "torch",
    "graph_launches", "command", "nccl_env", "source", "time",
)  # fmt: skip


def render_csv(report: BenchReport) -> str:
    """One line per op, size and placement; the run's metadata repeated on each line
    so that every line stands alone in a spreadsheet or a database."""
    meta = report.metadata
    common = {
        "backend": meta.get("backend", ""),
        "device": meta.get("device", ""),
        "hosts": " ".join(meta.get("hosts") or []),
        "gpus": "; ".join(meta.get("gpus") or []),
        "nccl": meta.get("nccl") or meta.get("nccl_version") or "",
        "torch": meta.get("torch") or "",
        "command": " ".join(meta.get("command") or meta.get("args") or []),
        "nccl_env": " ".join(f"{k}={v}" for k, v in (meta.get("nccl_env") or {}).items()),
        "source": report.source,
        "time": meta.get("time", ""),
    }
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for run in report.runs:
        for row in run.rows:
            for placement, m in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
                if m is None:
                    continue
                writer.writerow(
                    {
                        **common,
                        "op": run.op,
                        "nranks": run.nranks if run.nranks is not None else "",
                        "size_bytes": row.size_bytes,
                        "count": row.count,
                        "dtype": row.dtype,
                        "redop": row.redop,
                        "root": row.root,
                        "placement": placement,
                        "time_us": f"{m.time_us:.3f}",
                        "algbw_gbps": f"{m.algbw_gbps:.4f}",
                        "busbw_gbps": f"{m.busbw_gbps:.4f}",
                        "wrong": "" if m.wrong is None else m.wrong,
                        "min_us": _num(m.min_us),
                        "median_us": _num(m.median_us),
                        "p99_us": _num(m.p99_us),
                        "rank_times_us": " ".join(f"{t:.3f}" for t in m.rank_times_us),
                        "graph_launches": run.graph_launches,
                    }
                )
    return out.getvalue()


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def render_compare(comparison: Comparison) -> str:
    """Side by side: B against A, per op, size and placement."""
    from hpnet.render.text import size_text  # noqa: PLC0415

    a, b = comparison.a_source, comparison.b_source
    lines = [
        f"hpnet bench compare: {comparison.status} — {comparison.verdict}",
        f"  A: {a}",
        f"  B: {b}",
    ]
    for op in comparison.ops:
        lines += [
            "",
            f"{op.op}: avg busbw A {_gb(op.a_avg)}  B {_gb(op.b_avg)}  ({_pct(op.avg_change)})",
            f"  {'size':>12}  {'place':>5}  {'A time':>9}  {'B time':>9}  "
            f"{'A busbw':>8}  {'B busbw':>8}  {'change':>7}",
        ]
        for d in op.rows:
            flag = "  <- slower" if d.regressed else ""
            lines.append(
                f"  {size_text(d.size_bytes):>12}  {d.placement:>5}  {d.a_time_us:9.2f}  "
                f"{d.b_time_us:9.2f}  "
                f"{d.a_busbw_gbps:8.2f}  {d.b_busbw_gbps:8.2f}  {_pct(d.change):>7}{flag}"
            )
    for note in comparison.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _gb(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} GB/s"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def render_train(report: TrainReport) -> str:
    """Step time and throughput percentiles, the comm share, the guide's line."""
    from hpnet.bench.train import guide_line  # noqa: PLC0415

    spec, meta = report.spec, report.metadata
    hosts = max(len(meta.get("hosts") or ()), 1)
    fake = int(meta.get("fake_hosts") or 0)
    per_host = report.nranks // max(hosts, fake, 1)
    lines = [
        f"hpnet bench train: {report.nranks} ranks ({meta.get('backend', '?')}, {spec.device}"
        + (f", NCCL {meta['nccl']}" if meta.get("nccl") else "")
        + f", torch {meta.get('torch', '?')})",
        f"  model: GPT-style, {spec.layers} layers x {spec.hidden} hidden, {spec.heads} heads, "
        f"{report.parameters / 1e6:.1f} M parameters"
        + (f", {spec.dtype} autocast" if spec.device == "cuda" else ", float32"),
        f"  batch: {spec.batch} x {spec.seq_len} tokens per rank, {report.global_batch} sequences "
        f"per step; {len(report.step_seconds)} timed steps after {spec.warmup} warm-up",
        "",
        f"  {'':>4}  {'step (s)':>9}  {'samples/s':>10}",
    ]
    for s in report.stats:
        lines.append(f"  p{s.percentile:<3}  {s.step_seconds:9.4f}  {s.samples_per_second:10.1f}")
    lines.append(f"  tokens/s at p50: {report.tokens_per_second:,.0f}")
    if report.comm_share is not None and report.no_sync_step_seconds is not None:
        lines.append(
            f"  communication: {report.comm_share:.0%} of the step not hidden by the backward pass "
            f"(p50 {report.stats[0].step_seconds:.4f} s with the gradient all-reduce, "
            f"{report.no_sync_step_seconds:.4f} s without)"
        )
    if report.replicas_in_sync is not None:
        state = "equal on every rank" if report.replicas_in_sync else "DIFFER between ranks"
        lines.append(f"  weights after the synced steps: {state}")
    lines.append(f"  loss: {report.first_loss:.3f} -> {report.last_loss:.3f}")
    lines += [
        "",
        "  as the ECS eRDMA guide prints it:",
        "  " + guide_line(report, max(hosts, fake, 1), per_host),
    ]
    return "\n".join(lines) + "\n"
