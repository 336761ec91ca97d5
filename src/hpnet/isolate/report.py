"""`hpnet isolate --report DIR`: report.json (the data, docs/isolate-schema.md) and
report.html, one page that opens from disk with no network and no script: the
headline, each outlier (evidence, fix, drain commands), the node x node bandwidth
heatmap, each node against the cluster median (and the baseline's), the rounds, the
per-rail tests and the drift. Every text of the data is HTML-escaped (node names and
log lines come from the ranks), its control characters first made visible as in the
text report. Above :data:`MATRIX_MAX_NODES` nodes the figures show the nodes of the
outliers and suspect tests and a sample of the others (:func:`shown_nodes`), and say so.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hpnet.cluster.report import STYLE as REPORT_STYLE
from hpnet.cluster.report import page_head, write_report_files
from hpnet.render.isolate import headline
from hpnet.render.text import escape_controls

__all__ = ["MATRIX_MAX_NODES", "render_html", "shown_nodes", "write_report"]

#: the most nodes whose rows and columns the matrix (and whose bars the chart) shows
MATRIX_MAX_NODES = 64
#: a whole-node test below this fraction of the cluster median makes its nodes suspect
SUSPECT_FRACTION = 0.9
LABEL_CHARS = 22  # a node's name on an axis, cut; its whole name is in the tooltip

STYLE = """
svg text{font-family:system-ui,sans-serif}.cell:hover{stroke:#000;stroke-width:1}
.legend span{display:inline-block;width:1.2em;height:1em;vertical-align:middle;
border:1px solid #aaa;margin:0 .3em 0 1em}.note{color:#555}pre.cmd{background:#f3f3f3;
padding:4px 8px;margin:.2em 0;white-space:pre-wrap}ul.evidence{margin:.3em 0}
"""  # after hpnet.cluster.report.STYLE: one look for hpnet's reports

Row = Mapping[str, Any]
Stat = tuple[float, float, int]  # a node's best and median GB/s, and its tests


def _e(text: object) -> str:
    return html.escape(escape_controls(str(text)), quote=True)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _gbps(value: object) -> str:
    return "-" if (number := _number(value)) is None else f"{number:.2f}"


def _cut(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def colour(ratio: float | None) -> str:
    """A cell's colour for its bandwidth over the cluster median: red at half of it or
    below, yellow at 75%, green at the median or above; dark grey for a failed test.

    >>> colour(1.2), colour(0.75), colour(0.3), colour(None)
    ('hsl(120,65%,48%)', 'hsl(60,65%,48%)', 'hsl(0,65%,48%)', '#333')
    """
    if ratio is None:
        return "#333"
    hue = 120 * min(max((ratio - 0.5) / 0.5, 0.0), 1.0)
    return f"hsl({hue:.0f},65%,48%)"


# -- the data ------------------------------------------------------------------------------
def _whole_node(data: Mapping[str, Any]) -> list[Row]:
    """The whole-node tests (``rail`` null): the matrix's cells."""
    return [p for p in data.get("pairs") or () if p.get("rail") is None]


def _ok_gbps(row: Row) -> float | None:
    return None if row.get("error") else _number(row.get("median_gbps"))


def _reference(data: Mapping[str, Any]) -> float | None:
    """The cluster median; without one (every round-1 test failed) the median of the
    whole-node tests that worked, if any."""
    median = _number(data.get("cluster_median_gbps"))
    if median is not None and median > 0:
        return median
    values = [v for v in map(_ok_gbps, _whole_node(data)) if v is not None]
    median = statistics.median(values) if values else None
    return median if median is not None and median > 0 else None


def _ratio(value: float | None, reference: float | None) -> float | None:
    return None if value is None else value / reference if reference else 1.0


def _all_nodes(data: Mapping[str, Any]) -> list[str]:
    """The job's nodes in its order, then any a test names that the list lacks."""
    named = [str(n) for n in data.get("nodes") or ()]
    named += [str(p[k]) for p in data.get("pairs") or () for k in ("a", "b") if p.get(k)]
    return list(dict.fromkeys(named))


def node_bandwidth(data: Mapping[str, Any]) -> dict[str, Stat]:
    """Each node's best and median whole-node test bandwidth (GB/s) and the number of
    such tests that worked; nodes with none are absent.

    >>> node_bandwidth({"pairs": [{"a": "x", "b": "y", "rail": None, "median_gbps": 40.0},
    ...     {"a": "x", "b": "z", "rail": None, "median_gbps": 20.0}]})["x"]
    (40.0, 30.0, 2)
    """
    seen: dict[str, list[float]] = {}
    for row in _whole_node(data):
        value = _ok_gbps(row)
        if value is None:
            continue
        for node in {str(row.get("a")), str(row.get("b"))}:
            seen.setdefault(node, []).append(value)
    return {n: (max(v), statistics.median(v), len(v)) for n, v in seen.items()}


def _suspects(data: Mapping[str, Any], reference: float | None) -> list[str]:
    """The nodes of the outliers, then those of the suspect tests (re-pair and rail
    tests, failed tests, whole-node tests well below the median), then the round-1
    partners of all those."""
    nodes = [str(o[k]) for o in data.get("outliers") or () for k in ("node", "peer") if o.get(k)]
    for row in data.get("pairs") or ():
        ratio = _ratio(_ok_gbps(row), reference)
        if (row.get("round") or 1) >= 2 or ratio is None or ratio < SUSPECT_FRACTION:
            nodes += [str(row.get("a")), str(row.get("b"))]
    suspect = set(nodes)
    for row in _whole_node(data):
        if row.get("round") == 1 and {str(row.get("a")), str(row.get("b"))} & suspect:
            nodes += [str(row.get("a")), str(row.get("b"))]
    return list(dict.fromkeys(nodes))


def shown_nodes(
    data: Mapping[str, Any], limit: int = MATRIX_MAX_NODES
) -> tuple[list[str], str | None]:
    """The nodes the matrix and the bars show, in the job's order, and a note when not
    all of them: the nodes of outliers and suspect tests first, then whole round-1 pairs
    taken evenly through the rest (so that a sampled node's cell shows).

    >>> pairs = [{"round": 1, "a": f"n{i}", "b": f"n{i + 1}", "rail": None,
    ...     "median_gbps": 20.0 if i == 4 else 48.0} for i in range(0, 8, 2)]
    >>> shown_nodes({"nodes": [f"n{i}" for i in range(8)], "pairs": pairs}, limit=4)[0]
    ['n2', 'n3', 'n4', 'n5']
    """
    nodes = _all_nodes(data)
    if len(nodes) <= limit:
        return nodes, None
    known = set(nodes)
    suspects = [n for n in _suspects(data, _reference(data)) if n in known]
    focus = suspects[:limit]
    chosen = set(focus)
    rest = [
        (str(p.get("a")), str(p.get("b")))
        for p in _whole_node(data)
        if p.get("round") == 1 and not {str(p.get("a")), str(p.get("b"))} & chosen
    ]
    count = min((limit - len(chosen)) // 2, len(rest))
    for i in range(count):  # evenly through the job: the middle of each of count parts
        chosen.update(rest[(2 * i + 1) * len(rest) // (2 * count)])
    unpaired = iter(n for n in nodes if n not in chosen)  # a run without round-1 tests
    while len(chosen) < limit and (node := next(unpaired, None)) is not None:
        chosen.add(node)
    return [n for n in nodes if n in chosen], (
        f"{len(nodes)} nodes: the matrix and the bars show {len(focus)} of the "
        f"{len(suspects)} nodes in outliers or suspect tests (with their round-1 partners) "
        f"and a sample of {len(chosen) - len(focus)} others; report.json holds every test"
    )


# -- the figures ---------------------------------------------------------------------------
def _cells(data: Mapping[str, Any], shown: Sequence[str]) -> dict[tuple[str, str], list[Row]]:
    """(a, b) and (b, a) to the whole-node tests between a and b, both shown."""
    at = set(shown)
    cells: dict[tuple[str, str], list[Row]] = {}
    for row in _whole_node(data):
        a, b = str(row.get("a")), str(row.get("b"))
        if a in at and b in at and a != b:
            cells.setdefault((a, b), []).append(row)
            cells.setdefault((b, a), []).append(row)
    return cells


def _cell_text(a: str, b: str, rows: Sequence[Row], reference: float | None) -> str:
    parts = [
        f"round {row.get('round')}: "
        + (
            f"failed: {row.get('error') or 'no result'}"
            if (value := _ok_gbps(row)) is None
            else f"{value:.2f} GB/s ({_ratio(value, reference) or 0.0:.0%} of the cluster median)"
        )
        for row in rows
    ]
    return f"{a} - {b}: " + "; ".join(parts)


def _worst(rows: Sequence[Row]) -> float | None:
    """The slowest of a cell's tests; None (failed) when one failed."""
    values = [_ok_gbps(r) for r in rows]
    return None if None in values else min(v for v in values if v is not None)


def _axis_labels(shown: Sequence[str], left: int, top: int, cell: int, font: int) -> list[str]:
    labels = []
    for i, node in enumerate(shown):
        middle = i * cell + cell // 2 + font // 3
        name = _e(_cut(node))
        labels.append(
            f"<text x='{left - 4}' y='{top + middle}' text-anchor='end' font-size='{font}'>"
            f"<title>{_e(node)}</title>{name}</text>"
        )
        x = left + middle
        labels.append(
            f"<text transform='translate({x},{top - 4}) rotate(-90)' font-size='{font}'>"
            f"<title>{_e(node)}</title>{name}</text>"
        )
    return labels


def matrix_svg(data: Mapping[str, Any], shown: Sequence[str]) -> str:
    """The node x node heatmap: a ``rect class='cell'`` per tested ordered pair."""
    reference = _reference(data)
    cell = max(6, min(22, 660 // max(len(shown), 1)))
    font = max(7, min(12, cell - 2))
    longest = max((len(_cut(n)) for n in shown), default=1)
    left = top = 12 + int(longest * font * 0.62)
    size = cell * len(shown)
    index = {n: i for i, n in enumerate(shown)}
    parts = [
        f"<svg id='matrix' xmlns='http://www.w3.org/2000/svg' width='{left + size + 10}' "
        f"height='{top + size + 10}' role='img' aria-label='node by node bus bandwidth'>",
        f"<rect x='{left}' y='{top}' width='{size}' height='{size}' fill='#fafafa' stroke='#ccc'/>",
    ]
    parts += [
        f"<rect class='self' x='{left + i * cell}' y='{top + i * cell}' width='{cell}' "
        f"height='{cell}' fill='#ddd'/>"
        for i in range(len(shown))
    ]
    for (a, b), rows in _cells(data, shown).items():
        fill = colour(_ratio(_worst(rows), reference))
        parts.append(
            f"<rect class='cell' x='{left + index[b] * cell}' y='{top + index[a] * cell}' "
            f"width='{cell}' height='{cell}' fill='{fill}'>"
            f"<title>{_e(_cell_text(a, b, rows, reference))}</title></rect>"
        )
    parts += _axis_labels(shown, left, top, cell, font)
    parts.append("</svg>")
    return "".join(parts)


def _legend(reference: float | None) -> str:
    against = f"{reference:.2f} GB/s" if reference is not None else "none measured"
    swatches = [(colour(0.5), "half or less"), (colour(0.75), "75%"),
                (colour(1.0), "the median or more"), (colour(None), "failed"),
                ("#fafafa", "not tested")]  # fmt: skip
    items = "".join(f"<span style='background:{c}'></span>{_e(t)}" for c, t in swatches)
    return (
        f"<p class='legend'>Colour: the test's median busbw against the cluster median "
        f"({against}):{items}. Hover a cell for its numbers.</p>"
    )


def _bar_rows(data: Mapping[str, Any], shown: Sequence[str]) -> list[tuple[str, Stat | None]]:
    """The nodes with their (best, median, tests), slowest median first, those without a
    working whole-node test last."""
    stats = node_bandwidth(data)
    rows = [(n, stats.get(n)) for n in shown]
    return sorted(rows, key=lambda r: (r[1] is None, r[1][1] if r[1] else 0.0))


def _bar(
    y: int, node: str, stat: Stat | None, *, left: int, scale: float, ref: float | None
) -> str:
    label = (
        f"<text x='{left - 4}' y='{y + 10}' text-anchor='end' font-size='11'>"
        f"<title>{_e(node)}</title>{_e(_cut(node))}</text>"
    )
    if stat is None:
        return label + f"<text x='{left + 4}' y='{y + 10}' font-size='11'>no working test</text>"
    best, median, count = stat
    ratio = _ratio(median, ref) or 0.0
    tip = _e(
        f"{node}: median {median:.2f} GB/s ({ratio:.0%} of the cluster median), "
        f"best {best:.2f} GB/s, over {count} whole-node test(s)"
    )
    return (
        label + f"<rect class='best' x='{left}' y='{y + 1}' width='{best * scale:.1f}' height='12' "
        f"fill='#cfdcec'><title>{tip}</title></rect>"
        + f"<rect class='median' x='{left}' y='{y + 4}' width='{median * scale:.1f}' "
        f"height='6' fill='{colour(ratio)}'><title>{tip}</title></rect>"
    )


def _bar_line(x: float, height: int, text: str, stroke: str, *, below: bool) -> str:
    """A dashed line, labelled above the bars or below (cluster and baseline are close)."""
    y = height + 14 if below else 10
    return (
        f"<line x1='{x:.1f}' y1='14' x2='{x:.1f}' y2='{height + 2}' stroke='{stroke}' "
        f"stroke-dasharray='4 3'/><text x='{x:.1f}' y='{y}' font-size='11' "
        f"text-anchor='middle' fill='{stroke}'>{_e(text)}</text>"
    )


def bars_svg(data: Mapping[str, Any], shown: Sequence[str]) -> str:
    """Each node's best (light) and median (coloured) whole-node test bandwidth, with
    the cluster median and the baseline's as dashed lines."""
    rows = _bar_rows(data, shown)
    ref = _reference(data)
    baseline = _number(data.get("baseline_median_gbps"))
    top = max([s[0] for _, s in rows if s] + [ref or 0.0, baseline or 0.0, 1e-9])
    left, width = 12 + int(max((len(_cut(n)) for n in shown), default=1) * 6.8), 560
    scale = width / (1.05 * top)
    height = 20 + 15 * len(rows)
    parts = [
        f"<svg id='bars' xmlns='http://www.w3.org/2000/svg' width='{left + width + 60}' "
        f"height='{height + 18}' role='img' aria-label='each node against the cluster median'>"
    ]
    parts += [
        _bar(20 + 15 * i, n, s, left=left, scale=scale, ref=ref) for i, (n, s) in enumerate(rows)
    ]
    if ref is not None:
        x = left + ref * scale
        parts.append(_bar_line(x, height, f"cluster {ref:.1f}", "#222", below=False))
    if baseline is not None:
        x = left + baseline * scale
        parts.append(_bar_line(x, height, f"baseline {baseline:.1f}", "#36c", below=True))
    parts.append("</svg>")
    return "".join(parts)


# -- the page ------------------------------------------------------------------------------
def _subject(outlier: Row) -> str:
    kind = outlier.get("kind")
    if kind == "cluster":
        return "the whole cluster"
    if kind == "group":
        return f"group {outlier.get('group')}"
    if kind == "link":
        rail = f" (rail {outlier['rail']})" if outlier.get("rail") is not None else ""
        return f"the link {outlier.get('node')} - {outlier.get('peer')}{rail}"
    text = f"node {outlier.get('node')}"
    if kind == "rail":
        nic = f" ({outlier['nic']})" if outlier.get("nic") else ""
        text += f" rail {outlier.get('rail')}{nic}"
    return text


def _outliers_html(outliers: Sequence[Row]) -> str:
    if not outliers:
        return ""
    items = []
    for o in outliers:
        code = f", {o['code']}" if o.get("code") else ""
        evidence = "".join(f"<li>{_e(line)}</li>" for line in o.get("evidence") or ())
        fix = f"<div class='fix'>fix: {_e(o['fix'])}</div>" if o.get("fix") else ""
        drain = "".join(f"<pre class='cmd'>{_e(c)}</pre>" for c in o.get("drain") or ())
        if o.get("not_drained"):
            drain += f"<div>not drained: {_e(o['not_drained'])}</div>"
        items.append(
            f"<li><span class='impact'>{_e(_subject(o))}</span>: {_e(o.get('fault'))} fault"
            f"{_e(code)}<ul class='evidence'>{evidence}</ul>{fix}"
            + (f"<div>drain (the scheduler's commands):{drain}</div>" if drain else "")
            + "</li>"
        )
    return "<h2>Outliers</h2><ol id='outliers'>" + "".join(items) + "</ol>"


def _inconclusive_html(rows: Sequence[Row]) -> str:
    if not rows:
        return ""
    items = "".join(
        f"<li>{_e(r.get('node'))}: round {_e(r.get('round'))}: {_e(r.get('cause'))}</li>"
        for r in rows
    )
    return (
        "<h2>Not judged</h2><p>The harness could not run these nodes' tests, or two good "
        "nodes measured beside them were as slow: no evidence about them, neither good "
        f"nor bad.</p><ul id='inconclusive'>{items}</ul>"
    )


def _rounds_html(data: Mapping[str, Any]) -> str:
    parts = ["<h2>Rounds</h2><div id='rounds'>"]
    for r in data.get("rounds") or ():
        failed = f", {r.get('num_errors')} failed" if r.get("num_errors") else ""
        findings = "".join(f"<li>{_e(f)}</li>" for f in r.get("findings") or ())
        parts.append(
            f"<h3>{_e(r.get('number'))} {_e(r.get('name'))}</h3><p>{_e(r.get('purpose'))}: "
            f"{_e(r.get('num_tests'))} tests{_e(failed)}</p><ul>{findings}</ul>"
        )
    median, baseline = data.get("cluster_median_gbps"), data.get("baseline_median_gbps")
    against = f", baseline {_gbps(baseline)} GB/s" if baseline is not None else ""
    parts.append(
        f"<p>Cluster median busbw {_gbps(median)} GB/s{against}; "
        f"{_e(data.get('collectives'))} collectives in all.</p></div>"
    )
    return "".join(parts)


def _table(ident: str, head: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table id='{ident}'><tr>{th}</tr>{body}</table>"


def _rails_html(data: Mapping[str, Any]) -> str:
    rows = [
        (p.get("round"), p.get("a"), p.get("b"), p.get("rail"), _gbps(p.get("median_gbps")),
         _gbps(p.get("min_gbps")), p.get("error") or "")
        for p in data.get("pairs") or ()
        if p.get("rail") is not None
    ]  # fmt: skip
    head = ("round", "node", "partner", "rail", "median GB/s", "min GB/s", "error")
    return "<h2>Per-rail tests</h2>" + _table("rail-tests", head, rows) if rows else ""


def _drift_row(d: Row) -> tuple[object, ...]:
    if d.get("kind") == "split":
        counts = ", ".join(f"{value} on {n}" for value, n in d.get("counts") or ())
        return ("-", d.get("key"), f"no majority: {counts}", "", "")
    return (d.get("node"), d.get("key"), d.get("value"), d.get("majority_value"),
            f"{d.get('majority_count')} of {d.get('num_nodes')}")  # fmt: skip


def _drift_html(drift: Sequence[Row]) -> str:
    if not drift:
        return "<h2>Drift</h2><p id='drift'>No fact differs between the nodes.</p>"
    head = ("node", "fact", "its value", "the majority's", "nodes with it")
    return "<h2>Drift (round 0, before any measurement)</h2>" + _table(
        "drift", head, map(_drift_row, drift)
    )


def _figures_html(data: Mapping[str, Any]) -> str:
    shown, note = shown_nodes(data)
    aside = f"<p class='note' id='sample'>{_e(note)}</p>" if note else ""
    return (
        "<h2>Node x node bandwidth</h2><p>Each cell is a whole-node all_reduce between "
        "the row's and the column's node (all their GPUs), both ways filled; blank: not "
        f"tested.</p>{aside}{matrix_svg(data, shown)}{_legend(_reference(data))}"
        "<h2>Each node against the cluster</h2><p>The best (light) and median (coloured) "
        "bus bandwidth of each node's whole-node tests, slowest first; dashed: the "
        "cluster median and, when given, the baseline's.</p>" + bars_svg(data, shown)
    )


def render_html(data: Mapping[str, Any]) -> str:
    """The page for :func:`hpnet.cli.isolate.result_data`'s data."""
    outliers = data.get("outliers") or ()
    head = headline(data)
    where = _e(data.get("files") or "")
    files = (
        f"<p>The job's files: <code>{where}</code> (each round's NCCL logs).</p>" if where else ""
    )
    parts = [
        page_head(f"hpnet isolate: {_e(head)}", REPORT_STYLE + STYLE),
        "<h1>hpnet isolate</h1>",
        f"<div class='verdict {'notready' if outliers or data.get('inconclusive') else 'ready'}'"
        f" id='verdict'><b>{_e(head)}</b></div>",
        _outliers_html(outliers),
        _inconclusive_html(data.get("inconclusive") or ()),
        _figures_html(data),
        _rounds_html(data),
        _rails_html(data),
        _drift_html(data.get("drift") or ()),
        files,
        "<p><small>report.json beside this page holds the data "
        "(docs/isolate-schema.md).</small></p></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_report(directory: str, data: Mapping[str, Any]) -> None:
    """report.json and report.html in ``directory`` (made with its parents);
    InputError naming the directory when they cannot be written
    (:func:`hpnet.cluster.report.write_report_files`)."""
    from hpnet.jsonout import dumps  # noqa: PLC0415

    write_report_files(directory, dumps(dict(data)) + "\n", render_html(data))
