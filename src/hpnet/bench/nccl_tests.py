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
    return BenchReport(
        source=source, runs=tuple(_runs(_lines(text))), metadata=_metadata(text.splitlines())
    )


def _metadata(lines: list[str]) -> dict[str, object]:
    """What the output says of where it ran: nccl-tests' version, NCCL's, the GPUs and
    hosts of its device table (an item is left out when the output does not say it)."""
    meta: dict[str, object] = {}
    gpus: dict[str, int] = {}
    hosts: dict[str, None] = {}
    nccl: dict[str, None] = {}
    for raw in lines:
        line = _strip(raw)
        version = _TESTS_VERSION.search(line)
        if version:
            meta.setdefault("nccl_tests_version", version.group(1))
            if version.group(2):
                code = int(version.group(2))  # NCCL_VERSION_CODE: 22907 = 2.29.7
                nccl.setdefault(f"{code // 10000}.{code // 100 % 100}.{code % 100}", None)
            continue
        found = _NCCL_VERSION.search(line)
        if found:
            nccl.setdefault(found.group(1), None)
        if _NRANKS.search(line):
            device = _DEVICE.search(line)
            if device:
                hosts.setdefault(device.group(1), None)
                gpus[device.group(2)] = gpus.get(device.group(2), 0) + 1
    if nccl:
        meta["nccl_version"] = ", ".join(nccl)
    if gpus:
        meta["gpus"] = [f"{count} x {name}" for name, count in gpus.items()]
    if hosts:
        meta["hosts"] = list(hosts)
    return meta


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
            validation = _VALIDATION.search(content)
            if validation:
                run.validation = int(validation.group(1))
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
            run.wrong_header = "#wrong" in content
            continue
        ranks = _NRANKS.search(content)
        if ranks and " on " in content:
            if run is None:
                run = _Run()
                run.op = pending_op
            run.ranks.add(int(ranks.group(1)))
            run.group_lines = run.group_lines or " Group " in content
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
        failed = _FAILURE.search(content) if "Test " in content else None
        if failed and run is not None:
            # nccl-tests' TESTCHECK: the run stopped here (a CUDA / NCCL error)
            if run.failure is None:
                run.failure = failed.group(0)[:160]
            if len(run.notes) < 8:
                run.notes.append(f"the run failed: {failed.group(0)[:120]}")
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
    fits = [n for n in range(2, 100_001) if low - 1e-9 <= factor(n) <= high + 1e-9]
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
