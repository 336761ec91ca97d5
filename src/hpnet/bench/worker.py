"""One rank of ``hpnet bench``: run the sweep, rank 0 writes the results.

    python -m hpnet.bench.worker SPEC.json RESULT.json

RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT come from the process
environment here (``hpnet bench`` sets them for its own local ranks); under a launcher
``hpnet bench`` calls :func:`run` with what :func:`hpnet.bench.ranks.launcher_ranks`
found (torchrun's, Open MPI's, srun's variables). Only ranks import torch (through
:class:`~hpnet.bench.backends.RankContext`).

Backends (``nccl`` through CuPy, ``torch-nccl``, ``gloo``): :mod:`hpnet.bench.backends`.

Timing follows nccl-tests (src/common.cu ``BenchTime``): the ranks aligned (a barrier,
then a one-element collective waited for), then ``iters`` launches and one
synchronisation, timed on the host; the row's time is the slowest
rank's (nccl-tests ``-a 3``). With ``graph_launches`` G > 0 the ``iters`` launches are
captured in one CUDA graph that is replayed G times. A second pass times each
iteration with CUDA events (CPU clocks on gloo) for the min / median / p99 columns.
The check (``-c``) runs once after the timing, on data that differs per rank and per
element, and counts the elements that differ from the expected result exactly.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from hpnet.bench.backends import RankContext, Tensor
from hpnet.bench.formulas import (
    DTYPES,
    OpShape,
    algbw_gbps,
    busbw_gbps,
    percentile,
    reduces,
    shape,
)
from hpnet.outputfile import write_file

#: how rank 0's progress lines start (hpnet.bench.run echoes them from its log)
PROGRESS = "hpnet bench:"


# ---------------------------------------------------------------- the check

#: elements written or checked at a time: the check's temporaries (int64 indices, the
#: float64 expected values and the copy of what came back) are a few MiB, whatever the
#: size, so that a rank holds its two buffers and little more (issue 23: building the
#: expected result of a 256 MiB all_reduce in one piece took ten buffers' worth more)
CHUNK_ELEMENTS = 1 << 20


def _values(ctx: RankContext, rank: int, offset: int, count: int) -> Tensor:
    """Rank ``rank``'s input at elements [offset, offset + count): small integers that
    differ per rank and per element, exact in every dtype (bf16 included), whose
    reductions over up to 32 ranks stay exact."""
    torch = ctx.torch
    index = torch.arange(offset, offset + count, device=ctx.device, dtype=torch.int64)
    # prod: 1s and 2s, so that the product of 32 ranks stays exact in float
    values = 1 + (index + rank) % 2 if ctx.redop == "prod" else 1 + (index * 7 + rank * 3) % 4
    return values.to(ctx.dtype)


def _fill(ctx: RankContext, target: Tensor, rank: int, offset: int = 0) -> None:
    """Write rank ``rank``'s input from element ``offset`` on into ``target``, a piece
    at a time (:data:`CHUNK_ELEMENTS`)."""
    total = target.numel()
    for start in range(0, total, CHUNK_ELEMENTS):
        count = min(CHUNK_ELEMENTS, total - start)
        target[start : start + count] = _values(ctx, rank, offset + start, count)


def _reduce(ctx: RankContext, offset: int, count: int) -> Tensor:
    """Every rank's input at [offset, offset + count) reduced with ``ctx.redop``, in
    float64 (exact: small integers), one rank's part at a time."""
    torch = ctx.torch
    out = _values(ctx, 0, offset, count).to(torch.float64)
    for r in range(1, ctx.world):
        part = _values(ctx, r, offset, count).to(torch.float64)
        if ctx.redop == "prod":
            out.mul_(part)
        elif ctx.redop == "max":
            torch.maximum(out, part, out=out)
        elif ctx.redop == "min":
            torch.minimum(out, part, out=out)
        else:  # sum, avg
            out.add_(part)
    if ctx.redop == "avg":
        out.div_(ctx.world)
    return out


#: (where the result lands in this rank's receive buffer, the expected values of its
#: elements [offset, offset + count) as a function of offset and count)
_Expected = tuple[Tensor, Callable[[int, int], Tensor]]


def _expected(
    ctx: RankContext, op: str, count: int, recv: Tensor, placement: str
) -> list[_Expected]:
    """What this rank should hold after ``op``, in pieces of its receive buffer."""
    rank, world = ctx.rank, ctx.world
    if op == "all_reduce" or (op == "reduce" and rank == ctx.root):
        return [(recv[:count], lambda o, n: _reduce(ctx, o, n))]
    if op == "reduce":
        return []
    if op == "broadcast":
        return [(recv[:count], lambda o, n: _values(ctx, ctx.root, o, n))]
    if op == "sendrecv":
        return [(recv[:count], lambda o, n: _values(ctx, (rank - 1) % world, o, n))]
    if op == "reduce_scatter":
        got = recv[rank * count : (rank + 1) * count] if placement == "in" else recv[:count]
        return [(got, lambda o, n: _reduce(ctx, rank * count + o, n))]
    # all_gather: block q is rank q's input; alltoall: block q of my result is block
    # `rank` of rank q's input
    base = 0 if op == "all_gather" else rank * count
    return [(recv[q * count : (q + 1) * count], _input_of(ctx, q, base)) for q in range(world)]


def _input_of(ctx: RankContext, rank: int, base: int) -> Callable[[int, int], Tensor]:
    """Rank ``rank``'s input from element ``base`` on, as a function of offset and count."""
    return lambda offset, count: _values(ctx, rank, base + offset, count)


def _count_wrong(ctx: RankContext, got: Tensor, expected: Tensor, op: str) -> int:
    """The elements of ``got`` that differ from ``expected`` (float64)."""
    torch = ctx.torch
    got = got.to(torch.float64)
    if ctx.redop == "avg" and op in ("all_reduce", "reduce", "reduce_scatter"):
        if not ctx.dtype.is_floating_point:  # integer avg: the sum divided, truncated
            expected = torch.trunc(expected)
        else:
            # sum / world is not exact in floating point (1/3), and NCCL's avg multiplies
            # each input by 1/world before summing: allow each of the world additions
            # its rounding. A wrong or unwritten element (-1) is off by far more.
            eps = torch.finfo(ctx.dtype).eps
            tolerance = (ctx.world + 1) * eps * expected.abs().clamp(min=1)
            return int(((got - expected).abs() > tolerance).sum().item())
    return int((got != expected).sum().item())


def _check(
    ctx: RankContext, op: str, geometry: OpShape, *, send: Tensor, recv: Tensor, placement: str
) -> int:
    """Run the op once on known data; count the wrong elements on this rank. The data
    is written and compared :data:`CHUNK_ELEMENTS` at a time: no full-size temporary."""
    torch = ctx.torch
    rank, world, count = ctx.rank, ctx.world, geometry.count
    source = recv if placement == "in" else send
    recv.fill_(-1)
    if op in ("all_reduce", "broadcast", "reduce", "sendrecv"):
        _fill(ctx, source[:count], rank)
    elif op == "all_gather":
        target = recv[rank * count : (rank + 1) * count] if placement == "in" else send[:count]
        _fill(ctx, target, rank)
    else:  # reduce_scatter, alltoall: count elements per peer
        _fill(ctx, source[: count * world], rank)
    launch = ctx.launcher(op, geometry, send, recv, placement)
    # the data above was written on torch's current stream, the direct NCCL backend
    # launches on its own: without this the collective races the writes (wrong
    # elements from 128 MiB up on H200, found on the device)
    ctx.sync()
    ctx.barrier()
    launch()
    ctx.sync()
    wrong = 0
    for got, expected in _expected(ctx, op, count, recv, placement):
        total = got.numel()
        for start in range(0, total, CHUNK_ELEMENTS):
            n = min(CHUNK_ELEMENTS, total - start)
            piece = expected(start, n).to(torch.float64)
            wrong += _count_wrong(ctx, got[start : start + n], piece, op)
    return wrong


# ---------------------------------------------------------------- timing


def _time(ctx: RankContext, launch: Callable[[], None], iters: int, graphs: int) -> float:
    """Mean seconds per launch on this rank (nccl-tests' way: host clock, one sync)."""
    torch = ctx.torch
    if graphs and ctx.cuda:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=ctx.stream):
            for _ in range(iters):
                launch()
        ctx.sync()
        ctx.align()
        start = time.perf_counter()
        # replay on the capture stream, as nccl-tests launches its graph on its stream:
        # CUDAGraph.replay() launches on the current stream, the legacy default stream
        # outside this block
        with torch.cuda.stream(ctx.stream):
            for _ in range(graphs):
                graph.replay()
        ctx.sync()
        return (time.perf_counter() - start) / (iters * graphs)
    ctx.sync()
    ctx.align()
    start = time.perf_counter()
    if ctx.stream is not None and ctx.backend == "nccl":
        for _ in range(iters):
            launch()
    elif ctx.stream is not None:
        with torch.cuda.stream(ctx.stream):
            for _ in range(iters):
                launch()
    else:
        for _ in range(iters):
            launch()
    ctx.sync()
    return (time.perf_counter() - start) / iters


def _per_iteration(ctx: RankContext, launch: Callable[[], None], iters: int) -> list[float]:
    """Each iteration's microseconds (CUDA events on GPUs, the host clock on CPUs)."""
    torch = ctx.torch
    ctx.sync()
    ctx.align()
    if not ctx.cuda:
        times = []
        for _ in range(iters):
            start = time.perf_counter()
            launch()
            times.append((time.perf_counter() - start) * 1e6)
        return times
    events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    ctx.sync()
    with torch.cuda.stream(ctx.stream):
        events[0].record(ctx.stream)
        for i in range(iters):
            launch()
            events[i + 1].record(ctx.stream)
    ctx.sync()
    return [events[i].elapsed_time(events[i + 1]) * 1000 for i in range(iters)]


# ---------------------------------------------------------------- the sweep


def run(
    spec: dict[str, Any],
    ranks: Mapping[str, str],
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
    after: Callable[[RankContext], object] | None = None,
) -> dict[str, Any] | None:
    """The sweep on this rank; rank 0 returns the results, others None. Rank 0 hands
    ``checkpoint`` the results so far after every row, so a crash loses no row.
    ``after`` runs on every rank once the sweep is done, with the ranks' groups still
    up (``hpnet check --all`` measures and gathers there); rank 0's value comes back
    as the result's ``"after"``."""
    ctx = RankContext(spec, ranks)
    hosts = ctx.gather_text(os.uname().nodename)  # every rank takes part
    meta = _metadata(ctx, hosts) if ctx.rank == 0 else None
    runs: list[dict[str, Any]] = []
    total = len(spec["ops"]) * len(spec["sizes"])
    done = 0
    for op in spec["ops"]:
        rows: list[dict[str, Any]] = []
        runs.append({"op": op, "nranks": ctx.world, "rows": rows})
        # the op's buffers (and every view of them) go when the sweep of it ends: the
        # next op's are made after, never while these are still held (issue 23)
        for row in _sweep_op(ctx, spec, op):
            done += 1
            if ctx.rank == 0:
                rows.append(row)
                if checkpoint is not None:
                    checkpoint({"runs": runs, "metadata": meta, "complete": False})
                # standard error: under a launcher, standard output is the user's table
                print(
                    f"{PROGRESS} {done}/{total} {op} {row['size_bytes']} B",
                    file=sys.stderr,
                    flush=True,
                )
    extra = after(ctx) if after is not None else None
    ctx.barrier()
    if ctx.comm is not None:
        ctx.comm.destroy()
    ctx.dist.destroy_process_group()
    if ctx.rank != 0:
        return None
    result: dict[str, Any] = {"runs": runs, "metadata": meta, "complete": True}
    if after is not None:
        result["after"] = extra
    return result


def _sweep_op(ctx: RankContext, spec: dict[str, Any], op: str) -> Iterator[dict[str, Any]]:
    """Every size of one op, on two buffers made for its largest size: what a rank
    holds is these two (:func:`hpnet.bench.memory.rank_need_bytes`), the check's
    pieces of :data:`CHUNK_ELEMENTS` and what the backend copies. Yields each size's
    row (filled in on rank 0) as it is measured."""
    torch = ctx.torch
    typesize = DTYPES[spec["dtype"]]
    sizes = spec["sizes"]
    biggest = shape(op, max(sizes), ctx.world, typesize)
    length = max(biggest.send_count, biggest.recv_count, 1)
    send = torch.empty(length, dtype=ctx.dtype, device=ctx.device)
    _fill(ctx, send, ctx.rank)
    recv = torch.empty(length, dtype=ctx.dtype, device=ctx.device)
    _fill(ctx, recv, ctx.rank)
    ctx.sync()  # written on torch's stream; NCCL (direct) reads them on its own
    for size in sizes:
        geometry = shape(op, size, ctx.world, typesize)
        row: dict[str, Any] = {
            "size_bytes": geometry.size_bytes,
            "count": geometry.count,
            "dtype": spec["dtype"],
            "redop": spec["redop"] if reduces(op) else "none",
            "root": ctx.root if op in ("broadcast", "reduce") else -1,
            "out_of_place": None,
            "in_place": None,
        }
        for placement in ctx.placements(op):
            launch = ctx.launcher(op, geometry, send, recv, placement)
            for _ in range(spec["warmup"]):
                launch()
            ctx.sync()
            seconds = _time(ctx, launch, spec["iters"], spec["graph_launches"])
            iterations = _per_iteration(ctx, launch, spec["iters"]) if spec["per_iteration"] else []
            # in-place alltoall / sendrecv overwrite their own input: nccl-tests
            # times them and prints N/A for the check (src/alltoall.cu reportErrors)
            checkable = spec["check"] and not (placement == "in" and op in ("alltoall", "sendrecv"))
            wrong = (
                _check(ctx, op, geometry, send=send, recv=recv, placement=placement)
                if checkable
                else None
            )
            gathered = ctx.gather([seconds, -1.0 if wrong is None else wrong, *iterations])
            if ctx.rank == 0:
                row["out_of_place" if placement == "out" else "in_place"] = _measurement(
                    op, geometry.size_bytes, ctx.world, gathered
                )
        yield row


def _measurement(op: str, size: int, world: int, gathered: list[list[float]]) -> dict[str, Any]:
    """Rank 0's row cell from every rank's [seconds, wrong (-1: unchecked), iterations...]."""
    times = [g[0] for g in gathered]
    slowest = max(times)
    per_iter = [t for g in gathered for t in g[2:]]
    wrongs = [None if g[1] < 0 else int(g[1]) for g in gathered]
    return {
        "time_us": slowest * 1e6,
        "algbw_gbps": algbw_gbps(size, slowest),
        "busbw_gbps": busbw_gbps(op, size, slowest, world),
        "wrong": None if any(w is None for w in wrongs) else sum(w or 0 for w in wrongs),
        "min_us": min(per_iter) if per_iter else None,
        "median_us": percentile(per_iter, 0.5) if per_iter else None,
        "p99_us": percentile(per_iter, 0.99) if per_iter else None,
        "rank_times_us": [t * 1e6 for t in times],
    }


def nccl_version_text(code: int) -> str:
    """NCCL_VERSION_CODE as text (nccl.h: X*10000+Y*100+Z from 2.9, X*1000+Y*100+Z before).

    >>> nccl_version_text(22809), nccl_version_text(2804)
    ('2.28.9', '2.8.4')
    """
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _metadata(ctx: RankContext, hosts: list[str]) -> dict[str, Any]:
    torch = ctx.torch
    nccl_version = None
    try:
        if ctx.backend == "nccl":  # the NCCL CuPy loaded, which may not be torch's
            nccl_version = nccl_version_text(int(ctx.nccl.get_version()))
        elif ctx.cuda:
            nccl_version = ".".join(str(v) for v in torch.cuda.nccl.version())
    except Exception:  # noqa: BLE001 - optional information
        nccl_version = None
    gpus = []
    if ctx.cuda:
        gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "backend": ctx.backend,
        "device": "cuda" if ctx.cuda else "cpu",
        "nranks": ctx.world,
        "torch": torch.__version__,
        "nccl": nccl_version,
        "gpus": gpus,
        "hosts": sorted({str(h) for h in hosts if h}),
    }


def write_json(path: str, data: dict[str, Any]) -> None:
    """Replace ``path`` atomically: a reader never sees half a file, and a symlink
    planted at it (``--save``'s checkpoint beside the result under a launcher) is
    replaced, never followed (:func:`hpnet.outputfile.write_file`)."""
    write_file(path, json.dumps(data))


def main(argv: list[str]) -> int:
    with open(argv[1]) as handle:
        spec = json.load(handle)
    result = run(spec, os.environ, checkpoint=lambda data: write_json(argv[2], data))
    if result is not None:
        write_json(argv[2], result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
