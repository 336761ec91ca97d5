"""Read nccl-tests output of every era into the bench result model.

A pure function of text. The eras (tests/data/nccl-tests/FORMAT.md has each with its
source lines): 2017-2018 tables in milliseconds with a ``res`` column and no units
line; 2.0-2.12 per-op columns (``redop`` and ``root`` only where the op has them) and a
float ``error`` column; 2.13+ one header with ``redop root`` and an integer ``#wrong``;
``N/A`` where nothing was checked; the ``# nccl-tests version`` and ``# Collective test
starting`` lines of 2.16+; several runs in one file; Open MPI ``[1,0]<stdout>:`` and
srun ``0: `` prefixes; NCCL's own INFO lines anywhere; rows cut off by a failure. The
JSON of ``-J`` (2.17.3+) is read by :mod:`hpnet.bench.nccl_tests_json`.

Rows are parsed from the right (:mod:`hpnet.bench.nccl_tests_rows`): a row ends in four
measurements per placement (``time algbw busbw wrong``), so the columns between ``type``
and ``time`` (``redop``, ``root``, both, or neither) do not need to be known.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from hpnet.bench.formulas import OPS
from hpnet.bench.model import BenchReport, BenchRun
from hpnet.bench.nccl_tests_rows import TYPES, read_float, read_int, read_row
from hpnet.bench.nccl_tests_run import Run as _Run
from hpnet.bench.nccl_tests_run import finish as _finish
from hpnet.bench.nccl_tests_where import NRANKS as _NRANKS
from hpnet.bench.nccl_tests_where import Where

__all__ = ["parse_nccl_tests", "parse_nccl_tests_lines"]

#: launcher prefixes: Open MPI's ``[1,0]<stdout>:``, srun's ``0: ``, and MPICH / Intel MPI's
#: ``[0] `` (``-prepend-rank``)
_PREFIX = re.compile(
    r"^(?:\[\d+,\d+\]<std(?:out|err)>:|\s*\d+:\s(?=\s*[#\d])|\[\d+\]\s(?=\s*[#\d]))"
)
_PROGRAM = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
_AVG = re.compile(r"Avg bus bandwidth\s*:\s*([-+\d.eE]+|nan)")
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)")
_NTHREAD = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)(?:.*?graph:\s*(\d+))?")
#: notes of one run about lines that could not be read
MAX_NOTES = 8
#: where a row starts inside a table flattened onto one line (a vendor page's copy)
_ROW_START = re.compile(
    r"\s(?=\d+\s+\d+\s+(?:" + "|".join(sorted(TYPES, key=len, reverse=True)) + r")\s)"
)
#: the banner of an ``hpnet bench`` table (hpnet.render.bench)
_HPNET = re.compile(r"^#\s*hpnet bench:\s*([a-z_]+)\b.*?\b(\d+) ranks?\b")


_VALIDATION = re.compile(r"\bvalidation:\s*(\d+)")
#: nccl-tests' failure messages (TESTCHECK / NCCLCHECK in src/common.h)
_FAILURE = re.compile(r"Test (?:NCCL |CUDA )?failure\b.*")
#: nccl-tests' footer (src/common.cu, v2.16.0+: ``PRINT("# Collective test concluded: %s\\n",
#: program_invocation_short_name)``): it names the op of the run it closes
_CONCLUDED = re.compile(r"#\s*Collective test concluded:\s*(\S+)")
#: NCCL's own lines that give the communicator's size: ``comm 0x.. rank 3 nranks 16 cudaDev``
#: (init.cc "Init COMPLETE" / "Destroy COMPLETE") and ``rank 1 nRanks 8 nNodes 1`` (2.19+)
_NCCL_NRANKS = re.compile(r"\bNCCL INFO\b.*?\brank \d+ n[Rr]anks (\d+)\b")
#: a line of NCCL's debug output (``host:pid:tid [dev] NCCL INFO ...``)
_NCCL_LINE = re.compile(r"[\w.-]+:\d+:\d+ \[\d+\] NCCL ")
#: a debug line another process wrote into the middle of a row (no newline between them):
#: the row's part ends in a digit, the debug line starts with its launcher prefix (a host
#: glued to a digit without one cannot be told from the digits before it)
_GLUED = re.compile(r"(?<=\d)(?=\[\d+\]\s*[\w.-]+:\d+:\d+ \[\d+\] NCCL )")
#: the start of a row: size, count, type
_ROW_HEAD = re.compile(
    r"^\s*#?\s*\d+\s+\d+\s+(?:" + "|".join(sorted(TYPES, key=len, reverse=True)) + r")(?:\s|$)"
)
#: what the rest of a row split across lines holds: numbers, N/A, a redop name
_CELL = r"(?:[-+]?[\d.]+(?:[eE][-+]?\d+)?|N/A|--)"
_ROW_REST = re.compile(rf"^{_CELL}(?:\s+{_CELL})*$")
#: a poster's mark of rows left out of a table: "...", "…", "[...]"
_ELIDED = re.compile(r"\[?(?:\.{3,}|…+)\]?")
#: measurement cells of a whole row: time algbw busbw wrong, out-of-place and in-place
_ROW_CELLS = 8


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
    where = Where()
    for number, physical in enumerate(lines, start=1):
        # the same lines as str.splitlines() of the whole text (\r, \v, \x1c... too)
        for line in physical.splitlines():
            where.feed(_strip(line))
            for piece in _unflatten(line):
                reader.feed(piece, source, number)
    return BenchReport(source=source, runs=tuple(reader.finish()), metadata=where.meta())


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
        #: a failure printed while no run was open (before the table: nccl-tests' TESTCHECK
        #: of the communicator's init), given to the run that follows, else to the last one
        self.failure: str | None = None
        #: a run closed by its average line, finished only at the next run or the end:
        #: the footer after it ("# Collective test concluded: ...") still names its op
        self.ended: _Run | None = None
        #: NCCL's communicator size, seen outside a run
        self.nccl_nranks: int | None = None
        self.source = "<text>"

    def close(self) -> None:
        self._settle()
        run = self.run
        self.run = None
        if run is None:
            return
        self._flush(run)
        if self.failure is not None and run.failure is None:
            run.failure = self.failure
            self.failure = None
        if run.rows or run.avg is not None or run.notes or run.failure:
            self.ended = run

    def _settle(self) -> None:
        """The run closed before is finished: nothing after this can name its op."""
        if self.ended is not None:
            self.runs.append(_finish(self.ended))
            self.ended = None

    def start(self) -> _Run:
        self._settle()
        self.run = _Run()
        self.run.op = self.pending_op
        self.run.nccl_nranks = self.nccl_nranks
        if self.failure is not None:
            self._fail(self.run, self.failure)
            self.failure = None
        return self.run

    def finish(self) -> list[BenchRun]:
        self.close()
        if self.failure is not None:
            # a failure after the last run ended, or in a text with no table at all:
            # never a pass (nccl-tests stopped; src/common.h TESTCHECK)
            if self.ended is not None:
                self._fail(self.ended, self.failure)
            elif self.runs:
                last = self.runs[-1]
                self.runs[-1] = dataclasses.replace(
                    last,
                    failure=last.failure or self.failure,
                    notes=(*last.notes, f"the run failed: {self.failure[:120]}"),
                )
            else:
                run = self.start()
                self.ended = run
                self.run = None
        self._settle()
        return self.runs

    @staticmethod
    def _fail(run: _Run, failure: str) -> None:
        if run.failure is None:
            run.failure = failure[:160]
        if len(run.notes) < MAX_NOTES:
            run.notes.append(f"the run failed: {failure[:120]}")

    def _flush(self, run: _Run) -> None:
        """A row still split when something else comes: it was cut off."""
        if run.fragment is not None and len(run.notes) < MAX_NOTES:
            run.notes.append(f"a row cut off: {run.fragment.strip()[:80]}")
        run.fragment = None

    def _join(self, run: _Run, content: str, source: str, number: int) -> bool:
        """``content`` continues the row other processes' lines split (NCCL INFO lines
        printed between its cells): True when it was taken. A row is joined once it has
        all its cells (both placements); a part that never completes is a row cut off."""
        if run.fragment is None or not _ROW_REST.match(content):
            return False
        run.fragment += " " + content
        tokens = run.fragment.split()
        if len(tokens) - 3 >= _ROW_CELLS:
            row = read_row(run.fragment, run.milliseconds, source, number)
            if row is not None:
                run.rows.append(row)
                if len(run.notes) < MAX_NOTES and not any(
                    n.startswith("rows split") for n in run.notes
                ):
                    run.notes.append("rows split by other processes' lines were joined")
                run.fragment = None
            elif len(tokens) - 3 > _ROW_CELLS + 2:
                self._flush(run)
        return True

    def feed(self, raw: str, source: str, number: int) -> None:
        self.source = source
        line = _strip(raw)
        glued = _GLUED.search(line) if "NCCL" in line else None
        if glued:  # "... sum -1[0] host:1:1 [0] NCCL INFO ...": two lines in one
            self.feed(line[: glued.start()], source, number)
            self.feed(line[glued.start() :], source, number)
            return
        content = line.strip()
        if not content:
            return
        run = self.run
        if run is not None and run.fragment is not None and self._between(run, content, number):
            return
        banner = _HPNET.match(content)
        if banner:
            self.close()
            run = self.start()
            run.op = banner.group(1)
            run.nranks = read_int(banner.group(2), source, number)
            return
        if "Collective test starting" in content or ("nThread" in content and "nGpus" in content):
            self._test_banner(content, source, number)
            return
        header = ("size" in content and "count" in content and "type" in content) or (
            "bytes" in content and " N " in content and "type" in content
        )
        if header and ("time" in content or "busbw" in content):
            self._table_header(content)
            return
        ranks = _NRANKS.search(content)
        if ranks and " on " in content:
            if run is None:
                run = self.start()
            run.ranks.add(read_int(ranks.group(1), source, number))
            run.group_lines = run.group_lines or " Group " in content
            return
        avg = _AVG.search(content)
        if avg and run is not None:
            run.avg = read_float(avg.group(1), source, number, nan=True)
            self.close()
            self.pending_op = None
            return
        concluded = _CONCLUDED.search(content)
        if concluded:
            # the footer names the run it closes, never the next one
            op = op_from(concluded.group(1))
            closed = self.ended if run is None else run
            if op and closed is not None and closed.op is None:
                closed.op = op
            self.pending_op = None
            return
        oob = _OOB.search(content)
        if oob and run is not None:
            run.oob = read_int(oob.group(1), source, number)
            return
        self._body(line, content, source, number)

    def _between(self, run: _Run, content: str, number: int) -> bool:
        """A line while a row is split: its next cells (joined), or another process's
        NCCL line between them (True: taken); else the row was cut off (False)."""
        if self._join(run, content, self.source, number):
            return True
        if _NCCL_LINE.search(content) or "NCCL INFO" in content:
            self._nccl_line(content, run)
            return True
        self._flush(run)
        return False

    def _body(self, line: str, content: str, source: str, number: int) -> None:
        """A row, a failure, a row's first part, an NCCL line, or anything else."""
        run = self.run
        row = read_row(line, run.milliseconds if run else False, source, number)
        if row is not None:
            if run is None:  # rows without a header (a tail of the output)
                run = self.start()
                run.notes.append("rows without their table header (an excerpt)")
            run.rows.append(row)
            return
        failed = _FAILURE.search(content) if "Test " in content else None
        if failed:
            # nccl-tests' TESTCHECK (src/common.h, every tag: "%s: Test NCCL failure
            # %s:%d '%s'", "Test CUDA failure", " .. %s pid %d: Test failure"): the run
            # stopped here, wherever the line stands (before the table: the init failed)
            if run is not None:
                self._fail(run, failed.group(0))
            elif self.ended is not None:
                self._fail(self.ended, failed.group(0))
            elif self.failure is None:
                self.failure = failed.group(0)[:160]
            head = content[: failed.start()]
            if run is not None and _ROW_HEAD.match(head):
                run.fragment = head  # the row the failure cut off
                self._flush(run)
            return
        if _ROW_HEAD.match(line):
            if run is None:
                run = self.start()
                run.notes.append("rows without their table header (an excerpt)")
            self._flush(run)
            run.fragment = content  # its cells follow, other processes' lines between
            return
        if "NCCL INFO" in content:
            self._nccl_line(content, run)
            return
        self._other(content, run, number)

    def _nccl_line(self, content: str, run: _Run | None) -> None:
        """NCCL's communicator size, from its own lines (the device table may be cut off)."""
        found = _NCCL_NRANKS.search(content)
        if found:
            nranks = int(found.group(1)[:9])
            if run is not None:
                run.nccl_nranks = max(run.nccl_nranks or 0, nranks)
            elif self.ended is not None:
                self.ended.nccl_nranks = max(self.ended.nccl_nranks or 0, nranks)
            else:
                self.nccl_nranks = max(self.nccl_nranks or 0, nranks)

    def _table_header(self, content: str) -> None:
        """A table's header: a new run, unless the open one has no row yet."""
        run = self.run
        if run is not None and run.rows:
            self.close()
            run = None
        if run is None:
            run = self.start()
        run.header_seen = True
        run.milliseconds = "bytes" in content and " res" in content  # 2017-2018: ms
        run.wrong_header = "#wrong" in content

    def _test_banner(self, content: str, source: str, number: int) -> None:
        """nccl-tests' banner (``# nThread 1 nGpus 1 ...``): a new run, unless the open
        one has no row and no table header yet."""
        run = self.run
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
                read_int(threads.group(1), source, number),
                read_int(threads.group(2), source, number),
            )
            if threads.group(3):
                run.graph = read_int(threads.group(3), source, number)
        validation = _VALIDATION.search(content)
        if validation:
            run.validation = read_int(validation.group(1), source, number)

    def _other(self, content: str, run: _Run | None, number: int) -> None:
        """A line that is no part of a table: the name of the next op, a row cut off, or
        the mark of rows a poster left out ("...")."""
        if run is not None and run.rows and _ELIDED.fullmatch(content):
            if len(run.notes) < MAX_NOTES:
                run.notes.append(
                    f"rows left out after {run.rows[-1].size_bytes} B (line {number}: "
                    f"'{content}'): the sizes before the next row are not in the input"
                )
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
