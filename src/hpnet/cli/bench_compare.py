"""``hpnet bench compare A B``: B against A, size by size."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Compare two benchmark results (hpnet bench --json / --save files, or nccl-tests
output of any version): per op, size and placement, B's time against A's, and a
verdict on the large sizes, where bandwidth is measured best.

  hpnet bench compare before.json after.json
  hpnet bench compare nccl-tests.log hpnet.json --threshold 3

Exit 0: B is within --threshold of A, or faster, at the large sizes; 1: B is slower
there; 2: nothing to compare (no op and size in both, unreadable input).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="the baseline")
    parser.add_argument("b", metavar="B", help="the result to judge")
    parser.add_argument(
        "--threshold", type=float, default=5.0, metavar="PCT", help="tolerated slowdown (default 5)"
    )
    parser.add_argument(
        "--large",
        default="64M",
        metavar="SIZE",
        help="the sizes the verdict looks at, and up (default 64M)",
    )
    parser.add_argument("--plot", metavar="FILE", help="both results in one figure")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(ns: argparse.Namespace) -> int:
    from hpnet.bench.compare import compare  # noqa: PLC0415
    from hpnet.bench.formulas import parse_size  # noqa: PLC0415
    from hpnet.bench.load import load_result  # noqa: PLC0415
    from hpnet.errors import InputError, UsageError  # noqa: PLC0415

    if not 0 <= ns.threshold < 100:
        raise UsageError(
            "must be 0 to 99",
            code="usage",
            where=f"--threshold {ns.threshold}",
            fix="--threshold 5",
        )
    try:
        large = parse_size(ns.large)
    except ValueError as exc:
        raise UsageError(
            str(exc), code="bad-size", where=f"--large {ns.large}", fix="--large 64M"
        ) from None
    a, b = load_result(ns.a), load_result(ns.b)
    result = compare(a, b, threshold=ns.threshold / 100, large_bytes=large)
    if not result.ops:
        raise InputError(
            "no op and size measured in both: " + "; ".join(result.notes),
            code="nothing-to-compare",
            where=f"{ns.a}, {ns.b}",
            fix="compare results of the same op(s) with overlapping sizes",
        )
    if ns.plot:
        from hpnet.bench.plot import series_of, write_plot  # noqa: PLC0415

        write_plot(ns.plot, series_of(a, "A") + series_of(b, "B"), title="hpnet bench compare")
    if ns.json:
        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        print(dumps(envelope(_data(result), schema_version=1)))
    else:
        from hpnet.render.bench import render_compare  # noqa: PLC0415

        print(render_compare(result), end="")
    return 1 if result.status == "FAIL" else 0


def _data(result: object) -> dict[str, object]:
    from hpnet.jsonout import to_data  # noqa: PLC0415

    data: dict[str, object] = to_data(result)  # type: ignore[assignment]  # a dataclass: a dict
    return data
