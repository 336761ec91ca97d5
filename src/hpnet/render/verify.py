"""Human rendering of a :class:`~hpnet.ncclog.report.VerifyReport`: the verdict
first, then the per-host transport table, communicators, findings, unknowns."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from hpnet.render.table import format_table
from hpnet.render.text import escaped

if TYPE_CHECKING:
    from hpnet.ncclog.report import VerifyReport

__all__ = ["render_verify"]

MAX_ROWS = 40


#: what stopped the job, for the fatal findings NCCL itself returned no error for
_STOPPED = {
    "watchdog-timeout": "the collective did not complete (PyTorch's watchdog)",
    "watchdog-stuck": "PyTorch's heartbeat monitor terminated the process",
    "collective-mismatch": "the collective did not complete (PyTorch's watchdog)",
    "watchdog-teardown": "PyTorch ended the process",
    "process-crashed": "the process crashed",
    "launcher-reported-failure": "the launcher ended the job",
    "nccl-tests-wrong-data": "the collective returned wrong data",
}


def _gdr(value: str | None) -> str:
    return value or "-"


def _short(chose: str, limit: int = 60) -> str:
    """A choice cut to fit a table cell (the whole sentence is in the verdict and --json)."""
    return chose if len(chose) <= limit else chose[: limit - 3] + "..."


def _uniq_lines(lines: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(lines))


def _diagnostics(report: VerifyReport) -> list[str]:
    """Per communicator: how many checks passed, and every result that is not a pass."""
    lines = []
    for entry in report.diagnostics[:MAX_ROWS]:
        counts: dict[str, int] = {}
        for check in entry.checks:
            counts[check.status] = counts.get(check.status, 0) + 1
        size = f", {entry.num_ranks} ranks" if entry.num_ranks else ""
        said = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no result line"
        name = f"comm {entry.comm}" if entry.comm else "no comm named"
        lines.append(f"  {name}{size} (printed by {', '.join(entry.processes)}): {said}")
        lines += [f"    {c.status.upper():<6} {c.message}" for c in entry.checks]
        lines += [f"    differs: {e}" for e in entry.env_differs]
        lines += [f"    {c}" for c in entry.completed]
    return lines


def render_verify(report: VerifyReport) -> str:
    """The report as text for a terminal or an issue. Control characters that came
    from a log (escape sequences, carriage returns) are shown escaped."""
    report = escaped(report)
    lines = [f"hpnet verify: {report.status} — {report.verdict}"]
    sources = report.sources
    shown = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
    lines.append(f"read {report.num_lines} lines ({report.num_nccl_lines} from NCCL) of {shown}")
    if report.nccl_versions:
        lines.append(f"NCCL {', '.join(report.nccl_versions)}")
    for result in report.expectations:
        mark = "met" if result.met else "NOT MET"
        lines.append(f"expect {result.expectation}: {mark} — {result.detail}")
    if report.hosts:
        lines += ["", f"Hosts ({len(report.hosts)})"]
        rows = [
            [
                h.host,
                h.num_processes,
                "; ".join(_short(c) for c in h.chose) or "-",
                ", ".join(h.inter_node) or "-",
                ", ".join(h.intra_node) or "-",
                ", ".join(h.nics) or "-",
                _gdr(h.gdr),
            ]
            for h in report.hosts[:MAX_ROWS]
        ]
        lines.append(
            format_table(
                ["host", "procs", "NCCL chose", "inter-node", "intra-node", "NICs used", "GDR"],
                rows,
            )
        )
        if len(report.hosts) > MAX_ROWS:
            lines.append(f"  ... {len(report.hosts) - MAX_ROWS} more hosts (--json has all)")
        said = _uniq_lines(e for h in report.hosts for e in h.chose_evidence)
        if said:
            lines.append("  as the log says:")
            lines += [f"    {e}" for e in said[:4]]
    if report.communicators:
        lines += ["", f"Communicators ({len(report.communicators)})"]
        rows = [
            [
                c.id,
                f"{c.ranks_seen}/{c.nranks}",
                len(c.hosts),
                ", ".join(c.inter_node) or "-",
                ", ".join(c.intra_node) or "-",
                "complete" if c.init_complete else ("aborted" if c.aborted else "incomplete"),
            ]
            for c in report.communicators[:MAX_ROWS]
        ]
        lines.append(
            format_table(["comm", "ranks seen", "hosts", "inter-node", "intra-node", "init"], rows)
        )
        if len(report.communicators) > MAX_ROWS:
            lines.append(f"  ... {len(report.communicators) - MAX_ROWS} more (--json has all)")
    if report.diagnostics:
        lines += ["", "NCCL's own diagnostics (NCCL DIAG lines)"]
        lines += _diagnostics(report)
    if report.findings:
        lines += ["", "Findings"]
        for finding in report.findings:
            times = f" (x{finding.count})" if finding.count > 1 else ""
            stopped = f" — fatal: {_STOPPED.get(finding.id, 'NCCL returned an error')}"
            stopped = stopped if finding.fatal else ""
            lines.append(
                f"  {finding.severity.upper():<7}  [{finding.id}] {finding.title}{times}{stopped}"
            )
            lines += [f"           {e}" for e in finding.evidence]
            lines += [f"           => {c}" for c in finding.conclusions]
            lines.append(f"           cause: {finding.cause}")
            lines.append(f"           fix: {finding.fix}")
    if report.facts:
        lines += ["", "Facts that explain the numbers"]
        for fact in report.facts:
            lines.append(f"  [{fact.id}] {fact.text}")
            lines += [f"           {e}" for e in fact.evidence]
    if report.environment:
        lines += ["", "Environment NCCL echoed"]
        lines += [f"  {e}" for e in report.environment[:MAX_ROWS]]
    if report.unknowns:
        lines += ["", "Not shown by this log"]
        lines += [f"  - {u}" for u in report.unknowns]
    return "\n".join(lines) + "\n"
