"""Read a result file of any kind into the bench model: ``hpnet bench --json`` /
``--save`` output, nccl-tests' text output (any era, tests/data/nccl-tests/FORMAT.md)
or its ``-J`` JSON, or an ``hpnet bench`` table (it is laid out like nccl-tests')."""

from __future__ import annotations

import dataclasses
import json
import os

from hpnet.bench.model import BenchReport, report_from_data
from hpnet.bench.nccl_tests import parse_nccl_tests
from hpnet.errors import InputError

__all__ = ["MAX_BYTES", "load_result"]

#: a result is a table, not a log: refuse what cannot be one (a 10 GB debug log)
MAX_BYTES = 256 << 20


def load_result(path: str) -> BenchReport:
    """The report in ``path`` (``-`` is standard input); InputError if none is there."""
    name = "<stdin>" if path == "-" else path
    text = _read(path, name)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON: {exc.msg} at line {exc.lineno}",
                code="bad-result",
                where=name,
                fix="pass the file `hpnet bench --json` / `--save` or nccl-tests -J wrote",
            ) from None
        if isinstance(data, dict) and "runs" in data:
            try:
                # the file is the name a comparison or a figure needs, not "hpnet bench"
                return dataclasses.replace(report_from_data(data, source=name), source=name)
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(
                    f"not an hpnet bench result ({type(exc).__name__}: {exc})",
                    code="bad-result",
                    where=name,
                    fix="pass the unmodified output of `hpnet bench --json`",
                ) from None
    try:
        report = parse_nccl_tests(text, source=name)
    except (KeyError, TypeError, ValueError) as exc:  # a -J file with unexpected fields
        raise InputError(
            f"cannot read the nccl-tests JSON ({type(exc).__name__}: {exc})",
            code="bad-result",
            where=name,
            fix="pass the file nccl-tests -J wrote, or its text output",
        ) from None
    if not report.runs:  # a run that failed before its first row is kept: it says why
        raise InputError(
            "no nccl-tests table (rows of size, count, type, time, algbw, busbw)",
            code="no-result",
            where=name,
            fix="pass the output of an nccl-tests binary (all_reduce_perf ...) or of "
            "`hpnet bench --json`",
        )
    return report


def _read(path: str, name: str) -> str:
    import sys  # noqa: PLC0415

    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_BYTES + 1)
        else:
            if os.path.isdir(path):
                raise InputError(
                    "is a directory",
                    code="bad-result",
                    where=name,
                    fix="pass one result file (nccl-tests output or hpnet bench JSON)",
                )
            with open(path, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(
            exc.strerror or str(exc),
            code="unreadable",
            where=name,
            fix="check the path and its permissions",
        ) from None
    if len(data) > MAX_BYTES:
        raise InputError(
            f"larger than {MAX_BYTES >> 20} MiB: not a benchmark result",
            code="bad-result",
            where=name,
            fix="pass the nccl-tests output (for NCCL debug logs use `hpnet verify`)",
        )
    if b"\0" in data[:65536]:
        raise InputError(
            "binary data, not text",
            code="bad-result",
            where=name,
            fix="pass nccl-tests' text output or `hpnet bench --json` output",
        )
    return data.decode("utf-8", "replace")
