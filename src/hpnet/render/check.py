"""`hpnet check` as text: the verdict, then what to fix (most important first), then
the evidence (benchmarks and the transports NCCL's log proves, the doctor's count)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpnet.render.table import format_table
from hpnet.render.text import size_text, wrap_words

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hpnet.check.model import CheckReport, ClusterView, Stage
    from hpnet.check.plan import CheckPlan

__all__ = ["render_check", "render_plan"]

MAX_PROBLEMS = 12


def _size(size: int | None) -> str:
    return "-" if size is None else size_text(size)


def _transport(stage: Stage) -> str:
    inter = ", ".join(stage.transports.inter_node)
    intra = ", ".join(stage.transports.intra_node)
    if inter and intra:
        return f"{inter} (intra: {intra})"
    return inter or intra or ("-" if stage.backend != "gloo" else "gloo (TCP)")


def _gb(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def _cluster(cluster: ClusterView) -> list[str]:
    rows = [
        [n.node, len(n.ranks), n.gpus, n.doctor, n.nccl_version,
         _gb(n.intra_busbw_gbps), _gb(n.ring_busbw_gbps), ", ".join(n.inter_node) or "-"]
        for n in cluster.nodes
    ]  # fmt: skip
    lines = [
        "",
        "Nodes (busbw GB/s: the node's own all_reduce; its hop to the next node; the transport "
        "its ranks used to other nodes, from NCCL's log)",
    ]
    lines.append(
        format_table(
            ["node", "ranks", "GPUs", "doctor", "NCCL", "own busbw", "hop", "inter-node"], rows
        )
    )
    lines.append(
        f"  medians: own {_gb(cluster.median_intra_busbw_gbps)}, "
        f"hop {_gb(cluster.median_ring_busbw_gbps)}; below 80%: "
        f"{', '.join(cluster.slow_nodes) or 'none'}"
    )
    return lines


#: the text report's lines stay within this width where they are hpnet's own words
WIDTH = 100


def _wrapped(prefix: str, text: str, hang: str) -> list[str]:
    """``prefix + text`` within :data:`WIDTH`, continued under the prefix (plus ``hang``).

    >>> [len(line) for line in _wrapped("  1. ", "word " * 30, "")]
    [99, 59]
    """
    pad = " " * len(prefix) + hang
    first, *rest = wrap_words(text, WIDTH - len(pad), pad)
    return [prefix + first, *rest]


def render_check(report: CheckReport) -> str:
    """The text report, its secrets redacted (:func:`hpnet.check.report.redacted`)."""
    from hpnet.check.report import redacted  # noqa: PLC0415

    report = redacted(report)
    lines = [f"hpnet check: {report.verdict} — {report.headline}"]
    rdma = f"{len(report.rdma_ports)} RDMA port(s)" if report.rdma_ports else "no RDMA device"
    gpus = f"{report.gpus} x {report.gpu_name}" if report.gpus else "no GPU"
    lines.append(
        f"node {report.node}: {gpus}, {rdma}; profile {report.profile} -> transport "
        f"{report.transport}; {report.mode} check"
    )
    if report.incomplete:
        lines.append(
            f"INCOMPLETE: {report.incomplete}. What follows is what was judged until then."
        )
    if report.problems:
        lines += ["", "What to fix, most important first"]
        for number, problem in enumerate(report.problems[:MAX_PROBLEMS], 1):
            lines += _wrapped(f"  {number}. ", problem.what, "     ")
            for e in problem.evidence:
                if e:
                    lines += _wrapped("       ", e, "  ")
            if problem.fix:
                first, *rest = problem.fix.splitlines()
                lines += _wrapped("       fix: ", first, "")
                for line in rest:
                    lines += _wrapped("            ", line, "")
        if len(report.problems) > MAX_PROBLEMS:
            lines.append(f"  ... {len(report.problems) - MAX_PROBLEMS} more (--json has all)")
    # a recorded node's stages are planned, not run: say so where the headings would not
    ran = not report.stages or not all(
        (s.error or "").startswith("not run:") for s in report.stages
    )
    if report.stages:
        lines += [
            "",
            "Benchmarks (all_reduce, with NCCL_DEBUG=INFO; transports from NCCL's log)"
            if ran
            else "Benchmarks planned, not run (all_reduce, with NCCL_DEBUG=INFO)",
        ]
        rows = []
        for stage in report.stages:
            j = stage.judgement
            busbw = (
                f"{j.measured_gbps:.2f} GB/s @ {_size(j.size_bytes)}"
                if j and j.measured_gbps is not None
                else "-"
            )
            versus = (
                f"{j.status} {j.fraction:.0%} of {j.expectation.link}"
                if j and j.fraction is not None and j.expectation
                else "-"
            )
            rows.append(
                [
                    stage.name,
                    stage.backend,
                    stage.nranks,
                    _transport(stage),
                    stage.gdr,
                    busbw,
                    versus,
                ]
            )
        lines.append(
            format_table(
                ["stage", "backend", "ranks", "transport", "GDR", "busbw", "vs link"], rows
            )
        )
        for stage in report.stages:
            if stage.error:
                lines.append(f"  {stage.name}: {stage.error[:300]}")
    if report.cluster:
        lines += _cluster(report.cluster)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(report.doctor.items()))
    lines += ["", f"Doctor: {counts or 'no checks'} (`hpnet doctor` prints every check)"]
    if report.environment:
        verb = "ran" if ran else "would run"
        lines.append(
            f"Environment the benchmarks {verb} with (hpnet env): {env_text(report.environment)}"
        )
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


def env_text(environment: Mapping[str, str]) -> str:
    """The NCCL environment as ``NAME=value`` words; ``NCCL_*`` names that NCCL does not
    read (NVIDIA's images set NCCL_VERSION to their libnccl2 package) are set apart, so
    that they are not read as the NCCL a run used.

    >>> env_text({"NCCL_VERSION": "2.28.3-1", "NCCL_IB_DISABLE": "1"})
    'NCCL_IB_DISABLE=1 (also set, not read by NCCL: NCCL_VERSION=2.28.3-1)'
    """
    from hpnet.nccl.catalog import foreign  # noqa: PLC0415

    read = [f"{k}={v}" for k, v in sorted(environment.items()) if foreign(k) is None]
    other = [f"{k}={v}" for k, v in sorted(environment.items()) if foreign(k) is not None]
    text = " ".join(read) or "(none)"
    return text + (f" (also set, not read by NCCL: {' '.join(other)})" if other else "")


def render_plan(plan: CheckPlan) -> str:
    """``hpnet check --dry-run``: the stages the check would run, nothing run."""
    from hpnet.secrets import redact  # noqa: PLC0415

    gpus = f"{plan.num_gpus} GPU(s)" if plan.num_gpus else "no GPU"
    lines = [
        f"hpnet check --dry-run: {len(plan.stages)} stage(s) planned, nothing run",
        f"node {plan.node}: {gpus}; profile {plan.profile} -> transport {plan.transport}; "
        f"{plan.mode} check",
        "",
    ]
    rows = [
        [
            stage.kind.value,
            stage.name,
            stage.backend,
            stage.nranks,
            stage.num_gpus or "-",
            stage.fake_hosts,
            f"{_size(stage.sweep.sizes_bytes[0])}..{_size(stage.sweep.sizes_bytes[-1])}",
            f"net={stage.expect_net}" if stage.expect_net else "-",
            stage.link.link if stage.link else "-",
        ]
        for stage in plan.stages
    ]
    header = ["kind", "stage", "backend", "ranks", "GPUs", "NCCL hosts", "sizes", "verify",
              "judged against"]  # fmt: skip
    lines.append(format_table(header, rows))
    if plan.environment:
        shown = env_text({k: redact(k, v) for k, v in plan.environment.items()})
        lines.append(f"Environment the benchmarks would run with (hpnet env): {shown}")
    lines += [f"note: {note}" for note in plan.notes]
    return "\n".join(lines) + "\n"
