"""Read nccl-tests output of every era into the bench result model.

A pure function of text. The eras (tests/data/nccl-tests/FORMAT.md has each with its
source lines): 2017-2018 tables in milliseconds with a ``res`` column and no units
line; 2.0-2.12 per-op columns (``redop`` and ``root`` only where the op has them) and a
float ``error`` column; 2.13+ one header with ``redop root`` and an integer ``#wrong``;
``N/A`` where nothing was checked; the ``# nccl-tests version`` and ``# Collective test
starting`` lines of 2.16+; several runs in one file; Open MPI ``[1,0]<stdout>:`` and
srun ``0: `` prefixes; NCCL's own INFO lines anywhere; rows cut off by a failure. The
JSON of ``-J`` (2.17.3+) is read too.

Rows are parsed from the right: a row ends in four measurements per placement
(``time algbw busbw wrong``), so the columns between ``type`` and ``time`` (``redop``,
``root``, both, or neither) do not need to be known.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator

from hpnet.bench.formulas import OPS
from hpnet.bench.model import BenchReport, BenchRun, Measurement, Row, average_busbw
from hpnet.errors import ParseError

__all__ = ["parse_nccl_tests", "parse_nccl_tests_json", "parse_nccl_tests_lines"]

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
_INT = re.compile(r"-?\d+")
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


#: bytes per element of each type nccl-tests prints (src/common.cu wordSize)
_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "bfloat16": 2, "bf16": 2,
    "int32": 4, "uint32": 4, "int": 4, "uint": 4, "float": 4,
    "int64": 8, "uint64": 8, "double": 8,
}  # fmt: skip
#: ops whose printed count is one rank's share: size = count x element x nranks
#: (their GetCollByteCount sets paramcount = count/nranks, src/*.cu)
_PER_RANK_COUNT = frozenset(
    {"all_gather", "reduce_scatter", "alltoall", "gather", "scatter", "hypercube"}
)
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


def _op_from(text: str) -> str | None:
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
    if not _INT.fullmatch(token):
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
        redop = next((h for h in head if not _INT.fullmatch(h)), "")
        root = next((_int(h, source, number) for h in head if _INT.fullmatch(h)), -1)
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
        return _parse_json(stripped, source)
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
            op = _op_from(content)
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
        op = _op_from(content)
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
        nranks, why = _infer_nranks(run.rows, run.op)
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
        op, why = _infer_op(run.rows, nranks, redop_meaningful=meaningful)
        notes.append(why)
    if nranks is None and op is not None:
        nranks, why = _infer_nranks(run.rows, op)
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


def _interval(numerator: float, denominator: float) -> tuple[float, float] | None:
    """The ratio of two numbers nccl-tests printed with two decimals, as an interval."""
    if denominator - 0.005 <= 0:
        return None
    return (numerator - 0.005) / (denominator + 0.005), (numerator + 0.005) / (denominator - 0.005)


def _infer_nranks(rows: list[Row], op: str | None) -> tuple[int | None, str | None]:
    """The rank count when no device table says it: from size / count for the ops that
    print one rank's share (exact), else from the bus factor of every row that shows one
    (busbw / algbw, each printed with two decimals: the ranks whose factor lies inside
    every row's interval; given only when exactly one does)."""
    per_rank = [
        r.size_bytes / (r.count * _TYPE_BYTES[r.dtype])
        for r in rows
        if r.count and r.dtype in _TYPE_BYTES and r.size_bytes >= 1 << 16
    ]
    if per_rank and (op in _PER_RANK_COUNT or op is None):
        shares = {round(k) for k in per_rank if abs(k - round(k)) < 0.01}
        if len(shares) == 1 and (k := shares.pop()) > 1:
            return k, f"{k} ranks: each row's size is {k} x its count (one rank's share)"
    factor = {
        "all_reduce": lambda n: 2 * (n - 1) / n,
        "all_gather": lambda n: (n - 1) / n,
        "reduce_scatter": lambda n: (n - 1) / n,
        "alltoall": lambda n: (n - 1) / n,
    }.get(op or "")
    if factor is None:
        return None, None
    low, high = 0.0, float("inf")
    for row in rows:
        for m in (row.out_of_place, row.in_place):
            if m is None or m.algbw_gbps < 0.5:
                continue
            bounds = _interval(m.busbw_gbps, m.algbw_gbps)
            if bounds:
                low, high = max(low, bounds[0]), min(high, bounds[1])
    if high == float("inf") or low > high:
        return None, None
    # every factor grows with n: the counts that fit are one interval, found by bisection
    # (a loop over 100 000 counts cost 20 ms a run: minutes on a file of many runs)
    counts = range(2, 100_001)
    first = bisect.bisect_left(counts, low - 1e-9, key=factor)
    end = bisect.bisect_right(counts, high + 1e-9, key=factor)
    fits = counts[first:end]
    if len(fits) == 1:
        return fits[0], f"{fits[0]} ranks: the only count whose bus factor fits every row"
    if fits:
        return None, (
            f"the rank count is not shown: the bus factor fits {fits[0]} to {fits[-1]} ranks"
        )
    return None, None


def _infer_op(
    rows: list[Row], nranks: int | None, *, redop_meaningful: bool = True
) -> tuple[str | None, str]:
    """Name an op the output does not name, from what every op prints differently:
    its bus factor (busbw / algbw: 2(n-1)/n only for all_reduce, (n-1)/n for the ops
    that move one rank's share, 1 for broadcast / reduce / sendrecv), its redop and
    root columns, and whether count is the size or one rank's share of it.

    No rank count is computed from one rounded ratio here: only the op's family, where
    that is unambiguous (:func:`_infer_nranks` counts ranks from every row).
    """
    sample = max(
        (r for r in rows if r.out_of_place and r.out_of_place.algbw_gbps >= 0.1),
        key=lambda r: r.size_bytes,
        default=None,
    )
    if sample is None or sample.out_of_place is None:
        return None, "the op is not named in the output, and no row shows its bus factor"
    ratio = sample.out_of_place.busbw_gbps / sample.out_of_place.algbw_gbps
    reducing: bool | None = sample.redop not in ("none", "") if redop_meaningful else None
    rooted = sample.root >= 0
    share = (
        sample.size_bytes / (sample.count * _TYPE_BYTES[sample.dtype])
        if sample.count and sample.dtype in _TYPE_BYTES
        else None
    )
    why = f"the op is not named in the output; inferred from busbw/algbw = {ratio:.3f}"
    if ratio > 1.02:  # 2(n-1)/n, n > 2: no other op exceeds 1
        return "all_reduce", f"{why} (> 1: only all_reduce's 2(n-1)/n)"
    if share is not None and share > 1.5:  # count is one rank's share
        if reducing is None:
            return None, f"{why}, count = size / ranks (this era's redop column says nothing)"
        if reducing:
            return "reduce_scatter", f"{why}, a reduction, count = size / ranks"
        if rooted:
            return None, f"{why}, a root, count = size / ranks: gather or scatter"
        return None, f"{why}, count = size / ranks: all_gather or alltoall (not said which)"
    if abs(ratio - 1) < 0.02:
        if reducing is None:
            return None, f"{why} = 1 (nccl-tests 2.13.0-2.13.3 print 'sum' for every op)"
        if rooted:
            return ("reduce" if reducing else "broadcast"), f"{why} = 1 with a root"
        if reducing:  # 2(n-1)/n = 1: all_reduce over 2 ranks
            return "all_reduce", f"{why} = 1 with a reduction and no root: 2 ranks"
        return "sendrecv", f"{why} = 1, no reduction, no root, count = size"
    return None, f"{why}: not enough to tell the op"


_JSON_FIX = "pass the file nccl-tests -J wrote, or its text output"


def _parse_json(text: str, source: str) -> BenchReport:
    """nccl-tests' ``-J`` file (version 1-3, src/util.cu); a field of the wrong type is
    a ParseError that names it (``results[3].size``)."""
    from hpnet.inputfile import parse_json  # noqa: PLC0415 - JSON input only

    return parse_nccl_tests_json(
        parse_json(text, source=source, fix=_JSON_FIX, code="bad-result"), source=source
    )


def parse_nccl_tests_json(data: object, *, source: str = "<json>") -> BenchReport:
    """The report of nccl-tests' ``-J`` file, already parsed (:func:`json.loads`)."""
    path = ["the top level"]  # where the reading is, for the error
    try:
        return _json_report(data, source, path)
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ParseError(
            f"not nccl-tests -J JSON: {path[-1]}: {type(exc).__name__}: {exc}",
            source=source,
            fix=_JSON_FIX,
            code="bad-result",
        ) from None


def _json_number(value: object) -> float:
    """A double as -J writes it: a number, or the string ``"nan"`` (util.cu:290-296)."""
    number = float(str(value))
    if math.isinf(number):
        raise ValueError(f"{value!r} is out of range")
    return number


def _json_int(value: object) -> int:
    text = str(value).strip()
    if len(text) > MAX_DIGITS:
        raise ValueError(f"{text[:40]!r} is out of range")
    return int(_json_number(text)) if not _INT.fullmatch(text) else int(text)


def _json_report(data: object, source: str, path: list[str]) -> BenchReport:
    """``path[-1]`` names the part being read, for the caller's error."""
    data = _json_dict(data)
    path.append("args")
    args = _json_list(data.get("args", []))
    op = _op_from(" ".join(str(a) for a in args)) or "unknown"
    path.append("config")
    config = _json_dict(data.get("config", {}))
    path.append("config.devices")
    devices = _json_list(config.get("devices", []))
    rows = []

    def measure(part: object) -> Measurement | None:
        if not part:
            return None
        part = _json_dict(part)
        wrong = part.get("nwrong")
        return Measurement(
            time_us=_json_number(part.get("time", 0)),
            algbw_gbps=_json_number(part.get("alg_bw", 0)),
            busbw_gbps=_json_number(part.get("bus_bw", 0)),
            wrong=_json_int(wrong) if wrong is not None else None,
        )

    path.append("results")
    for index, item in enumerate(_json_list(data.get("results", []))):
        path.append(f"results[{index}]")
        result = _json_dict(item)
        root = str(result.get("root", "-1")).strip()
        rows.append(
            Row(
                size_bytes=_json_int(result["size"]),
                count=_json_int(result["count"]),
                dtype=str(result.get("type", "")),
                redop=str(result.get("redop", "") or "none"),
                root=_json_int(root) if root else -1,
                out_of_place=measure(result.get("out_of_place")),
                in_place=measure(result.get("in_place")),
            )
        )
    path.append("average_bus_bandwidth")
    avg = _json_dict(data.get("average_bus_bandwidth", {})).get("bandwidth")
    average = _json_number(avg) if avg is not None else average_busbw(rows)
    path.append("out_of_bounds")
    oob = _json_dict(data.get("out_of_bounds", {})).get("count")
    out_of_bounds = _json_int(oob) if oob is not None else None
    path.append("config.graph")
    graph = _json_int(config.get("graph", 0) or 0)
    run = BenchRun(
        op=op,
        nranks=len(devices) or None,
        rows=tuple(rows),
        avg_busbw_gbps=average,
        out_of_bounds=out_of_bounds,
        graph_launches=graph,
    )
    version = data.get("nccl_version")
    if not isinstance(version, (str, int, type(None))):
        version = str(version)
    return BenchReport(source=source, runs=(run,), metadata={"nccl_version": version, "args": args})


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}


def _json_kind(value: object) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), "a number")


def _json_list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError(f"{_json_kind(value)}, not a list")
    return value


def _json_dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TypeError(f"{_json_kind(value)}, not an object")
    return value
