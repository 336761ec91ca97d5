"""One run of an nccl-tests output as it is read (:class:`Run`: what the lines said so
far), and the :class:`~hpnet.bench.model.BenchRun` it becomes once its lines end
(:func:`finish`: the rank count and the op from everything the text said, then from
the rows; whether results were checked). Used by :mod:`hpnet.bench.nccl_tests`.
"""

from __future__ import annotations

from hpnet.bench.model import BenchRun, Row, average_busbw
from hpnet.bench.nccl_tests_infer import infer_nranks, infer_op

__all__ = ["Run", "finish"]


class Run:
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
        self.nccl_nranks: int | None = None  # NCCL's own "rank r nranks n" lines
        #: a row whose cells other processes' lines split apart, joined as they come
        self.fragment: str | None = None


def finish(run: Run) -> BenchRun:
    notes = list(run.notes)
    nranks = run.nranks
    if run.ranks:
        nranks = max(run.ranks) + 1  # the device table: one line per rank
    elif nranks is None and run.nccl_nranks:
        nranks = run.nccl_nranks
        notes.append(f"{nranks} ranks: NCCL's own lines ('rank r nranks {nranks}')")
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


def _checked(run: Run) -> bool | None:
    """Were the results checked: the ``validation:`` of the nThread line (the ``-c``
    value), else the rows (a ``#wrong`` count or the old float ``error`` column is a
    check's result, ``N/A`` is none); None when the output shows neither."""
    if run.validation is not None:
        return run.validation > 0
    measured = [m for row in run.rows for m in (row.out_of_place, row.in_place) if m is not None]
    if any(m.wrong is not None or m.error is not None for m in measured):
        return True
    return False if measured else None
