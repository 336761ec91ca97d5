"""``hpnet bench plot``: several results, bus bandwidth against size, one figure."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Draw bus bandwidth against message size for one or more results (hpnet bench JSON,
nccl-tests output of any version) in one figure: SVG needs nothing, PNG needs
matplotlib. Each result is labelled with its file name unless --label is given.

  hpnet bench plot ib.json socket.json -o fabric.svg
  hpnet bench plot old.log new.json -o cmp.png --label before --label after
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE", help="results to draw")
    parser.add_argument("-o", "--output", required=True, metavar="FIG", help="FIG.svg or FIG.png")
    parser.add_argument(
        "--label", action="append", default=[], metavar="NAME", help="a label per file, in order"
    )
    parser.add_argument("--title", default="bus bandwidth", help="the figure's title")


def run(ns: argparse.Namespace) -> int:
    import os  # noqa: PLC0415

    from hpnet.bench.load import load_result  # noqa: PLC0415
    from hpnet.bench.plot import series_of, write_plot  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415

    if ns.label and len(ns.label) != len(ns.paths):
        raise UsageError(
            f"{len(ns.label)} labels for {len(ns.paths)} files",
            code="usage",
            where="--label",
            fix="give one --label per file, or none",
        )
    labels = ns.label or [os.path.basename(p) for p in ns.paths]
    series = []
    for path, label in zip(ns.paths, labels, strict=True):
        series += series_of(load_result(path), label)
    write_plot(ns.output, series, title=ns.title)
    print(f"wrote {ns.output}: {len(series)} line(s)")
    return 0
