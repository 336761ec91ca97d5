"""Bus bandwidth against message size, one line per result and op, in one figure.

SVG is written by hand (no dependency: it opens in any browser and pastes into an
issue); PNG goes through matplotlib when it is installed. The x axis is logarithmic
in powers of two, like nccl-tests' sweeps; rows of size 0 are left out (log scale).
"""

from __future__ import annotations

import dataclasses
import io
import math
from collections.abc import Sequence
from xml.sax.saxutils import escape

from hpnet.bench.model import BenchReport
from hpnet.errors import InputError, MissingDependencyError

__all__ = ["Series", "check_plot_path", "series_of", "write_plot"]

WIDTH, HEIGHT = 900, 520
LEFT, RIGHT, TOP, BOTTOM = 70, 260, 40, 60
COLOURS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Series:
    label: str
    points: tuple[tuple[int, float], ...]  # (size in bytes, busbw GB/s), sizes > 0


def series_of(report: BenchReport, label: str) -> list[Series]:
    """One series per op: the better placement's busbw at each size."""
    out = []
    many = len({run.op for run in report.runs}) > 1
    for index, run in enumerate(report.runs):
        points = []
        for row in run.rows:
            values = [m.busbw_gbps for m in (row.out_of_place, row.in_place) if m is not None]
            if row.size_bytes > 0 and values:
                points.append((row.size_bytes, max(values)))
        if points:
            if run.op in label:
                name = label if not many else f"{label} #{index}"
            elif many or len(report.runs) == 1:
                name = f"{label} {run.op}"
            else:  # repeated runs of one op
                name = f"{label} #{index}"
            out.append(Series(label=name, points=tuple(points)))
    return out


def _size_label(size: float) -> str:
    from hpnet.render.text import size_text  # noqa: PLC0415

    return size_text(size)


def _nice_step(top: float) -> float:
    """A round grid step that cuts [0, top] into about five.

    >>> _nice_step(370.0), _nice_step(0.07)
    (100.0, 0.02)
    """
    raw = top / 5 if top > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw))


def render_svg(
    series: Sequence[Series],
    title: str,
    references: Sequence[tuple[str, float]] = (),
) -> str:
    """The figure; ``references`` are dashed horizontal lines (a link's peak, the
    floor a check expects) with their labels."""
    sizes = [s for line in series for s, _ in line.points]
    values = [v for line in series for _, v in line.points] + [v for _, v in references]
    low, high = math.log2(min(sizes)), math.log2(max(sizes))
    if high - low < 1:
        low, high = low - 0.5, high + 0.5
    step = _nice_step(max(values) * 1.05)
    top = step * math.ceil(max(values) * 1.05 / step) if max(values) > 0 else 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    # the legend's column is as wide as its longest label (it was cut at 36 characters
    # and past the figure's edge, issue 26): the figure widens, the plot keeps its size
    labels = [_legend_label(line.label) for line in series]
    width = (
        LEFT + plot_w + max(RIGHT, LEGEND_PAD + round(CHAR_PX * max(map(len, labels), default=0)))
    )

    def x(size: float) -> float:
        return LEFT + (math.log2(size) - low) / (high - low) * plot_w

    def y(value: float) -> float:
        return TOP + plot_h - value / top * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="15">{escape(title)}</text>',
    ]
    tick = math.ceil(low)
    every = max(1, math.ceil((high - low) / 12))
    while tick <= high:
        px = x(2**tick)
        out.append(
            f'<line x1="{px:.1f}" y1="{TOP}" x2="{px:.1f}" y2="{TOP + plot_h}" stroke="#eee"/>'
        )
        out.append(
            f'<text x="{px:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">'
            f"{_size_label(2**tick)}</text>"
        )
        tick += every
    value = 0.0
    while value <= top + 1e-9:
        py = y(value)
        out.append(
            f'<line x1="{LEFT}" y1="{py:.1f}" x2="{LEFT + plot_w}" y2="{py:.1f}" stroke="#eee"/>'
        )
        out.append(f'<text x="{LEFT - 6}" y="{py + 4:.1f}" text-anchor="end">{value:g}</text>')
        value += step
    out += [
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#333"/>',
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 15}" text-anchor="middle">message size</text>',
        f'<text x="18" y="{TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {TOP + plot_h / 2})">bus bandwidth (GB/s)</text>',
    ]
    for label, value in references:
        py = y(value)
        out.append(
            f'<line x1="{LEFT}" y1="{py:.1f}" x2="{LEFT + plot_w}" y2="{py:.1f}" stroke="#555" '
            'stroke-dasharray="6 4"/>'
        )
        out.append(f'<text x="{LEFT + 6}" y="{py - 4:.1f}" fill="#555">{escape(label)}</text>')
    for index, line in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        path = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in line.points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for s, v in line.points:
            out.append(
                f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="2.5" fill="{colour}">'
                f"<title>{escape(line.label)}: {_size_label(s)} {v:.2f} GB/s</title></circle>"
            )
        ly = TOP + 10 + index * 18
        lx = LEFT + plot_w + 14
        out.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 20}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{lx + 26}" y="{ly + 4}">{escape(labels[index])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


#: a 12-pixel sans-serif character's width, at most (digits and capitals): the legend's
#: column is sized by it
CHAR_PX = 7.5
#: from the plot's right edge to a legend label's start (the coloured line before it), and
#: a margin after it
LEGEND_PAD = 14 + 26 + 12
#: the longest legend label shown whole
MAX_LABEL = 72


def _legend_label(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def check_plot_path(path: str) -> None:
    """Refuse a figure :func:`write_plot` could not write, before anything is measured:
    a name that is neither .svg nor .png, or .png without matplotlib."""
    lower = path.lower()
    if not lower.endswith((".svg", ".png")):
        raise InputError(
            "unknown figure type",
            code="usage",
            where=path,
            fix="name the file .svg (no dependency) or .png (needs matplotlib)",
        )
    if lower.endswith(".png"):
        import importlib.util  # noqa: PLC0415

        if importlib.util.find_spec("matplotlib") is None:
            raise MissingDependencyError(
                "PNG figures need matplotlib",
                code="missing-matplotlib",
                where=path,
                fix="pip install matplotlib, or write .svg instead",
            )


def write_plot(path: str, series: Sequence[Series], *, title: str = "hpnet bench") -> None:
    """Write ``series`` to ``path``: .svg by hand, .png through matplotlib."""
    if not series:
        raise InputError(
            "nothing to plot: no row with a size above 0",
            code="empty-plot",
            where=path,
            fix="plot a result with rows (hpnet bench --save FILE.json)",
        )
    lower = path.lower()
    if lower.endswith(".svg"):
        text = render_svg(series, title)
        _write(path, text.encode())
        return
    if not lower.endswith(".png"):
        raise InputError(
            "unknown figure type",
            code="usage",
            where=path,
            fix="name the file .svg (no dependency) or .png (needs matplotlib)",
        )
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        raise MissingDependencyError(
            "PNG figures need matplotlib",
            code="missing-matplotlib",
            where=path,
            fix="pip install matplotlib, or write .svg instead",
        ) from None
    figure, axes = plt.subplots(figsize=(WIDTH / 100, HEIGHT / 100), dpi=100)
    for line in series:
        axes.plot(
            [s for s, _ in line.points], [v for _, v in line.points], marker=".", label=line.label
        )
    axes.set_xscale("log", base=2)
    axes.set_xlabel("message size (bytes)")
    axes.set_ylabel("bus bandwidth (GB/s)")
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    png = io.BytesIO()
    try:
        figure.savefig(png, format="png")
    finally:
        plt.close(figure)
    _write(path, png.getvalue())


def _write(path: str, data: bytes) -> None:
    """``data`` at ``path``: a symlink there is replaced, never followed."""
    from hpnet.outputfile import write_file  # noqa: PLC0415

    try:
        write_file(path, data)
    except OSError as exc:
        raise InputError(
            exc.strerror or str(exc),
            code="unwritable",
            where=path,
            fix="write to a directory you own",
        ) from None
