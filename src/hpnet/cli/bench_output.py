"""How ``hpnet bench`` results leave: printed (table, JSON, CSV), verdict, saved files.

:func:`emit` prints a report with its verdict (:func:`verdict_of`), :func:`result_json`
is what ``--save`` and ``--json`` write (``--json`` streams it:
:func:`stream_result_json`), :func:`write_result` saves it, and
:func:`check_output` refuses an output path that cannot be written before any work.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from hpnet.result import Status

if TYPE_CHECKING:
    from hpnet.bench.gate import GateResult
    from hpnet.bench.model import BenchReport, BenchRun

__all__ = [
    "check_output",
    "emit",
    "remove_file",
    "result_json",
    "stream_result_json",
    "title_of",
    "verdict_of",
    "write_result",
]


def emit(report: BenchReport, *, json: bool, csv: bool, gates: Sequence[GateResult] = ()) -> None:
    """Print the report as JSON, CSV, or the nccl-tests table with the verdict."""
    if json:
        stream_result_json(sys.stdout, report, gates)
    elif csv:
        from hpnet.render.bench import render_csv  # noqa: PLC0415

        print(render_csv(report), end="")
    else:
        from hpnet.render.bench import render_report  # noqa: PLC0415

        status, verdict = verdict_of(report, gates)
        print(render_report(report, gates=gates, verdict=f"# {status}: {verdict}"), end="")


def verdict_of(report: BenchReport, gates: Sequence[GateResult]) -> tuple[Status, str]:
    """PASS when every row is right, every expectation met (judged and met: one that
    could not be judged is not) and the sweep complete."""
    problems = []
    if report.incomplete:
        problems.append(f"the sweep stopped early: {report.incomplete}")
    wrong = [
        f"{run.op} {row.size_bytes} B" if run.op != "unknown" else f"{row.size_bytes} B"
        for run in report.runs
        for row in run.rows
        if any(m is not None and (m.wrong or 0) > 0 for m in (row.out_of_place, row.in_place))
    ]
    if wrong:
        problems.append(
            f"wrong results at {', '.join(wrong[:5])}" + (" ..." if len(wrong) > 5 else "")
        )
    # an imported nccl-tests run says so itself: its "Out of bounds values : N FAILED"
    # line, and the test's own failure messages ("Test failure common.cu:704")
    problems += [
        f"{run.op}: {run.out_of_bounds} out-of-bounds values"
        for run in report.runs
        if run.out_of_bounds
    ]
    problems += [
        f"{run.op}: the run failed: {run.failure}{_named(run.failure)}"
        for run in report.runs
        if run.failure
    ]
    problems += [f"{g.op} below expectation: {g.detail}" for g in gates if g.status == Status.FAIL]
    # an expectation asked for and not judged is not met: the rule `hpnet verify
    # --expect` follows (what the log does not prove is no pass), issue 26
    problems += [
        f"{g.op}: the expectation could not be judged: {g.detail}"
        for g in gates
        if g.status == Status.SKIP
    ]
    if problems:
        return Status.FAIL, "; ".join(problems)
    summary = ", ".join(_run_summary(run) for run in report.runs) or "no rows"
    states = {_checked_of(run) for run in report.runs}
    if states == {True}:
        checked = "results checked"
    elif states == {False}:
        checked = "results not checked (-c 0)"
    elif True in states:
        checked = "results of some runs checked"
    else:
        checked = "whether results were checked is not shown"
    met = [g for g in gates if g.status == Status.PASS]
    tail = f"; {len(met)} expectation(s) met" if met else ""
    # an imported output's: hpnet bench's own runs know their ranks and print one table
    imported = report.source != "hpnet bench"
    cautions = [said for run in report.runs for said in _cautions(run)] if imported else []
    if cautions:
        return Status.WARN, "; ".join(cautions) + f"; {summary}; {checked}{tail}"
    return Status.PASS, f"{summary}; {checked}{tail}"


def _named(failure: str) -> str:
    """What ``hpnet verify`` names a failure line: the first specific signature of an
    error it matches (a CUDA error's meaning, an NCCL WARN's cause), with its fix."""
    from hpnet.ncclog.signatures import SIGNATURES  # noqa: PLC0415 - only for a failed run

    # nccl-tests' "Test CUDA failure common.cu:892 'out of memory'": NCCL's own lines put
    # no place between "failure" and the error, and the signatures read them so
    text = re.sub(r"\b(failure) \S+\.(?:cu|cc|c|h|cpp):\d+ ", r"\1 ", failure)
    for sig in SIGNATURES:
        if sig.severity == "error" and not sig.consequence and sig.pattern.search(text):
            return f" — {sig.title}: {sig.cause}; fix: {sig.fix}"
    return ""


def _cautions(run: BenchRun) -> list[str]:
    """What makes a run's numbers no measure of a network: one rank (nothing crossed a
    link), and rows of one size printed more than once (several runs' tables in one
    stream)."""
    said = []
    name = run.op if run.op != "unknown" else "the run"
    if run.nranks == 1:
        said.append(
            f"{name} ran on 1 rank: no data crossed a link, so its bandwidth says nothing of "
            "the network (busbw is 0 where the op's bus factor has n-1 in it, as all_reduce's "
            "2(n-1)/n); under mpirun, nccl-tests built without MPI=1 runs each process alone"
        )
    # one run prints each type's, redop's and root's sizes in increasing order (src/common.cu
    # loops over them, sizes innermost); a size below the one before it of the same three
    # starts another run's table (a size rounded down to whole elements repeats, never falls)
    # -N (run cycles, nccl-tests 2.13.10+) repeats the whole sweep: a sequence that is its
    # first cycle again and again is one run
    sizes: dict[tuple[str, str, int], list[int]] = {}
    for row in run.rows:
        sizes.setdefault((row.dtype, row.redop, row.root), []).append(row.size_bytes)
    fell = []
    for seq in sizes.values():
        falls = [i for i in range(1, len(seq)) if seq[i] < seq[i - 1]]
        cycle = seq[: falls[0]] if falls else seq
        if falls and seq != cycle * (len(seq) // len(cycle)):
            fell += [f"{seq[i]} B after {seq[i - 1]} B" for i in falls]
    if fell:
        said.append(
            f"{name}: its rows' sizes fall back ({', '.join(fell[:3])}"
            f"{' ...' if len(fell) > 3 else ''}) where one run's only grow: several runs' "
            "tables in one stream (processes each printing its own, as mpirun's ranks do "
            "when they run apart), not one run"
        )
    return said


def _checked_of(run: BenchRun) -> bool | None:
    """A run's checking: what its import read, else whether its rows carry a check."""
    if run.checked is not None:
        return run.checked
    measured = [m for row in run.rows for m in (row.out_of_place, row.in_place) if m is not None]
    if any(m.wrong is not None for m in measured):
        return True
    return False if measured else None


def _run_summary(run: BenchRun) -> str:
    """``all_reduce avg busbw 95.30 GB/s``; without the average line, the rows' peak."""
    if run.avg_busbw_gbps is not None:
        return f"{run.op} avg busbw {run.avg_busbw_gbps:.2f} GB/s"
    busbw = [m.busbw_gbps for row in run.rows for m in (row.out_of_place,) if m is not None]
    if busbw:
        return f"{run.op} peak busbw {max(busbw):.2f} GB/s (no average line)"
    return f"{run.op}: no rows"


def title_of(report: BenchReport) -> str:
    meta = report.metadata
    ops = ", ".join(run.op for run in report.runs)
    nranks = report.runs[0].nranks if report.runs else None
    ranks = f"{nranks} ranks" if nranks is not None else "ranks not shown"
    stack = f"{meta.get('backend', '')} {meta.get('device', '')}".strip()
    return f"hpnet bench {ops}: {ranks}, {stack}"


def result_json(report: BenchReport, gates: Sequence[GateResult] = ()) -> str:
    """The JSON of docs/bench-schema.md: what --json prints and --save writes."""
    from hpnet.bench.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

    status, verdict = verdict_of(report, gates)
    return dumps(
        envelope(
            report,
            schema_version=SCHEMA_VERSION,
            status=status,
            verdict=verdict,
            after={"gates": list(gates)},
        )
    )


def stream_result_json(out: TextIO, report: BenchReport, gates: Sequence[GateResult] = ()) -> None:
    """Write :func:`result_json`'s text to ``out`` piece by piece
    (:func:`hpnet.jsonout.write_envelope`): the same bytes, without holding the document in
    memory (``bench import --json`` of a large output held ~60x the input, issue 23)."""
    from hpnet.bench.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import write_envelope  # noqa: PLC0415

    status, verdict = verdict_of(report, gates)
    write_envelope(
        out,
        report,
        schema_version=SCHEMA_VERSION,
        status=status,
        verdict=verdict,
        after={"gates": list(gates)},
    )


def write_result(path: str, text: str) -> None:
    from hpnet.errors import InputError  # noqa: PLC0415
    from hpnet.outputfile import write_file  # noqa: PLC0415

    try:
        write_file(path, text)  # a symlink at path is replaced, never followed
    except OSError as exc:
        raise InputError(
            f"the result could not be saved: {exc.strerror or exc} (it is printed above)",
            code="unwritable",
            where=path,
            fix="save it to a writable file: rerun with --save in a directory you own, or "
            "keep the printed table (hpnet bench import reads it back)",
        ) from None


def check_output(path: str, *, flag: str, directory: bool = False) -> None:
    """Refuse an output path that cannot be written, before any work: a missing or
    unwritable parent directory, a directory where a file is meant (or a file where a
    directory is meant, with ``directory``; a new directory's parent must exist, as a
    new file's does). Nothing is created. Used for ``--save``,
    ``--plot`` and ``hpnet check --report``.

    >>> check_output("/", flag="--save")
    Traceback (most recent call last):
    ...
    hpnet.errors.InputError: / is a directory, not a file
    """
    from hpnet.errors import InputError  # noqa: PLC0415

    def refuse(what: str, fix: str) -> InputError:
        return InputError(what, code="unwritable", where=f"{flag} {path}", fix=fix)

    if not path:
        raise refuse("an empty path", f"{flag} FILE")
    target = os.path.abspath(path)
    writable = os.W_OK | os.X_OK if directory else os.W_OK
    if os.path.isdir(target):
        if not directory:
            raise refuse(f"{path} is a directory, not a file", f"{flag} {path.rstrip('/')}/NAME")
        if not os.access(target, writable):
            raise refuse(f"the directory {path} is not writable", f"{flag} a directory you own")
        return
    if os.path.lexists(target):
        if directory:
            raise refuse(
                f"{path} is a file, not a directory", f"{flag} a new or existing directory"
            )
        if not os.access(target, writable):
            raise refuse(f"{path} is not writable", f"{flag} a file you own")
        return
    # a new directory is made in a parent that exists, never with its parents: a
    # mistyped path (/nonexistent/dir) would otherwise make directories at /
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        missing = "is not a directory" if os.path.lexists(parent) else "does not exist"
        raise refuse(
            f"{parent} {missing}", f"create it first (mkdir -p {parent}), or choose another path"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise refuse(f"the directory {parent} is not writable", f"{flag} in a directory you own")


def remove_file(path: str) -> None:
    import contextlib  # noqa: PLC0415

    with contextlib.suppress(OSError):
        os.unlink(path)
