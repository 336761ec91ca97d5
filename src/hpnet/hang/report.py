"""``hpnet hang --report DIR``: report.html (one file, opens from disk: no script, no
link out) and report.json. The page shows the verdict, each cause with its evidence,
and per group the ranks x sequence numbers of its last collectives: what each rank
recorded, the collective where the ranks part marked, the ranks a cause names marked."""

from __future__ import annotations

import html
import os

from hpnet.cluster.report import page_head
from hpnet.hang.model import Cause, GroupView, HangReport

__all__ = ["render_html", "write_report"]

STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:80em}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "td,th{border:1px solid #ccc;padding:.2em .5em;font-size:90%;text-align:left}"
    ".named{background:#fdd}.part{outline:2px solid #c00}.none{color:#999}"
    ".verdict{font-size:120%;font-weight:bold}code{white-space:pre-wrap}"
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _cause(number: int, cause: Cause) -> str:
    evidence = "".join(f"<li><code>{_e(e)}</code></li>" for e in cause.evidence)
    follows = (
        f"<p>follows from: {_e(cause.consequence_of)} (its ranks wait there)</p>"
        if cause.consequence_of
        else ""
    )
    if cause.also_in:
        follows += f"<p>the same in: {_e(', '.join(cause.also_in))}</p>"
    return (
        f"<h3>{number}. [{_e(cause.kind)}] {_e(cause.headline())}</h3>{follows}"
        f"<ul>{evidence}</ul><p>fix: {_e(cause.fix)}</p>"
    )


def _group(group: GroupView, causes: tuple[Cause, ...]) -> str:
    named = {r for c in causes if c.pg == group.pg for r in c.ranks}
    parts = {c.seq for c in causes if c.pg == group.pg}
    seqs = sorted({s for row in group.recent.values() for s in row})
    head = "".join(f"<th class='part'>#{s}</th>" if s in parts else f"<th>#{s}</th>" for s in seqs)
    rows = []
    for rank in group.ranks:
        recorded = group.recent.get(rank)
        cls = " class='named'" if rank in named else ""
        if recorded is None:
            cells = f"<td class='none' colspan='{max(len(seqs), 1)}'>no dump</td>"
        else:
            cells = "".join(
                f"<td>{_e(recorded[s])}</td>" if s in recorded else "<td class='none'>-</td>"
                for s in seqs
            )
        rows.append(f"<tr{cls}><th>rank {rank}</th>{cells}</tr>")
    name = f"{group.pg} ({group.desc})" if group.desc else group.pg
    return f"<h2>group {_e(name)}</h2><table><tr><th>rank</th>{head}</tr>{''.join(rows)}</table>"


def render_html(report: HangReport) -> str:
    word = {"hang": "STUCK", "no-hang": "NO HANG", "unknown": "UNKNOWN"}[report.status]
    causes = "".join(_cause(n, c) for n, c in enumerate(report.causes, 1))
    groups = "".join(_group(g, report.causes) for g in report.groups)
    return (
        page_head(f"hpnet hang: {_e(word)}", style=STYLE)
        + f"<p class='verdict'>hpnet hang: {_e(word)} — {_e(report.headline)}</p>"
        f"{causes}{groups}"
        f"<p>Read: {len(report.dumps)} Flight Recorder dump(s), {len(report.ras)} RAS "
        f"report(s), {len(report.errors)} error line(s).</p></body></html>\n"
    )


def write_report(report: HangReport, directory: str, document: str) -> tuple[str, str]:
    """Write report.html and report.json (``document``: the --json text) into
    ``directory`` (made if need be), as check's and isolate's reports are written
    (:func:`hpnet.cluster.report.write_report_files`); returns their paths."""
    from hpnet.cluster.report import write_report_files  # noqa: PLC0415

    write_report_files(directory, document, render_html(report))
    return os.path.join(directory, "report.html"), os.path.join(directory, "report.json")
