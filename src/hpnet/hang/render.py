"""``hpnet hang``'s text: the verdict first, then each cause with its evidence and fix,
then every group's progress per rank."""

from __future__ import annotations

import os

from hpnet.hang.model import HangReport
from hpnet.hang.ranklog import KEY_PHRASE
from hpnet.render.text import escape_controls

__all__ = ["render_hang"]

#: a quoted line longer than this shows its start and its end, `` … `` between
QUOTE_WIDTH = 200


def _quote(text: str, base: str) -> str:
    """An evidence line for the screen: its path relative to the folder read, and a long
    quoted line cut to its start and the part that makes it evidence (a timeout, a closed
    connection, ``NCCL error: ...``), `` … `` where text is left out; --json keeps it whole.

    >>> _quote("/job/rank1.stderr:2: " + "x" * 300, "/job")[:30]
    'rank1.stderr:2: xxxxxxxxxxxxxx'
    >>> line = "/job/r1.log:1: " + "x" * 300 + " Connection closed by peer [::1]:5 " + "y" * 99
    >>> _quote(line, "/job")[75:120]
    'xxxxx … Connection closed by peer [::1]:5 yyy'
    """
    if base and text.startswith(base + os.sep):
        text = text[len(base) + 1 :]
    text = escape_controls(text)
    if len(text) <= QUOTE_WIDTH:
        return text
    head = QUOTE_WIDTH * 2 // 5
    key = KEY_PHRASE.search(text, head)
    start = key.start() if key else len(text) - (QUOTE_WIDTH - head - 3)
    tail = text[start : start + QUOTE_WIDTH - head - 3]
    return text[:head] + " … " + tail + (" …" if start + len(tail) < len(text) else "")


def _base(report: HangReport) -> str:
    """The folder every file read lies under, if one does."""
    files = [*report.dumps, *(e.where.rsplit(":", 1)[0] for e in report.errors)]
    folders = {os.path.dirname(f) for f in files if os.path.isabs(f) or os.sep in f}
    try:
        return os.path.commonpath(sorted(folders)) if folders else ""
    except ValueError:  # absolute and relative paths mixed
        return ""


def _span(ranks: tuple[int, ...]) -> str:
    """``0-3`` for consecutive ranks, else the list.

    >>> _span((0, 1, 2, 3)), _span((0, 2)), _span(())
    ('0-3', '0, 2', '-')
    """
    if not ranks:
        return "-"
    if list(ranks) == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(str(r) for r in ranks)


def render_hang(report: HangReport) -> str:
    word = {"hang": "STUCK", "no-hang": "NO HANG", "unknown": "UNKNOWN"}[report.status]
    lines = [f"hpnet hang: {word} — {report.headline}"]
    base = _base(report)
    if report.causes:
        lines += ["", "Why, most likely first"]
        for number, cause in enumerate(report.causes, 1):
            lines.append(f"  {number}. [{cause.kind}] {cause.headline()}")
            if cause.consequence_of:
                lines.append(f"       follows from: {cause.consequence_of} (its ranks wait there)")
            if cause.also_in:
                lines.append(f"       the same in: {', '.join(cause.also_in)}")
            lines += [f"       {_quote(e, base)}" for e in cause.evidence]
            lines.append(f"       fix: {cause.fix}")
    if report.places:
        lines += ["", "Where they ran (NCCL's logs)"]
        for place in report.places:
            lines.append(f"  rank {place.rank}: {escape_controls(place.describe())}")
            lines += [f"    WARN {_quote(w, base)}" for w in place.warnings]
    if report.groups:
        lines += ["", "Groups (the last collective each rank recorded; - : no dump)"]
        for g in report.groups:
            name = f"{g.pg} ({g.desc})" if g.desc else g.pg
            shown = " ".join(
                f"{r}:{'-' if n is None else '#' + str(n)}" for r, n in list(g.last.items())[:32]
            )
            more = f" (+{len(g.last) - 32} ranks: --json)" if len(g.last) > 32 else ""
            lines.append(f"  group {name}: ranks {_span(g.ranks)}: {shown}{more}")
    read = _read(report)
    under = f" under {escape_controls(base)}" if base else ""
    lines += ["", f"Read{under}: {read}, {len(report.errors)} error line(s) of the ranks"]
    if report.without_dump and report.dumps:  # with no dump at all, every rank is without
        lines.append(f"No dump from: rank(s) {_span(report.without_dump)}")
    lines += [f"Not read: {escape_controls(u)}" for u in report.unreadable]
    return "\n".join(lines) + "\n"


def _read(report: HangReport) -> str:
    """What the verdict was read from, counted."""
    read = f"{len(report.dumps)} Flight Recorder dump(s)"
    if report.ras:
        read += f", {len(report.ras)} RAS report(s)"
    if report.analyses:
        read += f", {len(report.analyses)} collective(s) a Flight Recorder analyzer reported"
    if report.versions:
        read += f" (format {', '.join(report.versions)})"
    if report.nccl_logs:
        read += f", {report.nccl_logs} NCCL log(s)"
    if report.stacks:
        read += f", {len(report.stacks)} process stack(s) of py-spy"
    if report.exits:
        read += f", {len(report.exits)} process exit(s) a launcher reported"
    if report.desync:
        read += f", {len(report.desync)} desync report(s) of torch's watchdog"
    return read
