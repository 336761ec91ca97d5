"""Read nccl-tests output of every era into the bench result model.

A pure function of text. The eras (tests/data/nccl-tests/FORMAT.md has each with its
source lines): 2017-2018 tables in milliseconds with a ``res`` column and no units
line; 2.0-2.12 per-op columns (``redop`` and ``root`` only where the op has them) and a
float ``error`` column; 2.13+ one header with ``redop root`` and an integer ``#wrong``;
``N/A`` where nothing was checked; the ``# nccl-tests version`` and ``# Collective test
starting`` lines of 2.16+; several runs in one file; Open MPI ``[1,0]<stdout>:`` and
srun ``0: `` prefixes; NCCL's own INFO lines anywhere; rows cut off by a failure. The
JSON of ``-J`` (2.17.3+) is read by :mod:`hpnet.bench.nccl_tests_json`.

Rows are parsed from the right: a row ends in four measurements per placement
(``time algbw busbw wrong``), so the columns between ``type`` and ``time`` (``redop``,
``root``, both, or neither) do not need to be known.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator

from hpnet.bench.formulas import OPS
from hpnet.bench.model import BenchReport, BenchRun, Measurement, Row, average_busbw
from hpnet.bench.nccl_tests_infer import infer_nranks, infer_op
from hpnet.errors import ParseError

__all__ = ["parse_nccl_tests", "parse_nccl_tests_lines"]

_PREFIX = re.compile(r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\s*\d+:\s(?=\s*[#\d]))")
_PROGRAM = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
_NRANKS = re.compile(r"#\s+Rank\s+(\d+)\s")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*([-+\d.eE]+|nan)")
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)")
_NTHREAD = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)(?:.*?graph:\s*(\d+))?")
_TYPES = frozenset(
    {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
     "bfloat16", "bf16", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "char", "int", "uint"}
)  # fmt: skip
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
#: integers: decimal digits (str.isdigit() takes "²" too, which int() refuses); a root
#: is -1 when the op has none
_DIGITS = re.compile(r"\d+")
INTEGER = re.compile(r"-?\d+")
#: digits of the largest integer read (a size in bytes has 20 at most)
MAX_DIGITS = 30
_INFINITIES = (math.inf, -math.inf)
#: notes of one run about lines that could not be read
MAX_NOTES = 8
#: where a row starts inside a table flattened onto one line (a vendor page's copy)
_ROW_START = re.compile(
    r"\s(?=\d+\s+\d+\s+(?:" + "|".join(sorted(_TYPES, key=len, reverse=True)) + r")\s)"
)
#: the banner of an ``hpnet bench`` table (hpnet.render.bench)
_HPNET = re.compile(r"^#\s*hpnet bench:\s*([a-z_]+)\b.*?\b(\d+) ranks?\b")
_MISSING = ["--"] * 4  # a placement hpnet bench's backend does not have


_VALIDATION = re.compile(r"\bvalidation:\s*(\d+)")
_TESTS_VERSION = re.compile(r"#\s*nccl-tests version (\S+)(?:.*?nccl-library=(\d+))?")
_NCCL_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")
#: a device line's host, device and GPU name: "... on  node1 device  3 [0x1b] NVIDIA A100"
_DEVICE = re.compile(r"\bon\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")
#: nccl-tests' failure messages (TESTCHECK / NCCLCHECK in src/common.h)
_FAILURE = re.compile(r"Test (?:NCCL |CUDA )?failure\b.*")


class _Run:
    def __init__(self) -> None:
        self.op: str | None = None
        self.ranks: set[int] = set()
        self.validation: int | None = None
        self.failure: str | None = None
        #: the header has the one #wrong column of 2.13+, and device lines with "Group"
        #: (2.13.4+): together they tell whether the redop column means a reduction
        self.wrong_header = False
        self.group_lines = False
        self.rows: list[Row] = []
        self.avg: float | None = None
        self.oob: int | None = None
        self.milliseconds = False
        self.graph = 0
        self.nthreads_gpus: tuple[int, int] | None = None
        self.notes: list[str] = []
        self.header_seen = False
        self.nranks: int | None = None  # declared by a banner


def _strip(line: str) -> str:
    line = line.rstrip("\r\n")
    found = _PREFIX.match(line)
    return line[found.end() :] if found else line


def op_from(text: str) -> str | None:
    found = _PROGRAM.search(text)
    if found and found.group(1) in OPS:
        return found.group(1)
    if found and found.group(1) in ("gather", "scatter", "hypercube", "alltoallv"):
        return found.group(1)
    return None


def _bad_number(token: str, source: str, number: int) -> ParseError:
    return ParseError(
        f"{token[:40]!r} is not a number nccl-tests prints (out of range)",
        source=source,
        line_number=number,
        fix="pass nccl-tests' output as it wrote it",
        code="bad-result",
    )


def _float(token: str, source: str, number: int, *, nan: bool = False) -> float:
    """A finite number (nccl-tests prints ``%.2f`` and the like: never ``1e999``);
    ``nan``: NaN is one too (an average over no rows)."""
    try:
        value = float(token)
    except ValueError:
        raise ParseError(
            f"{token[:40]!r} is not a number",
            source=source,
            line_number=number,
            fix="pass nccl-tests' output as it wrote it",
            code="bad-result",
        ) from None
    if math.isinf(value) or (math.isnan(value) and not nan):
        raise _bad_number(token, source, number)
    return value


def _int(token: str, source: str, number: int) -> int:
    """An integer of at most :data:`MAX_DIGITS` digits (larger ones are no count or
    size nccl-tests can print, and Python refuses to read some of them)."""
    if not INTEGER.fullmatch(token):
        raise ParseError(
            f"{token[:40]!r} is not an integer",
            source=source,
            line_number=number,
            fix="pass nccl-tests' output as it wrote it",
            code="bad-result",
        )
    if len(token.lstrip("-")) > MAX_DIGITS:
        raise _bad_number(token, source, number)
    return int(token)


def _cell(token: str, source: str, number: int) -> float | None:
    if not _NUMBER.match(token):
        return None
    value = float(token)  # the pattern is a float's syntax: only its range can be wrong
    if value in _INFINITIES:
        raise _bad_number(token, source, number)
    return value


def _measure(tokens: list[str], milliseconds: bool, source: str, number: int) -> Measurement | None:
    """``time algbw busbw wrong`` -> a measurement (None if it is not one)."""
    time, algbw, busbw = (_cell(t, source, number) for t in tokens[:3])
    if time is None or algbw is None or busbw is None:
        return None
    last = tokens[3]
    wrong: int | None = None
    error: float | None = None
    if last != "N/A":
        value = _cell(last, source, number)
        if value is None:
            return None
        if "e" in last.lower() and "." not in last.split("e")[0].split("E")[0] and value < 1e5:
            error = value  # nccl-tests < 2.13: the max error, "%5.0le" (2e-07, 1e+00)
        else:
            wrong = int(value)
    return Measurement(
        time_us=time * 1000 if milliseconds else time,
        algbw_gbps=algbw,
        busbw_gbps=busbw,
        wrong=wrong,
        error=error,
    )


def _row(line: str, milliseconds: bool, source: str = "<text>", number: int = 0) -> Row | None:
    body = line.lstrip()
    if body.startswith("#"):  # a pasted table with "#" on every line
        body = body[1:].lstrip()
    tokens = body.split()
    if len(tokens) < 7 or not _DIGITS.fullmatch(tokens[0]) or not _DIGITS.fullmatch(tokens[1]):
        return None
    if tokens[2] not in _TYPES:
        return None
    rest = tokens[3:]
    # from the right: eight measurement tokens (both placements), or four (one)
    for width in (8, 4):
        if len(rest) < width:
            continue
        head, cells = rest[: len(rest) - width], rest[len(rest) - width :]
        if len(head) > 2:
            continue
        missing = [cells[:4] == _MISSING, width == 8 and cells[4:8] == _MISSING]
        first = None if missing[0] else _measure(cells[:4], milliseconds, source, number)
        second = (
            _measure(cells[4:8], milliseconds, source, number)
            if width == 8 and not missing[1]
            else None
        )
        if (first is None and not missing[0]) or (width == 8 and second is None and not missing[1]):
            continue
        if first is None and second is None:
            continue
        redop = next((h for h in head if not INTEGER.fullmatch(h)), "")
        root = next((_int(h, source, number) for h in head if INTEGER.fullmatch(h)), -1)
        return Row(
            size_bytes=_int(tokens[0], source, number),
            count=_int(tokens[1], source, number),
            dtype=tokens[2],
            redop=redop or "none",
            root=root,
            out_of_place=first,
            in_place=second,
        )
    return None


def parse_nccl_tests(text: str, *, source: str = "<text>") -> BenchReport:
    """Every run of nccl-tests output in ``text`` (plain or ``-J`` JSON).

    >>> out = '''# nThread 1 nGpus 4 minBytes 8 maxBytes 16 step: 2(factor) graph: 0
    ... #  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong
    ...       8      2 float    sum    -1 24.68   0.00   0.00       0 26.69   0.00   0.00       0
    ...      16      4 float    sum    -1 24.63   0.00   0.00       0 32.00   0.00   0.00       0
    ... # Avg bus bandwidth    : 0
    ... '''
    >>> run = parse_nccl_tests(out).runs[0]
    >>> len(run.rows), run.rows[1].in_place.time_us, run.avg_busbw_gbps
    (2, 32.0, 0.0)

    Malformed input is a :class:`~hpnet.errors.ParseError` naming ``source`` and the
    line (a number no nccl-tests prints, such as ``1e999``; JSON that does not parse).
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        # imported here: the JSON reader imports this module's helpers
        from hpnet.bench.nccl_tests_json import parse_json_text  # noqa: PLC0415

        return parse_json_text(stripped, source)
    return parse_nccl_tests_lines(_split_lines(text), source=source)


def parse_nccl_tests_lines(lines: Iterable[str], *, source: str = "<text>") -> BenchReport:
    """:func:`parse_nccl_tests` of text output given line by line (``\n`` removed or
    not), read in one pass: memory holds the rows, not the text (a job's output with a
    gigabyte of NCCL INFO lines around one table)."""
    reader = _Reader()
    for number, physical in enumerate(lines, start=1):
        # the same lines as str.splitlines() of the whole text (\r, \v, \x1c... too)
        for line in physical.splitlines():
            reader.metadata(line)
            for piece in _unflatten(line):
                reader.feed(piece, source, number)
    return BenchReport(source=source, runs=tuple(reader.finish()), metadata=reader.meta())


def _split_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` split at ``\n``, one at a time (no list of them all)."""
    start = 0
    size = len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _unflatten(line: str) -> Iterable[str]:
    """A table flattened onto one line (a vendor page's copy) cut back into rows."""
    if len(line) > 300 and len(_ROW_START.findall(line)) >= 3:
        return _ROW_START.split(line)
    return (line,)


class _Reader:
    """The runs of nccl-tests output, fed one line at a time."""

    def __init__(self) -> None:
        self.runs: list[BenchRun] = []
        self.run: _Run | None = None
        self.pending_op: str | None = None  # an op named before its table (command, banner)
        self.tests_version: str | None = None
        self.gpus: dict[str, int] = {}
        self.hosts: dict[str, None] = {}
        self.nccl: dict[str, None] = {}

    def metadata(self, raw: str) -> None:
        """What the output says of where it ran: nccl-tests' version, NCCL's, the GPUs
        and hosts of its device table (an item is left out when the output does not
        say it)."""
        line = _strip(raw)
        version = _TESTS_VERSION.search(line)
        if version:
            if self.tests_version is None:
                self.tests_version = version.group(1)
            if version.group(2):
                code = int(version.group(2)[:9])  # NCCL_VERSION_CODE: 22907 = 2.29.7
                self.nccl.setdefault(f"{code // 10000}.{code // 100 % 100}.{code % 100}", None)
            return
        found = _NCCL_VERSION.search(line)
        if found:
            self.nccl.setdefault(found.group(1), None)
        if _NRANKS.search(line):
            device = _DEVICE.search(line)
            if device:
                self.hosts.setdefault(device.group(1), None)
                self.gpus[device.group(2)] = self.gpus.get(device.group(2), 0) + 1

    def meta(self) -> dict[str, object]:
        meta: dict[str, object] = {}
        if self.tests_version is not None:
            meta["nccl_tests_version"] = self.tests_version
        if self.nccl:
            meta["nccl_version"] = ", ".join(self.nccl)
        if self.gpus:
            meta["gpus"] = [f"{count} x {name}" for name, count in self.gpus.items()]
        if self.hosts:
            meta["hosts"] = list(self.hosts)
        return meta

    def close(self) -> None:
        run = self.run
        if run is not None and (run.rows or run.avg is not None or run.notes):
            self.runs.append(_finish(run))
        self.run = None

    def start(self) -> _Run:
        self.run = _Run()
        self.run.op = self.pending_op
        return self.run

    def finish(self) -> list[BenchRun]:
        self.close()
        return self.runs

    def feed(self, raw: str, source: str, number: int) -> None:
        line = _strip(raw)
        content = line.strip()
        if not content:
            return
        run = self.run
        banner = _HPNET.match(content)
        if banner:
            self.close()
            run = self.start()
            run.op = banner.group(1)
            run.nranks = _int(banner.group(2), source, number)
            return
        if "Collective test starting" in content or ("nThread" in content and "nGpus" in content):
            if run is not None and (run.rows or run.header_seen):
                self.close()
                run = None
            if run is None:
                run = self.start()
            op = op_from(content)
            if op:
                run.op = op
            threads = _NTHREAD.search(content)
            if threads:
                run.nthreads_gpus = (
                    _int(threads.group(1), source, number),
                    _int(threads.group(2), source, number),
                )
                if threads.group(3):
                    run.graph = _int(threads.group(3), source, number)
            validation = _VALIDATION.search(content)
            if validation:
                run.validation = _int(validation.group(1), source, number)
            return
        header = ("size" in content and "count" in content and "type" in content) or (
            "bytes" in content and " N " in content and "type" in content
        )
        if header and ("time" in content or "busbw" in content):
            if run is not None and run.rows:
                self.close()
                run = None
            if run is None:
                run = self.start()
            run.header_seen = True
            run.milliseconds = "bytes" in content and " res" in content  # 2017-2018: ms
            run.wrong_header = "#wrong" in content
            return
        ranks = _NRANKS.search(content)
        if ranks and " on " in content:
            if run is None:
                run = self.start()
            run.ranks.add(_int(ranks.group(1), source, number))
            run.group_lines = run.group_lines or " Group " in content
            return
        avg = _AVG.search(content)
        if avg and run is not None:
            run.avg = _float(avg.group(1), source, number, nan=True)
            self.close()
            self.pending_op = None
            return
        oob = _OOB.search(content)
        if oob and run is not None:
            run.oob = _int(oob.group(1), source, number)
            return
        row = _row(line, run.milliseconds if run else False, source, number)
        if row is not None:
            if run is None:  # rows without a header (a tail of the output)
                run = self.start()
                run.notes.append("rows without their table header (an excerpt)")
            run.rows.append(row)
            return
        failed = _FAILURE.search(content) if "Test " in content else None
        if failed and run is not None:
            # nccl-tests' TESTCHECK: the run stopped here (a CUDA / NCCL error)
            if run.failure is None:
                run.failure = failed.group(0)[:160]
            if len(run.notes) < MAX_NOTES:
                run.notes.append(f"the run failed: {failed.group(0)[:120]}")
            return
        op = op_from(content)
        if op and (run is None or not run.rows):
            self.pending_op = op
            if run is not None and run.op is None:
                run.op = op
        elif (
            run is not None
            and run.rows
            and content[:12].strip().isdigit()
            and len(run.notes) < MAX_NOTES  # memory holds the rows, not every broken line
        ):
            run.notes.append(f"a row cut off: {content[:80]}")


def _finish(run: _Run) -> BenchRun:
    notes = list(run.notes)
    nranks = run.nranks
    if run.ranks:
        nranks = max(run.ranks) + 1  # the device table: one line per rank
    elif nranks is None:
        nranks, why = infer_nranks(run.rows, run.op)
        if why:
            notes.append(why)
    avg = run.avg
    if avg is None and run.rows:
        mean = average_busbw(run.rows)
        notes.append(
            "no '# Avg bus bandwidth' line (cut off): nccl-tests' average is not known; "
            f"the mean busbw of the rows present is {mean:.4g} GB/s"
        )
    op = run.op
    if op is None:
        # nccl-tests 2.13.0-2.13.3 print "sum" in every op's redop column; 2.13.4+ print
        # "none" for ops without a reduction (and their device lines gained "Group"),
        # and before 2.13 only reducing ops have the column at all
        meaningful = not run.wrong_header or run.group_lines
        op, why = infer_op(run.rows, nranks, redop_meaningful=meaningful)
        notes.append(why)
    if nranks is None and op is not None:
        nranks, why = infer_nranks(run.rows, op)
        if why:
            notes.append(why)
    return BenchRun(
        op=op or "unknown",
        nranks=nranks,
        rows=tuple(run.rows),
        avg_busbw_gbps=avg,
        out_of_bounds=run.oob,
        graph_launches=run.graph,
        notes=tuple(notes),
        checked=_checked(run),
        failure=run.failure,
    )


def _checked(run: _Run) -> bool | None:
    """Were the results checked: the ``validation:`` of the nThread line (the ``-c``
    value), else the rows (a ``#wrong`` count or the old float ``error`` column is a
    check's result, ``N/A`` is none); None when the output shows neither."""
    if run.validation is not None:
        return run.validation > 0
    measured = [m for row in run.rows for m in (row.out_of_place, row.in_place) if m is not None]
    if any(m.wrong is not None or m.error is not None for m in measured):
        return True
    return False if measured else None
