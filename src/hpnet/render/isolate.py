"""``hpnet isolate``'s verdict as text: each outlier with its evidence first, then the
fix and the scheduler's command; the drift found before any measurement; the rounds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hpnet.render.text import escaped

__all__ = ["render_isolate"]


def _where(outlier: Mapping[str, Any]) -> str:
    kind = outlier["kind"]
    if kind == "cluster":
        return "the whole cluster"
    if kind == "group":
        return f"group {outlier.get('group')}"
    if kind == "link":
        return f"the link {outlier.get('node')} <-> {outlier.get('peer')}"
    text = f"node {outlier.get('node')}"
    if kind == "rail":
        text += f" rail {outlier.get('rail')}"
        if outlier.get("nic"):
            text += f" ({outlier['nic']})"
    return text


def _outliers(outliers: Sequence[Mapping[str, Any]], lines: list[str]) -> None:
    for number, outlier in enumerate(outliers, 1):
        code = f", {outlier['code']}" if outlier.get("code") else ""
        lines.append(f"{number}. {_where(outlier)}: {outlier['fault']} fault{code}")
        lines.extend(f"   {line}" for line in outlier.get("evidence", ()))
        if outlier.get("fix"):
            lines.append(f"   fix: {outlier['fix']}")
        lines.extend(f"   drain: {command}" for command in outlier.get("drain", ()))
        if outlier.get("not_drained"):
            lines.append(f"   not drained: {outlier['not_drained']}")


def _inconclusive(rows: Sequence[Mapping[str, Any]], lines: list[str]) -> None:
    lines += [
        "",
        "Not judged (no evidence about these nodes: the harness could not run their "
        "tests, or good nodes measured beside them were as slow):",
    ]
    lines.extend(f"  {row['node']}: round {row['round']}: {row['cause']}" for row in rows)
    lines.append("  fix: rerun; if it recurs, rerun with --logs DIR and read round<N>/rank<R>.log")


def _drift(drift: Sequence[Mapping[str, Any]], lines: list[str]) -> None:
    lines += ["", "Drift (round 0, before any measurement):"]
    for d in drift:
        if d["kind"] == "split":
            counts = ", ".join(f"{v!r} on {n}" for v, n in d.get("counts", ()))
            lines.append(f"  {d['key']}: no majority ({counts})")
        else:
            lines.append(
                f"  {d['node']}: {d['key']} = {d['value']!r} where {d['majority_count']} of "
                f"{d['num_nodes']} nodes have {d['majority_value']!r}"
            )


def _amount(size: int) -> str:
    """``64 MiB``, ``256 KiB``, ``100 B``: the largest unit the size is a whole number of.

    >>> _amount(64 << 20), _amount(256 << 10), _amount(1000)
    ('64 MiB', '256 KiB', '1000 B')
    """
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def headline(data: Mapping[str, Any]) -> str:
    """``NO OUTLIER among ...`` / ``2 OUTLIERS among ...`` / ``INCONCLUSIVE (1 node not
    judged) among ...``: the text report's first line and the HTML page's.

    >>> headline({"nodes": ["a", "b"], "rails": 8, "backend": "nccl", "bytes": 64 << 20,
    ...     "iters": 20, "outliers": []})
    'NO OUTLIER among 2 nodes x 8 rails, nccl, all_reduce of 64 MiB x 20'
    """
    count = len(data.get("outliers") or ())
    untested = len(data.get("inconclusive") or ())
    many = f"{count} OUTLIER{'S' if count > 1 else ''}" if count else "NO OUTLIER"
    if untested:
        judged = f"{untested} node{'s' if untested > 1 else ''} not judged"
        many = f"{many}, {judged}" if count else f"INCONCLUSIVE ({judged})"
    return (
        f"{many} among {len(data.get('nodes') or ())} nodes x {data.get('rails')} rails, "
        f"{data.get('backend')}, all_reduce of {_amount(int(data.get('bytes') or 0))} x "
        f"{data.get('iters')}"
    )


def render_isolate(data: Mapping[str, Any]) -> str:
    """The report of :func:`hpnet.cli.isolate.result_data`'s data (every string in it
    shown with its control characters escaped: node names come from the ranks)."""
    data = escaped(dict(data))
    outliers = data["outliers"]
    head = headline(data)
    lines = [f"hpnet isolate: {head}"]
    if outliers:
        lines.append("")
        _outliers(outliers, lines)
    if data.get("inconclusive"):
        _inconclusive(data["inconclusive"], lines)
    if data.get("drift"):
        _drift(data["drift"], lines)
    median, baseline = data.get("cluster_median_gbps"), data.get("baseline_median_gbps")
    lines += ["", "Rounds:"]
    for summary in data.get("rounds", ()):
        lines.append(
            f"  {summary['number']} {summary['name']}: {summary['num_tests']} "
            + ("test" if summary["num_tests"] == 1 else "tests")
            + (f", {summary['num_errors']} failed" if summary["num_errors"] else "")
        )
        lines.extend(f"    {finding}" for finding in summary.get("findings", ()))
    if median is not None:
        against = f" (baseline {baseline:.2f})" if baseline is not None else ""
        lines.append(f"  cluster median busbw {median:.2f} GB/s{against}")
    lines.append(f"  {data['collectives']} collectives in all")
    if data.get("files"):
        lines += ["", f"Files: {data['files']} (round<N>/rank<R>.log: each round's NCCL log)"]
    return "\n".join(lines) + "\n"
