"""`hpnet check --report DIR`: report.json (the data) and report.html, one file that
opens from disk with no network: the verdict, the fixes, the benchmark figures against
the link's peak and the check's floor, the transports, the doctor's findings. Every
text from the node or a log is HTML-escaped.

What check prints or writes (text, --json, report.json, report.html) goes through
:func:`redacted` first: a secret-looking variable's value (hpnet.secrets) is
``<redacted>`` wherever it appears, and a credential inside any text
(``https://user:pass@host``) loses its password, as ``hpnet launch`` shows them.

The page has hpnet's reports' one look, and the folder is written as every report
folder is (:mod:`hpnet.cluster.report`)."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hpnet.cluster.report import page_head, write_report_files

if TYPE_CHECKING:
    from hpnet.check.model import CheckReport, ClusterView

__all__ = ["redacted", "render_html", "report_data", "write_report"]


def redacted(report: CheckReport) -> CheckReport:
    """The report as it may be shown: the environment's secret values ``<redacted>``
    (:func:`hpnet.secrets.redact`), and in every other text of it (the problems, the
    doctor's results, the stages, the benchmarks, the cluster view) a credential
    (:func:`hpnet.secrets.redact_text`) or the value of one of those secret variables
    (a doctor's message or a log line may quote it) replaced by ``<redacted>``.

    >>> from hpnet.check.model import CheckReport
    >>> from hpnet.result import Problem, Verdict
    >>> shown = redacted(CheckReport(verdict=Verdict.READY, headline="ok", node="n", profile="auto",
    ...     transport="socket", gpus=0, gpu_name=None, rdma_ports=(), stages=(),
    ...     problems=(Problem(impact=5, what="NCCL_NET_TOKEN=abcd is set", code="x"),),
    ...     doctor={}, doctor_checks=(), environment={"NCCL_NET_TOKEN": "abcd",
    ...     "NCCL_IB_HCA": "mlx5"}))
    >>> shown.environment, shown.problems[0].what
    ({'NCCL_NET_TOKEN': '<redacted>', 'NCCL_IB_HCA': 'mlx5'}, 'NCCL_NET_TOKEN=<redacted> is set')
    """
    from hpnet.secrets import REDACTED, is_secret, redact, redact_text  # noqa: PLC0415

    # the longest first, so that a value holding a shorter one goes whole; a value
    # shorter than MIN_SECRET_CHARS is hidden where its variable is shown, not in text
    hidden = sorted(
        {
            v
            for k, v in report.environment.items()
            if is_secret(k, v) and len(v) >= MIN_SECRET_CHARS
        },
        key=len,
        reverse=True,
    )

    def text(value: str) -> str:
        for secret in hidden:
            value = value.replace(secret, REDACTED)
        return redact_text(value)

    shown: CheckReport = _scrub(report, text)
    return dataclasses.replace(
        shown, environment={k: redact(k, v) for k, v in report.environment.items()}
    )


#: the shortest secret value that is also looked for inside other text
MIN_SECRET_CHARS = 4


def _scrub(value: Any, text: Callable[[str], str]) -> Any:
    """``value`` with ``text`` applied to every string in it: through dataclasses,
    dicts (their values), lists and tuples. A ``str`` enum stays what it is."""
    if type(value) is str:
        return text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            field.name: _scrub(getattr(value, field.name), text)
            for field in dataclasses.fields(value)
            if field.init
        }
        return dataclasses.replace(value, **changes)
    if isinstance(value, dict):
        return {key: _scrub(item, text) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_scrub(item, text) for item in value)
    return value


def report_data(report: CheckReport) -> dict[str, Any]:
    from hpnet.check.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import envelope  # noqa: PLC0415

    report = redacted(report)
    return envelope(report, schema_version=SCHEMA_VERSION, after={"exit_code": report.exit_code})


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _figure(report: CheckReport) -> str:
    from hpnet.bench.plot import render_svg, series_of  # noqa: PLC0415

    figures = []
    for stage in report.stages:
        if stage.bench is None:
            continue
        series = series_of(stage.bench, stage.name)
        if not series:
            continue
        references: list[tuple[str, float]] = []
        j = stage.judgement
        if j is not None and j.expectation is not None:
            peak = j.expectation.peak_gbps
            references = [(f"{j.expectation.link} peak {peak:g} GB/s", peak),
                          (f"check's floor {peak / 2:g} GB/s", peak / 2)]  # fmt: skip
        figures.append(
            f"<h3>{_e(stage.name)}</h3>"
            + render_svg(series, f"all_reduce bus bandwidth, {stage.name}", references)
        )
    return "\n".join(figures)


def _num(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def _cluster_html(cluster: ClusterView) -> str:
    rows = "".join(
        f"<tr><td>{_e(n.node)}</td><td>{len(n.ranks)}</td><td>{_e(n.gpus)}</td>"
        f"<td>{_e(n.doctor)}</td><td>{_e(n.nccl_version or '-')}</td>"
        f"<td>{_num(n.intra_busbw_gbps)}</td><td>{_num(n.ring_busbw_gbps)}</td>"
        f"<td>{_e(', '.join(n.inter_node) or '-')}</td></tr>"
        for n in cluster.nodes
    )
    mismatches = "".join(
        f"<li>rank {m.rank} on {_e(m.node)}: {_e('; '.join(m.differs))}</li>"
        for m in cluster.env_mismatches
    )
    return (
        "<h2>Nodes</h2><table id='nodes'><tr><th>node</th><th>ranks</th><th>GPUs</th>"
        "<th>doctor</th><th>NCCL</th><th>own busbw (GB/s)</th><th>hop to the next (GB/s)</th>"
        f"<th>inter-node transport</th></tr>{rows}</table>"
        + (
            f"<h3>Ranks with a different environment</h3><ul>{mismatches}</ul>"
            if mismatches
            else ""
        )
    )


def render_html(report: CheckReport) -> str:
    report = redacted(report)
    good = report.verdict == "READY"
    parts = [
        page_head(f"hpnet check: {_e(report.verdict)} ({_e(report.node)})"),
        f"<h1>hpnet check — {_e(report.node)}</h1>",
        (
            f"<p class='run' id='run'>{_e(report.run.get('date', ''))} · hpnet "
            f"{_e(report.run.get('hpnet', ''))} on {_e(report.run.get('host', ''))} · "
            f"<code>{_e(report.run.get('command', ''))}</code></p>"
            if report.run
            else ""
        ),
        f"<div class='verdict {'ready' if good else 'notready'}' id='verdict'>"
        f"<b>{_e(report.verdict)}</b> — {_e(report.headline)}</div>",
        (
            f"<p class='verdict notready' id='incomplete'><b>INCOMPLETE</b>: "
            f"{_e(report.incomplete)}. This report holds what was judged until then.</p>"
            if report.incomplete
            else ""
        ),
        f"<p>{report.gpus} GPU(s) {_e(report.gpu_name or '')}; "
        f"{len(report.rdma_ports)} RDMA port(s); profile <code>{_e(report.profile)}</code>, "
        f"transport <code>{_e(report.transport)}</code>; {_e(report.mode)} check.</p>",
    ]
    if report.problems:
        parts.append("<h2>What to fix, most important first</h2><ol id='problems'>")
        for problem in report.problems:
            evidence = "".join(f"<li>{_e(e)}</li>" for e in problem.evidence if e)
            fix = (
                f"<div class='fix'>fix: <code>{_e(problem.fix)}</code></div>" if problem.fix else ""
            )
            parts.append(
                f"<li><span class='impact'>{_e(problem.what)}</span><ul>{evidence}</ul>{fix}</li>"
            )
        parts.append("</ol>")
    parts.append("<h2>Transports and bandwidth</h2><table id='transports'><tr><th>stage</th>"
                 "<th>backend</th><th>ranks</th><th>intra-node</th><th>inter-node</th>"
                 "<th>GDR</th><th>busbw</th><th>vs link</th></tr>")  # fmt: skip
    for stage in report.stages:
        j = stage.judgement
        busbw = f"{j.measured_gbps:.2f} GB/s" if j and j.measured_gbps is not None else "-"
        versus = (
            f"{j.status}: {j.fraction:.0%} of {j.expectation.link}"
            if j and j.fraction is not None and j.expectation
            else (j.detail if j else "-")
        )
        parts.append(
            f"<tr><td>{_e(stage.name)}</td><td>{_e(stage.backend)}</td><td>{stage.nranks}</td>"
            f"<td>{_e(', '.join(stage.transports.intra_node) or '-')}</td>"
            f"<td>{_e(', '.join(stage.transports.inter_node) or '-')}</td>"
            f"<td>{_e(stage.gdr or '-')}</td><td>{_e(busbw)}</td><td>{_e(versus)}</td></tr>"
        )
    parts.append("</table>")
    parts.append(_figure(report))
    if report.cluster:
        parts.append(_cluster_html(report.cluster))
    parts.append("<h2>Doctor</h2><p>")
    parts.append(", ".join(f"{n} {_e(s)}" for s, n in sorted(report.doctor.items())) + "</p>")
    if report.doctor_checks:
        parts.append("<table id='checks'><tr><th>check</th><th>status</th><th>summary</th>"
                     "<th>fix</th></tr>")  # fmt: skip
        for check in report.doctor_checks:
            parts.append(
                f"<tr><td>{_e(check.id)}</td><td>{_e(check.status)}</td>"
                f"<td>{_e(check.summary)}</td>"
                f"<td><code>{_e(check.fix or '')}</code></td></tr>"
            )
        parts.append("</table>")
    if report.environment:
        parts.append("<h2>Environment the benchmarks ran with</h2><pre>")
        parts.append(_e("\n".join(f"{k}={v}" for k, v in sorted(report.environment.items()))))
        parts.append("</pre>")
    for note in report.notes:
        parts.append(f"<p class='note'>note: {_e(note)}</p>")
    parts.append("<p><small>report.json beside this page holds the data.</small></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(directory: str, report: CheckReport) -> None:
    """report.json and report.html in ``directory`` (made with its parents);
    InputError naming the directory when they cannot be written
    (:func:`hpnet.cluster.report.write_report_files`)."""
    from hpnet.jsonout import dumps  # noqa: PLC0415

    write_report_files(directory, dumps(report_data(report)) + "\n", render_html(report))
