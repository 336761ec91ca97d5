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

import json
import re
from collections.abc import Iterable

from hpnet.bench.formulas import OPS
from hpnet.bench.model import BenchReport, BenchRun, Measurement, Row, average_busbw

__all__ = ["parse_nccl_tests"]

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
#: where a row starts inside a table flattened onto one line (a vendor page's copy)
_ROW_START = re.compile(
    r"\s(?=\d+\s+\d+\s+(?:" + "|".join(sorted(_TYPES, key=len, reverse=True)) + r")\s)"
)
#: the banner of an ``hpnet bench`` table (hpnet.render.bench)
_HPNET = re.compile(r"^#\s*hpnet bench:\s*([a-z_]+)\b.*?\b(\d+) ranks?\b")
_MISSING = ["--"] * 4  # a placement hpnet bench's backend does not have


class _Run:
    def __init__(self) -> None:
        self.op: str | None = None
        self.ranks: set[int] = set()
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


def _cell(token: str) -> float | None:
    return float(token) if _NUMBER.match(token) else None


def _measure(tokens: list[str], milliseconds: bool) -> Measurement | None:
    """``time algbw busbw wrong`` -> a measurement (None if it is not one)."""
    time, algbw, busbw = (_cell(t) for t in tokens[:3])
    if time is None or algbw is None or busbw is None:
        return None
    last = tokens[3]
    wrong: int | None = None
    error: float | None = None
    if last != "N/A":
        value = _cell(last)
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


def _row(line: str, milliseconds: bool) -> Row | None:
    body = line.lstrip()
    if body.startswith("#"):  # a pasted table with "#" on every line
        body = body[1:].lstrip()
    tokens = body.split()
    if len(tokens) < 7 or not tokens[0].isdigit() or not tokens[1].isdigit():
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
        first = None if missing[0] else _measure(cells[:4], milliseconds)
        second = _measure(cells[4:8], milliseconds) if width == 8 and not missing[1] else None
        if (first is None and not missing[0]) or (width == 8 and second is None and not missing[1]):
            continue
        if first is None and second is None:
            continue
        redop = next((h for h in head if not h.lstrip("-").isdigit()), "")
        root = next((int(h) for h in head if h.lstrip("-").isdigit()), -1)
        return Row(
            size_bytes=int(tokens[0]),
            count=int(tokens[1]),
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
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _parse_json(stripped, source)
    return BenchReport(source=source, runs=tuple(_runs(_lines(text))))


def _lines(text: str) -> Iterable[str]:
    """The text's lines; a table flattened onto one line is cut back into rows."""
    for line in text.splitlines():
        if len(line) > 300 and len(_ROW_START.findall(line)) >= 3:
            yield from _ROW_START.split(line)
        else:
            yield line


def _runs(lines: Iterable[str]) -> list[BenchRun]:
    runs: list[BenchRun] = []
    run: _Run | None = None
    pending_op: str | None = None  # an op named before its table (command line, banner)

    def close() -> None:
        nonlocal run
        if run is not None and (run.rows or run.avg is not None or run.notes):
            runs.append(_finish(run))
        run = None

    for raw in lines:
        line = _strip(raw)
        content = line.strip()
        if not content:
            continue
        banner = _HPNET.match(content)
        if banner:
            close()
            run = _Run()
            run.op = banner.group(1)
            run.nranks = int(banner.group(2))
            continue
        if "Collective test starting" in content or ("nThread" in content and "nGpus" in content):
            if run is not None and (run.rows or run.header_seen):
                close()
            if run is None:
                run = _Run()
                run.op = pending_op
            op = _op_from(content)
            if op:
                run.op = op
            threads = _NTHREAD.search(content)
            if threads:
                run.nthreads_gpus = (int(threads.group(1)), int(threads.group(2)))
                if threads.group(3):
                    run.graph = int(threads.group(3))
            continue
        header = ("size" in content and "count" in content and "type" in content) or (
            "bytes" in content and " N " in content and "type" in content
        )
        if header and ("time" in content or "busbw" in content):
            if run is not None and run.rows:
                close()
            if run is None:
                run = _Run()
                run.op = pending_op
            run.header_seen = True
            run.milliseconds = "bytes" in content and " res" in content  # 2017-2018: ms
            continue
        ranks = _NRANKS.search(content)
        if ranks and " on " in content:
            if run is None:
                run = _Run()
                run.op = pending_op
            run.ranks.add(int(ranks.group(1)))
            continue
        avg = _AVG.search(content)
        if avg and run is not None:
            run.avg = float(avg.group(1))
            close()
            pending_op = None
            continue
        oob = _OOB.search(content)
        if oob and run is not None:
            run.oob = int(oob.group(1))
            continue
        row = _row(line, run.milliseconds if run else False)
        if row is not None:
            if run is None:  # rows without a header (a tail of the output)
                run = _Run()
                run.op = pending_op
                run.notes.append("rows without their table header (an excerpt)")
            run.rows.append(row)
            continue
        if "Test " in content and "failure" in content and run is not None:
            # nccl-tests' TESTCHECK: the run stopped here (a CUDA / NCCL error)
            if len(run.notes) < 8:
                run.notes.append(f"the run failed: {content[content.find('Test ') :][:120]}")
            continue
        op = _op_from(content)
        if op and (run is None or not run.rows):
            pending_op = op
            if run is not None and run.op is None:
                run.op = op
        elif run is not None and run.rows and content[:12].strip().isdigit():
            run.notes.append(f"a row cut off: {content[:80]}")
    close()
    return runs


def _finish(run: _Run) -> BenchRun:
    nranks = run.nranks
    if run.ranks:
        nranks = max(run.ranks) + 1
    notes = list(run.notes)
    avg = run.avg
    if avg is None and run.rows:
        mean = average_busbw(run.rows)
        notes.append(
            "no '# Avg bus bandwidth' line (cut off): nccl-tests' average is not known; "
            f"the mean busbw of the rows present is {mean:.4g} GB/s"
        )
    op = run.op
    if op is None:
        op, why = _infer_op(run.rows, nranks)
        notes.append(why)
    return BenchRun(
        op=op or "unknown",
        nranks=nranks,
        rows=tuple(run.rows),
        avg_busbw_gbps=avg,
        out_of_bounds=run.oob,
        graph_launches=run.graph,
        notes=tuple(notes),
    )


def _infer_op(rows: list[Row], nranks: int | None) -> tuple[str | None, str]:
    """Name an op the output does not name, from its bus factor (busbw / algbw) and
    its redop / root columns, where that is unambiguous."""
    sample = max(
        (r for r in rows if r.out_of_place and r.out_of_place.algbw_gbps >= 0.1),
        key=lambda r: r.size_bytes,
        default=None,
    )
    if sample is None or sample.out_of_place is None:
        return None, "the op is not named in the output, and no row shows its bus factor"
    ratio = sample.out_of_place.busbw_gbps / sample.out_of_place.algbw_gbps
    reducing = sample.redop not in ("none", "")
    n = nranks
    if n is None and 1.05 < ratio < 2.0:  # 2(n-1)/n: only all_reduce exceeds 1
        n = round(2 / (2 - ratio))
    why = f"the op is not named in the output; inferred from busbw/algbw = {ratio:.3f}"
    if n and n > 2 and abs(ratio - 2 * (n - 1) / n) < 0.02 and reducing:
        return "all_reduce", f"{why} = 2(n-1)/n with n = {n}"
    if n and n > 2 and abs(ratio - (n - 1) / n) < 0.02:
        if reducing:
            return "reduce_scatter", f"{why} = (n-1)/n with a reduction"
        return None, f"{why} = (n-1)/n: all_gather or alltoall (the output does not say which)"
    if abs(ratio - 1) < 0.02 and n and n > 2 and sample.root >= 0:
        return ("reduce" if reducing else "broadcast"), f"{why} = 1 with a root"
    return None, f"{why}: not enough to tell the op"


def _parse_json(text: str, source: str) -> BenchReport:
    """nccl-tests' ``-J`` file (version 1-3, src/util.cu)."""
    data = json.loads(text)
    args = " ".join(str(a) for a in data.get("args", []))
    op = _op_from(args) or "unknown"
    config = data.get("config", {})
    devices = config.get("devices", [])
    rows = []

    def measure(part: dict[str, object] | None) -> Measurement | None:
        if not part:
            return None
        wrong = part.get("nwrong")
        return Measurement(
            time_us=float(str(part.get("time", 0))),
            algbw_gbps=float(str(part.get("alg_bw", 0))),
            busbw_gbps=float(str(part.get("bus_bw", 0))),
            wrong=int(float(str(wrong))) if wrong is not None else None,
        )

    for result in data.get("results", []):
        rows.append(
            Row(
                size_bytes=int(result["size"]),
                count=int(result["count"]),
                dtype=str(result.get("type", "")),
                redop=str(result.get("redop", "") or "none"),
                root=int(str(result.get("root", "-1")).strip() or -1),
                out_of_place=measure(result.get("out_of_place")),
                in_place=measure(result.get("in_place")),
            )
        )
    avg = data.get("average_bus_bandwidth", {}).get("bandwidth")
    oob = data.get("out_of_bounds", {}).get("count")
    run = BenchRun(
        op=op,
        nranks=len(devices) or None,
        rows=tuple(rows),
        avg_busbw_gbps=float(avg) if avg is not None else average_busbw(rows),
        out_of_bounds=int(oob) if oob is not None else None,
        graph_launches=int(config.get("graph", 0) or 0),
    )
    return BenchReport(
        source=source,
        runs=(run,),
        metadata={"nccl_version": data.get("nccl_version"), "args": data.get("args", [])},
    )
