"""One rank of ``hpnet bench``: run the sweep, rank 0 writes the results.

    python -m hpnet.bench.worker SPEC.json RESULT.json

RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT come from the process
environment here (``hpnet bench`` sets them for its own local ranks); under a launcher
``hpnet bench`` calls :func:`run` with what :func:`hpnet.bench.run.launcher_ranks`
found (torchrun's, Open MPI's, srun's variables). This is the only bench module that
imports torch.

Backends:

* ``nccl``: NCCL itself through CuPy's bindings (``cupy.cuda.nccl``) on torch tensors
  and streams: one Python call per collective, so small-message latency is NCCL's.
* ``torch-nccl``: ``torch.distributed`` with its NCCL backend.
* ``gloo``: ``torch.distributed`` with gloo on CPU tensors (what runs in CI).

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
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from hpnet.bench.formulas import (
    DTYPES,
    OpShape,
    algbw_gbps,
    busbw_gbps,
    percentile,
    reduces,
    shape,
)

Tensor = Any  # torch.Tensor; torch is imported only when a rank runs
#: how rank 0's progress lines start (hpnet.bench.run echoes them from its log)
PROGRESS = "hpnet bench:"


class _Ctx:
    """The rank's view: torch, the device, the groups, and how to launch an op."""

    def __init__(self, spec: dict[str, Any], ranks: Mapping[str, str]) -> None:
        warnings.filterwarnings("ignore", message=".*NumPy.*")
        import torch  # noqa: PLC0415 - only ranks import torch
        import torch.distributed as dist  # noqa: PLC0415

        self.torch = torch
        self.dist = dist
        self.rank = int(ranks["RANK"])
        self.world = int(ranks["WORLD_SIZE"])
        self.local = int(ranks.get("LOCAL_RANK", self.rank))
        cuda = spec["device"] in ("auto", "cuda") and torch.cuda.is_available()
        if spec["device"] == "cuda" and not cuda:
            raise SystemExit("hpnet bench: --device cuda but torch sees no GPU")
        self.cuda = cuda
        backend = spec["backend"]
        if backend == "auto":
            backend = "gloo"
            if cuda:
                backend = "nccl" if _has_cupy_nccl() else "torch-nccl"
        self.backend = backend
        if cuda:
            self.device = torch.device("cuda", self.local % torch.cuda.device_count())
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
            # ranks share the CPUs: OpenMP threads spinning after a parallel region
            # in one rank steal the time another needs (millisecond stalls); torchrun
            # sets OMP_NUM_THREADS=1 for the same reason
            local_world = int(ranks.get("LOCAL_WORLD_SIZE", self.world))
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // max(local_world, 1)))
        where = init_method(ranks)
        if backend == "torch-nccl":
            dist.init_process_group(
                "nccl", init_method=where, rank=self.rank, world_size=self.world,
                device_id=self.device,
            )  # fmt: skip
            self.control = dist.new_group(backend="gloo")
        else:
            dist.init_process_group(
                "gloo", init_method=where, rank=self.rank, world_size=self.world
            )
            self.control = None
        self.stream: Any = torch.cuda.Stream(device=self.device) if cuda else None
        self.comm: Any = None
        if backend == "nccl":
            from cupy.cuda import nccl  # noqa: PLC0415

            self.nccl = nccl
            import cupy  # noqa: PLC0415

            # ncclUniqueId is 128 bytes (nccl.h NCCL_UNIQUE_ID_BYTES); CuPy 14 takes it
            # as bytes, older CuPy as a tuple of signed chars
            raw = nccl.get_unique_id() if self.rank == 0 else None
            mine = None if raw is None else bytes(b & 0xFF for b in raw)
            uid = self.broadcast_bytes(mine, 128)
            cupy.cuda.Device(self.device.index).use()
            try:
                self.comm = nccl.NcclCommunicator(self.world, uid, self.rank)
            except TypeError:
                signed = tuple(b - 256 if b > 127 else b for b in uid)
                self.comm = nccl.NcclCommunicator(self.world, signed, self.rank)
        self._align_buf = torch.zeros(1, dtype=torch.float32, device=self.device)
        self.dtype = _torch_dtype(torch, spec["dtype"])
        self.nccl_dtype = _nccl_dtype(self.nccl, spec["dtype"]) if backend == "nccl" else None
        self.redop = spec["redop"]
        self.root = spec["root"]

    # -- control plane (always gloo, on the CPU)
    def barrier(self) -> None:
        self.dist.barrier(group=self.control)

    def align(self) -> None:
        """Start every rank's clock together: a gloo barrier lets ranks go hundreds of
        microseconds apart (TCP), and the first collective's wait for the last rank
        would count in the early ranks' time. A one-element collective on the data
        path, waited for, releases all ranks within NCCL's own latency."""
        self.barrier()
        if not self.cuda:
            return
        if self.backend == "nccl":
            buf = self._align_buf.data_ptr()
            self.comm.allReduce(
                buf, buf, 1, self.nccl.NCCL_FLOAT32, self.nccl.NCCL_SUM, self.stream.cuda_stream
            )
        else:
            with self.torch.cuda.stream(self.stream):
                self.dist.all_reduce(self._align_buf)
        self.sync()

    def gather(self, values: list[float]) -> list[list[float]]:
        """Every rank's ``values`` (all the same length), on every rank. Plain tensors:
        torch's *_object collectives need numpy, which a slim image may lack."""
        torch = self.torch
        mine = torch.tensor(values, dtype=torch.float64)
        parts = [torch.empty_like(mine) for _ in range(self.world)]
        self.dist.all_gather(parts, mine, group=self.control)
        return [part.tolist() for part in parts]

    def gather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's bytes (any length), on every rank: lengths first, then the
        data padded to the longest, over the control group."""
        torch = self.torch
        sizes = [int(row[0]) for row in self.gather([float(len(data))])]
        longest = max(sizes)
        mine = torch.zeros(max(longest, 1), dtype=torch.uint8)
        if data:
            mine[: len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        parts = [torch.empty_like(mine) for _ in range(self.world)]
        self.dist.all_gather(parts, mine, group=self.control)
        return [bytes(part[:size].tolist()) for part, size in zip(parts, sizes, strict=True)]

    def gather_text(self, text: str, limit: int = 255) -> list[str]:
        data = text.encode("utf-8", "replace")[:limit]
        padded = list(data) + [0] * (limit + 1 - len(data))
        return [
            bytes(int(b) for b in row).split(b"\0", 1)[0].decode("utf-8", "replace")
            for row in self.gather([float(b) for b in padded])
        ]

    def broadcast_bytes(self, data: bytes | None, length: int) -> bytes:
        torch = self.torch
        tensor = torch.zeros(length, dtype=torch.uint8)
        if data is not None:
            tensor[: len(data)] = torch.tensor(list(data), dtype=torch.uint8)
        self.dist.broadcast(tensor, src=0, group=self.control)
        return bytes(tensor.tolist())

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    # -- the data plane
    def placements(self, op: str) -> tuple[str, ...]:
        """What this backend can run: torch's API is in-place only for some ops."""
        if self.backend == "nccl":
            return ("out", "in")
        return {
            "all_reduce": ("in",),
            "broadcast": ("in",),
            "reduce": ("in",),
            "all_gather": ("out", "in"),
            "reduce_scatter": ("out", "in"),
            "alltoall": ("out",),
            "sendrecv": ("out",),
        }[op]

    def launcher(
        self, op: str, geometry: OpShape, send: Tensor, recv: Tensor, placement: str
    ) -> Callable[[], None]:
        """A closure that launches one op on these buffers (asynchronously on GPUs)."""
        if self.backend == "nccl":
            return self._nccl_launcher(op, geometry, send, recv, placement)
        return self._torch_launcher(op, geometry, send, recv, placement)

    def _torch_launcher(
        self, op: str, geometry: OpShape, send: Tensor, recv: Tensor, placement: str
    ) -> Callable[[], None]:
        dist = self.dist
        redop = _torch_redop(dist, self.redop)
        count = geometry.count
        rank, world = self.rank, self.world
        if op == "all_reduce":
            return lambda: dist.all_reduce(recv[:count], op=redop)
        if op == "broadcast":
            return lambda: dist.broadcast(recv[:count], self.root)
        if op == "reduce":
            return lambda: dist.reduce(recv[:count], self.root, op=redop)
        # torch 2.13 renamed all_gather_into_tensor / reduce_scatter_tensor to *_single
        gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
        if op == "all_gather":
            out = recv[: count * world]
            source = out[rank * count : (rank + 1) * count] if placement == "in" else send[:count]
            return lambda: gather(out, source)
        if op == "reduce_scatter":
            source = send[: count * world] if placement == "out" else recv[: count * world]
            out = source[rank * count : (rank + 1) * count] if placement == "in" else recv[:count]
            return lambda: scatter(out, source, op=redop)
        if op == "alltoall":
            return lambda: dist.all_to_all_single(recv[: count * world], send[: count * world])
        if op == "sendrecv":
            after, before = (rank + 1) % world, (rank - 1) % world

            def sendrecv() -> None:
                ops = [
                    dist.P2POp(dist.isend, send[:count], after),
                    dist.P2POp(dist.irecv, recv[:count], before),
                ]
                for request in dist.batch_isend_irecv(ops):
                    request.wait()

            return sendrecv
        raise ValueError(op)

    def _nccl_launcher(
        self, op: str, geometry: OpShape, send: Tensor, recv: Tensor, placement: str
    ) -> Callable[[], None]:
        nccl, comm = self.nccl, self.comm
        stream = self.stream.cuda_stream
        dtype = self.nccl_dtype
        redop = _nccl_redop(nccl, self.redop)
        count, rank, world = geometry.count, self.rank, self.world
        size = send.element_size()
        source = recv if placement == "in" else send
        s, r = source.data_ptr(), recv.data_ptr()
        if op == "all_reduce":
            return lambda: comm.allReduce(s, r, count, dtype, redop, stream)
        if op == "broadcast":
            return lambda: comm.broadcast(s, r, count, dtype, self.root, stream)
        if op == "reduce":
            return lambda: comm.reduce(s, r, count, dtype, redop, self.root, stream)
        if op == "all_gather":
            # in place: the send buffer is this rank's chunk of the receive buffer
            s_in = r + rank * count * size if placement == "in" else s
            return lambda: comm.allGather(s_in, r, count, dtype, stream)
        if op == "reduce_scatter":
            r_in = s + rank * count * size if placement == "in" else r
            return lambda: comm.reduceScatter(s, r_in, count, dtype, redop, stream)
        if op == "alltoall":
            chunk = count * size

            def alltoall() -> None:
                nccl.groupStart()
                for peer in range(world):
                    comm.send(s + peer * chunk, count, dtype, peer, stream)
                    comm.recv(r + peer * chunk, count, dtype, peer, stream)
                nccl.groupEnd()

            return alltoall
        if op == "sendrecv":
            after, before = (rank + 1) % world, (rank - 1) % world

            def sendrecv() -> None:
                nccl.groupStart()
                comm.send(s, count, dtype, after, stream)
                comm.recv(r, count, dtype, before, stream)
                nccl.groupEnd()

            return sendrecv
        raise ValueError(op)


def init_method(ranks: Mapping[str, str]) -> str:
    """torch.distributed's rendezvous URL from MASTER_ADDR and MASTER_PORT (passed in,
    not read from os.environ: hpnet's library code never changes the environment).

    >>> init_method({"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"})
    'tcp://10.0.0.1:29500'
    >>> init_method({"MASTER_ADDR": "fd00::1", "MASTER_PORT": "29500"})
    'tcp://[fd00::1]:29500'
    """
    host = ranks["MASTER_ADDR"]
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"tcp://{host}:{ranks.get('MASTER_PORT', '29500')}"


def _has_cupy_nccl() -> bool:
    try:
        from cupy.cuda import nccl  # noqa: F401, PLC0415
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return False
    return True


def _torch_dtype(torch: Any, name: str) -> Any:
    return {
        "int8": torch.int8,
        "uint8": torch.uint8,
        "int32": torch.int32,
        "int64": torch.int64,
        "half": torch.float16,
        "float": torch.float32,
        "double": torch.float64,
        "bfloat16": torch.bfloat16,
    }[name]


def _nccl_dtype(nccl: Any, name: str) -> Any:
    return {
        "int8": nccl.NCCL_INT8,
        "uint8": nccl.NCCL_UINT8,
        "int32": nccl.NCCL_INT32,
        "int64": nccl.NCCL_INT64,
        "half": nccl.NCCL_FLOAT16,
        "float": nccl.NCCL_FLOAT32,
        "double": nccl.NCCL_FLOAT64,
        "bfloat16": getattr(nccl, "NCCL_BFLOAT16", None),
    }[name]


def _torch_redop(dist: Any, name: str) -> Any:
    return {
        "sum": dist.ReduceOp.SUM,
        "prod": dist.ReduceOp.PRODUCT,
        "max": dist.ReduceOp.MAX,
        "min": dist.ReduceOp.MIN,
        "avg": dist.ReduceOp.AVG,
    }[name]


def _nccl_redop(nccl: Any, name: str) -> Any:
    return {
        "sum": nccl.NCCL_SUM,
        "prod": nccl.NCCL_PROD,
        "max": nccl.NCCL_MAX,
        "min": nccl.NCCL_MIN,
        "avg": getattr(nccl, "NCCL_AVG", 4),  # ncclAvg = 4 (nccl.h)
    }[name]


# ---------------------------------------------------------------- the check


def _values(ctx: _Ctx, rank: int, offset: int, count: int) -> Tensor:
    """Rank ``rank``'s input at elements [offset, offset + count): small integers that
    differ per rank and per element, exact in every dtype (bf16 included), whose
    reductions over up to 32 ranks stay exact."""
    torch = ctx.torch
    index = torch.arange(offset, offset + count, device=ctx.device, dtype=torch.int64)
    # prod: 1s and 2s, so that the product of 32 ranks stays exact in float
    values = 1 + (index + rank) % 2 if ctx.redop == "prod" else 1 + (index * 7 + rank * 3) % 4
    return values.to(ctx.dtype)


def _reduce(ctx: _Ctx, offset: int, count: int) -> Tensor:
    torch = ctx.torch
    parts = [_values(ctx, r, offset, count).to(torch.float64) for r in range(ctx.world)]
    stacked = torch.stack(parts)
    if ctx.redop == "sum":
        out = stacked.sum(0)
    elif ctx.redop == "prod":
        out = stacked.prod(0)
    elif ctx.redop == "max":
        out = stacked.max(0).values
    elif ctx.redop == "min":
        out = stacked.min(0).values
    else:
        out = stacked.sum(0) / ctx.world
    return out


def _check(
    ctx: _Ctx, op: str, geometry: OpShape, *, send: Tensor, recv: Tensor, placement: str
) -> int:
    """Run the op once on known data; count the wrong elements on this rank."""
    torch = ctx.torch
    rank, world, count = ctx.rank, ctx.world, geometry.count
    source = recv if placement == "in" else send
    recv.fill_(-1)
    if op in ("all_reduce", "broadcast", "reduce", "sendrecv"):
        source[:count] = _values(ctx, rank, 0, count)
    elif op == "all_gather":
        target = recv[rank * count : (rank + 1) * count] if placement == "in" else send[:count]
        target.copy_(_values(ctx, rank, 0, count))
    else:  # reduce_scatter, alltoall: count elements per peer
        source[: count * world] = _values(ctx, rank, 0, count * world)
    launch = ctx.launcher(op, geometry, send, recv, placement)
    # the data above was written on torch's current stream, the direct NCCL backend
    # launches on its own: without this the collective races the writes (wrong
    # elements from 128 MiB up on H200, found on the device)
    ctx.sync()
    ctx.barrier()
    launch()
    ctx.sync()
    if op == "all_reduce":
        got, expected = recv[:count], _reduce(ctx, 0, count)
    elif op == "broadcast":
        got, expected = recv[:count], _values(ctx, ctx.root, 0, count)
    elif op == "reduce":
        if rank != ctx.root:
            return 0
        got, expected = recv[:count], _reduce(ctx, 0, count)
    elif op == "sendrecv":
        got, expected = recv[:count], _values(ctx, (rank - 1) % world, 0, count)
    elif op == "all_gather":
        got = recv[: count * world]
        expected = torch.cat([_values(ctx, r, 0, count) for r in range(world)])
    elif op == "reduce_scatter":
        got = recv[rank * count : (rank + 1) * count] if placement == "in" else recv[:count]
        expected = _reduce(ctx, rank * count, count)
    else:  # alltoall: block q of my result is block `rank` of rank q's input
        got = recv[: count * world]
        expected = torch.cat([_values(ctx, q, rank * count, count) for q in range(world)])
    got, expected = got.to(torch.float64), expected.to(torch.float64)
    if ctx.redop == "avg" and op in ("all_reduce", "reduce", "reduce_scatter"):
        if not ctx.dtype.is_floating_point:  # integer avg: the sum divided, truncated
            expected = torch.trunc(expected)
        else:
            # sum / world is not exact in floating point (1/3), and NCCL's avg multiplies
            # each input by 1/world before summing: allow each of the world additions
            # its rounding. A wrong or unwritten element (-1) is off by far more.
            eps = torch.finfo(ctx.dtype).eps
            tolerance = (world + 1) * eps * expected.abs().clamp(min=1)
            return int(((got - expected).abs() > tolerance).sum().item())
    return int((got != expected).sum().item())


# ---------------------------------------------------------------- timing


def _time(ctx: _Ctx, launch: Callable[[], None], iters: int, graphs: int) -> float:
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


def _per_iteration(ctx: _Ctx, launch: Callable[[], None], iters: int) -> list[float]:
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
    after: Callable[[_Ctx], object] | None = None,
) -> dict[str, Any] | None:
    """The sweep on this rank; rank 0 returns the results, others None. Rank 0 hands
    ``checkpoint`` the results so far after every row, so a crash loses no row.
    ``after`` runs on every rank once the sweep is done, with the ranks' groups still
    up (``hpnet check --all`` measures and gathers there); rank 0's value comes back
    as the result's ``"after"``."""
    ctx = _Ctx(spec, ranks)
    torch = ctx.torch
    hosts = ctx.gather_text(os.uname().nodename)  # every rank takes part
    meta = _metadata(ctx, hosts) if ctx.rank == 0 else None
    typesize = DTYPES[spec["dtype"]]
    sizes = spec["sizes"]
    runs: list[dict[str, Any]] = []
    total = len(spec["ops"]) * len(sizes)
    done = 0
    for op in spec["ops"]:
        biggest = shape(op, max(sizes), ctx.world, typesize)
        length = max(biggest.send_count, biggest.recv_count, 1)
        send = torch.empty(length, dtype=ctx.dtype, device=ctx.device)
        recv = torch.empty(length, dtype=ctx.dtype, device=ctx.device)
        send.copy_(_values(ctx, ctx.rank, 0, length))
        recv.copy_(_values(ctx, ctx.rank, 0, length))
        ctx.sync()  # written on torch's stream; NCCL (direct) reads them on its own
        rows: list[dict[str, Any]] = []
        runs.append({"op": op, "nranks": ctx.world, "rows": rows})
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
                iterations = (
                    _per_iteration(ctx, launch, spec["iters"]) if spec["per_iteration"] else []
                )
                # in-place alltoall / sendrecv overwrite their own input: nccl-tests
                # times them and prints N/A for the check (src/alltoall.cu reportErrors)
                checkable = spec["check"] and not (
                    placement == "in" and op in ("alltoall", "sendrecv")
                )
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
            done += 1
            if ctx.rank == 0:
                rows.append(row)
                if checkpoint is not None:
                    checkpoint({"runs": runs, "metadata": meta, "complete": False})
                # standard error: under a launcher, standard output is the user's table
                print(
                    f"{PROGRESS} {done}/{total} {op} {geometry.size_bytes} B",
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


def _metadata(ctx: _Ctx, hosts: list[str]) -> dict[str, Any]:
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
    """Replace ``path`` atomically: a reader never sees half a file."""
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump(data, handle)
    os.replace(partial, path)


def main(argv: list[str]) -> int:
    with open(argv[1]) as handle:
        spec = json.load(handle)
    result = run(spec, os.environ, checkpoint=lambda data: write_json(argv[2], data))
    if result is not None:
        write_json(argv[2], result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
