"""Read a result file of any kind into the bench model: ``hpnet bench --json`` /
``--save`` output, nccl-tests' text output (any era, tests/data/nccl-tests/FORMAT.md)
or its ``-J`` JSON, or an ``hpnet bench`` table (it is laid out like nccl-tests').

Text is read line by line (:func:`hpnet.bench.nccl_tests.parse_nccl_tests_lines`):
memory holds the rows and one block of the file, not the file, whatever NCCL INFO
lines surround the table. JSON is parsed whole, so it has a smaller limit. The file
must be a regular file (a FIFO would block the open forever: :mod:`hpnet.inputfile`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from hpnet.bench.model import BenchReport, report_from_data
from hpnet.bench.nccl_tests import parse_nccl_tests_lines
from hpnet.bench.nccl_tests_json import parse_nccl_tests_json
from hpnet.errors import InputError
from hpnet.inputfile import FileRole, open_regular_file, parse_json, too_large, whole_lines

__all__ = ["MAX_BYTES", "MAX_JSON_BYTES", "load_result"]

#: a result is a table, not a log: refuse what cannot be one (a 10 GB debug log)
MAX_BYTES = 256 << 20
#: a JSON result is parsed whole (its objects take ten times its size): ``hpnet bench
#: --json`` of a sweep with every rank's times is a few MB
MAX_JSON_BYTES = 64 << 20
#: a line longer than this is read up to this length (no table row is that long)
MAX_LINE_BYTES = 1 << 20
#: the start of the file, read first: JSON or text, binary or not
HEAD_BYTES = 1 << 16
BLOCK_BYTES = 1 << 20

_ROLE = FileRole(
    what="a benchmark result",
    code="unreadable",
    too_large_code="bad-result",
    fix="pass the nccl-tests output or `hpnet bench --json` output (for NCCL debug logs "
    "use `hpnet verify`)",
)


def load_result(path: str) -> BenchReport:
    """The report in ``path`` (``-`` is standard input); InputError if none is there.

    A file with no result row is an error too (``{"runs": []}`` is no benchmark that
    passed), unless a run says why it has none (nccl-tests' own failure message).
    """
    name = "<stdin>" if path == "-" else path
    if path == "-":
        report = _load(sys.stdin.buffer, name)
    else:
        with open_regular_file(path, _ROLE) as handle:
            if os.fstat(handle.fileno()).st_size > MAX_BYTES:  # before reading any of it
                raise too_large(name, _ROLE, MAX_BYTES)
            report = _load(handle, name)
    rows = sum(len(run.rows) for run in report.runs)
    said = any(run.failure or run.out_of_bounds for run in report.runs) or report.incomplete
    if not report.runs or (not rows and not said):
        raise InputError(
            "no nccl-tests table (rows of size, count, type, time, algbw, busbw)"
            if not report.runs
            else "holds no result rows: nothing was measured, so nothing can pass",
            code="no-result",
            where=name,
            fix="pass the output of an nccl-tests binary (all_reduce_perf ...) or of "
            "`hpnet bench --json`",
        )
    return report


def _load(handle: BinaryIO, name: str) -> BenchReport:
    head = _read(handle, HEAD_BYTES, name)
    if b"\0" in head:
        raise InputError(
            "binary data, not text",
            code="bad-result",
            where=name,
            fix="pass nccl-tests' text output or `hpnet bench --json` output",
        )
    if head.lstrip()[:1] == b"{":
        data = head + _read(handle, MAX_JSON_BYTES + 1 - len(head), name)
        if len(data) > MAX_JSON_BYTES:
            raise too_large(name, _ROLE, MAX_JSON_BYTES)
        return _from_json(data.decode("utf-8", "replace"), name)
    return parse_nccl_tests_lines(_lines(_blocks(head, handle, name)), source=name)


def _from_json(text: str, name: str) -> BenchReport:
    fix = "pass the file `hpnet bench --json` / `--save` or nccl-tests -J wrote"
    data = parse_json(text, source=name, fix=fix, code="bad-result")
    if isinstance(data, dict) and "runs" in data:
        try:
            # the file is the name a comparison or a figure needs, not "hpnet bench"
            report = _checked(report_from_data(data, source=name))
            return dataclasses.replace(report, source=name)
        except (AttributeError, KeyError, TypeError, ValueError, OverflowError) as exc:
            raise InputError(
                f"not an hpnet bench result ({type(exc).__name__}: {exc})",
                code="bad-result",
                where=name,
                fix="pass the unmodified output of `hpnet bench --json`",
            ) from None
    return parse_nccl_tests_json(data, source=name)  # its errors name the file


def _checked(report: BenchReport) -> BenchReport:
    """``report`` if every value has the type the model says (JSON can hold anything:
    ``"nranks": "x"`` would fail far from here, in a table or a plot); else TypeError."""
    for run in report.runs:
        _expect(run.op, str, "op")
        _expect(run.nranks, int, "nranks", none=True)
        _expect(run.avg_busbw_gbps, float, "avg_busbw_gbps", none=True)
        _expect(run.out_of_bounds, int, "out_of_bounds", none=True)
        _expect(run.graph_launches, int, "graph_launches")
        _expect(run.checked, bool, "checked", none=True)
        _expect(run.failure, str, "failure", none=True)
        for note in run.notes:
            _expect(note, str, "notes")
        for row in run.rows:
            for measurement in (row.out_of_place, row.in_place):
                if measurement is None:
                    continue
                for field in ("time_us", "algbw_gbps", "busbw_gbps"):
                    _expect(getattr(measurement, field), float, field)
                for field in ("error", "min_us", "median_us", "p99_us"):
                    _expect(getattr(measurement, field), float, field, none=True)
                _expect(measurement.wrong, int, "wrong", none=True)
                for value in measurement.rank_times_us:
                    _expect(value, float, "rank_times_us")
    _expect(report.incomplete, str, "incomplete", none=True)
    if not isinstance(report.metadata, dict):
        raise TypeError(f"metadata is a {type(report.metadata).__name__}, not an object")
    return report


def _expect(value: object, kind: type, name: str, *, none: bool = False) -> None:
    if value is None and none:
        return
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return  # JSON writes 2.0 as 2
    if kind is not bool and isinstance(value, bool):
        raise TypeError(f"{name} is true/false, not a {kind.__name__}")
    if not isinstance(value, kind):
        raise TypeError(f"{name} is {value!r:.40}, not a {kind.__name__}")


def _read(handle: BinaryIO, size: int, name: str) -> bytes:
    try:
        return handle.read(size)
    except OSError as exc:  # EIO (/proc/self/mem), a disk error
        raise InputError(
            f"cannot read the file ({exc.strerror or exc})",
            code="unreadable",
            where=name,
            fix="check the path and its permissions",
        ) from None


def _blocks(head: bytes, handle: BinaryIO, name: str) -> Iterator[bytes]:
    """The file's bytes in blocks, the head first; more than :data:`MAX_BYTES` is an
    error."""
    total = len(head)
    yield head
    while True:
        block = _read(handle, BLOCK_BYTES, name)
        if not block:
            return
        total += len(block)
        if total > MAX_BYTES:
            raise too_large(name, _ROLE, MAX_BYTES)
        yield block


def _lines(blocks: Iterable[bytes]) -> Iterator[str]:
    """Lines (without their ``\\n``) decoded as UTF-8; a line longer than
    :data:`MAX_LINE_BYTES` is cut there and the rest of it skipped."""
    for block, _ in whole_lines(blocks, MAX_LINE_BYTES):
        # whole lines, decoded at once: they end at a newline, not mid-character
        whole = block.endswith(b"\n") or not block
        text = block.decode("utf-8", "replace")
        del block  # not held while the text is split
        lines = text.split("\n")
        del text
        if whole:
            lines.pop()  # the empty text after the last line feed
        yield from (line[:MAX_LINE_BYTES] for line in lines)
