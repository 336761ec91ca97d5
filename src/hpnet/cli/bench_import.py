"""``hpnet bench import``: nccl-tests output of any era into hpnet's result model."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Read nccl-tests output (text of any version from 2017 on, several runs in one file,
mpirun / srun prefixes, NCCL INFO lines in between; or the JSON of -J) and print it
as hpnet's table, JSON or CSV, so that old runs can be compared and plotted.

  hpnet bench import all_reduce.log
  hpnet bench import all_reduce.log --json > old.json
  hpnet bench import job.out --op all_gather     name the op the output does not name

--json: docs/bench-schema.md. Exit 2 when the input holds no nccl-tests table.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="FILE", help="nccl-tests output (- for stdin)")
    parser.add_argument("--op", help="the op, where the output does not name it")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--csv", action="store_true", help="print CSV")
    parser.add_argument("--plot", metavar="FILE", help="busbw vs size: FILE.svg or FILE.png")


def run(ns: argparse.Namespace) -> int:
    import dataclasses  # noqa: PLC0415

    from hpnet.bench.load import load_result  # noqa: PLC0415
    from hpnet.cli.bench_args import parse_ops  # noqa: PLC0415
    from hpnet.cli.bench_output import emit, verdict_of  # noqa: PLC0415

    report = load_result(ns.path)
    if ns.op:
        op = parse_ops([ns.op])[0]
        report = dataclasses.replace(
            report,
            runs=tuple(
                dataclasses.replace(run, op=op) if run.op in ("unknown", op) else run
                for run in report.runs
            ),
        )
    if ns.plot:
        from hpnet.bench.plot import series_of, write_plot  # noqa: PLC0415

        write_plot(ns.plot, series_of(report, "nccl-tests"), title=f"nccl-tests: {report.source}")
    emit(report, json=ns.json, csv=ns.csv)
    # the imported run's own failure (out-of-bounds values, a test failure) is a FAIL
    return 1 if verdict_of(report, ())[0] == "FAIL" else 0
