"""Human rendering of a doctor :class:`~hpnet.doctor.model.Report`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.doctor.model import Report

__all__ = ["render_report", "verdict_line"]


def verdict_line(report: Report) -> str:
    counts: dict[str, int] = {}
    for check in report.checks:
        counts[check.status.value] = counts.get(check.status.value, 0) + 1
    parts = [
        f"{counts[s]} {word}"
        for s, word in (
            ("FAIL", "failed"),
            ("WARN", "warnings"),
            ("PASS", "passed"),
            ("SKIP", "skipped"),
        )
        if counts.get(s)
    ]
    return f"hpnet doctor: {report.verdict.value} — {', '.join(parts)} ({report.node})"


def render_report(report: Report) -> str:
    lines = [verdict_line(report), f"variables checked: {report.variables_source}", ""]
    area = None
    for check in report.checks:
        if check.area != area:
            area = check.area
            lines.append(area)
        lines.append(f"  {check.status.value:<4}  {check.id:<20}  {check.summary}")
        if check.status.value in ("WARN", "FAIL"):
            # evidence and fix sit under the summary column (2 + 4 + 2 + 20 + 2)
            lines += [f"{'':30}{line}" for line in check.evidence]
            if check.fix:
                lines.append(f"{'':30}fix: {check.fix}")
    failing = [c for c in report.checks if c.status.value in ("FAIL", "WARN") and c.fix]
    if failing:
        lines += ["", "Fixes, most important first:"]
        order = sorted(failing, key=lambda c: c.status.value != "FAIL")
        lines += [f"  {i}. [{c.id}] {c.fix}" for i, c in enumerate(order, start=1)]
    return "\n".join(lines) + "\n"
