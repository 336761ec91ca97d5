"""Human rendering of a doctor :class:`~hpnet.doctor.model.Report`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.doctor.model import Report

__all__ = ["render_report", "verdict_line"]


def verdict_line(report: Report, command: str = "hpnet doctor") -> str:
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
    return f"{command}: {report.verdict.value} — {', '.join(parts)} ({report.node})"


def render_report(report: Report, *, command: str = "hpnet doctor", scope: str = "") -> str:
    """The report as text: checks by area; under a WARN or FAIL its evidence, the
    commands to paste (``fix:``, one per line) and what they cannot say (``note:``).
    ``command`` names the command in the verdict line; ``scope`` replaces the line
    that says which variables were checked. Control characters in what was read (an
    env file's value, a listing's device name) are shown escaped."""
    from hpnet.check.impact import doctor_impact  # noqa: PLC0415
    from hpnet.render.text import escape_controls  # noqa: PLC0415

    lines = [
        verdict_line(report, command),
        scope or f"variables checked: {report.variables_source}",
        "",
    ]
    area = None
    pad = " " * 30  # under the summary column (2 + 4 + 2 + 20 + 2)
    for check in report.checks:
        if check.area != area:
            area = check.area
            lines.append(area)
        lines.append(f"  {check.status.value:<4}  {check.id:<20}  {check.summary}")
        if check.status.value in ("WARN", "FAIL"):
            lines += [f"{pad}{line}" for line in check.evidence]
            lines += _block(pad, "fix:  ", check.fix)
            lines += _block(pad, "note: ", check.fix_note)
    failing = [
        c for c in report.checks if c.status.value in ("FAIL", "WARN") and (c.fix or c.fix_note)
    ]
    if failing:
        lines += ["", "Fixes, most important first:"]
        # hpnet check's order too (one list): FAIL before WARN, then the impact table
        order = sorted(
            failing,
            key=lambda c: (c.status.value != "FAIL", doctor_impact(c.id, c.status.value)),
        )
        for number, check in enumerate(order, start=1):
            head = f"  {number}. [{check.id}] "
            indent = " " * len(head)
            body = (check.fix or "").splitlines()
            if check.fix_note:
                body.append(f"# {check.fix_note}")
            lines.append(head + body[0])
            lines += [indent + line for line in body[1:]]
    # each line escaped on its own: a fix's lines are lines, a newline inside one is not
    return "\n".join(escape_controls(line) for line in lines) + "\n"


def _block(pad: str, label: str, text: str | None) -> list[str]:
    if not text:
        return []
    first, *rest = text.splitlines()
    return [f"{pad}{label}{first}", *(f"{pad}{' ' * len(label)}{line}" for line in rest)]
