"""How one bench rank talks to the others: the backends of ``hpnet bench``.

:class:`RankContext` is a rank's view, made in the rank's process: torch, the device,
the process groups, a gloo control plane (barriers, gathers of results) and, per
backend, a closure that launches one collective on given buffers:

* ``nccl``: NCCL itself through CuPy's bindings (``cupy.cuda.nccl``) on torch tensors
  and streams: one Python call per collective, so small-message latency is NCCL's.
* ``torch-nccl``: ``torch.distributed`` with its NCCL backend.
* ``gloo``: ``torch.distributed`` with gloo on CPU tensors (what runs in CI).

torch and CuPy are imported when a context is made, never at import time; the timing
loop and the sweep are :mod:`hpnet.bench.worker`'s.
"""

from __future__ import annotations

import datetime
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from hpnet.bench.formulas import OpShape

__all__ = ["RankContext", "Tensor", "init_method"]

Tensor = Any  # torch.Tensor; torch is imported only when a rank runs


class RankContext:
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
        try:
            self._join(spec, backend, ranks)
        except Exception as exc:
            _raise_if_port_taken(exc, ranks)
            raise

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

    def _join(self, spec: dict[str, Any], backend: str, ranks: Mapping[str, str]) -> None:
        """Meet the other ranks at MASTER_ADDR:MASTER_PORT."""
        dist, where = self.dist, init_method(ranks)
        if backend == "torch-nccl":
            dist.init_process_group(
                "nccl", init_method=where, rank=self.rank, world_size=self.world,
                device_id=self.device,
            )  # fmt: skip
            self.control = dist.new_group(backend="gloo")
        else:
            # spec["timeout_s"]: how long ranks wait for each other (torch's default: 30
            # minutes), for jobs that must not wait that long for a rank that never came
            timeout = spec.get("timeout_s")
            extra = {"timeout": datetime.timedelta(seconds=timeout)} if timeout else {}
            dist.init_process_group(
                "gloo", init_method=where, rank=self.rank, world_size=self.world, **extra
            )
            self.control = None

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


def _raise_if_port_taken(exc: Exception, ranks: Mapping[str, str]) -> None:
    """Rank 0 could not listen on MASTER_PORT (torch's TCPStore: ``... name: EADDRINUSE,
    message: address already in use``): an error that names the port and the fix, not
    torch's traceback."""
    from hpnet.errors import HpnetError  # noqa: PLC0415
    from hpnet.launch.rendezvous import port_taken  # noqa: PLC0415

    port = ranks.get("MASTER_PORT", "29500")
    if port.isdigit() and port_taken(str(exc), int(port)):
        raise HpnetError(
            f"the rendezvous port {port} (MASTER_PORT) is taken: another process listens "
            "on it, so rank 0 could not start the rendezvous (EADDRINUSE)",
            code="port-taken",
            where=f"MASTER_PORT={port}",
            fix="start the job with another port (hpnet launch --master-port, torchrun "
            "--master-port, or MASTER_PORT), or end what listens there (ss -ltnp "
            f"'sport = :{port}')",
        ) from None


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
