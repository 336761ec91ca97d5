"""``hpnet bench``'s flags read into values: the ops, the size sweep, the spec, the gates.

Pure of side effects: :func:`parse_ops` names the collectives (aliases, ``all``, "did you
mean"), :func:`sweep_sizes` the sizes, :func:`bench_spec` the
:class:`~hpnet.bench.model.BenchSpec` a run executes, :func:`expectations_of` the
bandwidth gates of ``--min-busbw`` and ``--profile``. :mod:`hpnet.cli.bench` runs them.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from hpnet.errors import UsageError

if TYPE_CHECKING:
    from hpnet.bench.model import BenchSpec
    from hpnet.result import Expectation

__all__ = [
    "ALIASES",
    "DEFAULT_FACTOR",
    "DEFAULT_SWEEP",
    "DTYPE_ALIASES",
    "bench_spec",
    "expectations_of",
    "parse_ops",
    "sweep_sizes",
]

#: what each op is called elsewhere (nccl-tests binaries, torch, NCCL's API)
ALIASES = {
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "all_to_all": "alltoall",
    "a2a": "alltoall",
    "bcast": "broadcast",
    "send_recv": "sendrecv",
    "p2p": "sendrecv",
}
#: torch's and numpy's names for nccl-tests' -d types
DTYPE_ALIASES = {
    "fp32": "float",
    "float32": "float",
    "fp16": "half",
    "float16": "half",
    "bf16": "bfloat16",
    "fp64": "double",
    "float64": "double",
}
#: sweep defaults where nccl-tests' own (-b 32M -e 32M) says little: from 8 B to a size
#: that fills the bus on GPUs, and that a 2-core CI machine sweeps in seconds on gloo
#: the default sweep's first and last size: 8 B by 2 (GPUs) or by 4 (CPUs), so the CPU
#: sweep ends at 2 MiB (8 x 4^9), as --help says
DEFAULT_SWEEP = {"cuda": (8, 256 << 20), "cpu": (8, 2 << 20)}
DEFAULT_FACTOR = {"cuda": 2, "cpu": 4}


def parse_ops(names: list[str]) -> tuple[str, ...]:
    from hpnet.bench.formulas import OPS  # noqa: PLC0415

    chosen: list[str] = []
    for raw in names or ["all_reduce"]:
        name = raw.lower().replace("-", "_").removesuffix("_perf")
        if name == "all":
            chosen += [op for op in OPS if op not in chosen]
            continue
        name = ALIASES.get(name, name)
        if name not in OPS:
            import difflib  # noqa: PLC0415

            close = difflib.get_close_matches(name, OPS, n=1)
            raise UsageError(
                f"unknown collective {raw!r}",
                code="unknown-op",
                where="hpnet bench",
                fix=(f"did you mean {close[0]}? " if close else "")
                + "ops: "
                + ", ".join(OPS)
                + ", all",
            )
        if name not in chosen:
            chosen.append(name)
    return tuple(chosen)


def _size(flag: str, text: str | None) -> int | None:
    from hpnet.bench.formulas import parse_size  # noqa: PLC0415

    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise UsageError(
            str(exc), code="bad-size", where=f"{flag} {text}", fix=f"{flag} 64M"
        ) from None


def sweep_sizes(ns: argparse.Namespace, device: str) -> tuple[int, ...]:
    from hpnet.bench.formulas import size_sweep  # noqa: PLC0415

    low, high = _size("-b", ns.minbytes), _size("-e", ns.maxbytes)
    step = _size("-i", ns.stepbytes)
    default_low, default_high = DEFAULT_SWEEP[device]
    if low is None:
        low = default_low if high is None else min(default_low, high)
    if high is None:
        high = max(low, default_high)
    if ns.stepfactor is not None and step is not None:
        raise UsageError(
            "-f and -i both given",
            code="usage",
            where="hpnet bench",
            fix="step by a factor (-f) or by bytes (-i)",
        )
    if ns.stepfactor is not None and ns.stepfactor < 1:
        raise UsageError("must be 1 or more", code="usage", where=f"-f {ns.stepfactor}", fix="-f 2")
    factor = ns.stepfactor if ns.stepfactor is not None else DEFAULT_FACTOR[device]
    try:
        sizes = size_sweep(low, high, factor=None if step else factor, step=step)
    except ValueError as exc:
        raise UsageError(
            str(exc), code="bad-size", where=f"-b {low} -e {high}", fix="-b 8 -e 64M"
        ) from None
    if len(sizes) > 200:
        raise UsageError(
            f"{len(sizes)} sizes",
            code="usage",
            where=f"-i {ns.stepbytes}",
            fix="use -f, or a larger -i",
        )
    return tuple(sizes)


def bench_spec(ns: argparse.Namespace, device: str) -> BenchSpec:
    from hpnet.bench.formulas import DTYPES, REDOPS  # noqa: PLC0415
    from hpnet.bench.model import BenchSpec  # noqa: PLC0415

    dtype = DTYPE_ALIASES.get(ns.datatype, ns.datatype)
    if dtype not in DTYPES or dtype in ("uint32", "uint64"):
        raise UsageError(
            f"unknown or unsupported data type {ns.datatype!r}",
            code="bad-dtype",
            where=f"-d {ns.datatype}",
            fix="one of: int8 uint8 int32 int64 half float double bfloat16",
        )
    if ns.op not in REDOPS:
        raise UsageError(
            f"unknown reduction {ns.op!r}",
            code="bad-redop",
            where=f"-o {ns.op}",
            fix="one of: " + " ".join(REDOPS),
        )
    if ns.op == "avg" and dtype.startswith(("int", "uint")) and device == "cpu":
        # gloo divides in place and cannot write the float quotient into an int tensor
        raise UsageError(
            "gloo's avg does not take integer types",
            code="bad-redop",
            where=f"-o avg -d {ns.datatype}",
            fix="use a floating type (-d float) or another reduction on CPU ranks",
        )
    for flag, value, least in (
        ("-n", ns.iters, 1),
        ("-w", ns.warmup_iters, 0),
        ("-G", ns.cudagraph, 0),
    ):
        if value < least:
            raise UsageError(
                f"must be {least} or more",
                code="usage",
                where=f"{flag} {value}",
                fix=f"{flag} {max(least, 1)}",
            )
    if ns.cudagraph and device == "cpu":
        raise UsageError(
            "CUDA graphs need GPUs",
            code="usage",
            where=f"-G {ns.cudagraph}",
            fix="drop -G on CPU ranks",
        )
    return BenchSpec(
        ops=parse_ops(ns.ops),
        sizes=sweep_sizes(ns, device),
        iters=ns.iters,
        warmup=ns.warmup_iters,
        check=bool(ns.check),
        redop=ns.op,
        dtype=dtype,
        root=ns.root,
        graph_launches=ns.cudagraph,
        backend=ns.backend,
        device=device,
    )


def expectations_of(ns: argparse.Namespace) -> list[Expectation]:
    from hpnet.bench.gate import from_profile  # noqa: PLC0415
    from hpnet.result import Expectation  # noqa: PLC0415

    found = []
    if ns.min_busbw is not None:
        if ns.min_busbw <= 0:
            raise UsageError(
                "must be above 0",
                code="usage",
                where=f"--min-busbw {ns.min_busbw}",
                fix="--min-busbw 300",
            )
        found.append(Expectation(busbw_gbps=ns.min_busbw, source=f"--min-busbw {ns.min_busbw:g}"))
    if ns.profile is not None:
        if not 0 <= ns.tolerance < 100:
            raise UsageError(
                "must be 0 to 99",
                code="usage",
                where=f"--tolerance {ns.tolerance}",
                fix="--tolerance 10",
            )
        found.append(from_profile(ns.profile, tolerance=ns.tolerance / 100))
    return found
