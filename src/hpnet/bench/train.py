"""``hpnet bench train``: end-to-end data-parallel training throughput.

What the ECS eRDMA guide measures with its ``benchmark.py`` (seed 002, "e2e性能测试":
``16 GPUs -- 2M/8G: p50: 0.098s 1306/s p75: 0.098s 1304/s p90: 0.098s 1302/s p95:
0.098s 1302/s``): the time of each training step and the samples per second it gives,
at the 50th, 75th, 90th and 95th percentile of step time. The model is a synthetic
GPT-style transformer (sizes on the command line, random tokens made on the device,
nothing downloaded) trained with torch's DistributedDataParallel over NCCL on GPUs or
gloo on CPUs.

The share of the step spent in communication is measured, not estimated: the same
steps run again under ``no_sync()`` (no gradient all-reduce); the difference of the
median step times is the communication the backward pass did not hide.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hpnet.bench.formulas import percentile

__all__ = [
    "PERCENTILES",
    "TrainReport",
    "TrainSpec",
    "defaults",
    "guide_line",
    "summarise",
    "validate",
]

SCHEMA_VERSION = 1
PERCENTILES = (50, 75, 90, 95)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TrainSpec:
    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    batch: int  # sequences per rank per step
    steps: int
    warmup: int
    device: str  # cuda or cpu
    dtype: str = "bfloat16"  # autocast on GPUs; CPUs run float32
    #: steps again without the gradient all-reduce (DDP no_sync) for the comm share
    measure_comm: bool = True

    def parameters(self) -> int:
        """Weights of the model the worker builds (embedding tied to the output).

        >>> TrainSpec(layers=12, hidden=768, heads=12, seq_len=1024, vocab=50304, batch=8,
        ...           steps=1, warmup=1, device="cuda").parameters()
        124475904
        """
        h = self.hidden
        per_layer = 12 * h * h + 13 * h  # attention 4h^2+4h, MLP 8h^2+5h, two LayerNorms 4h
        return self.vocab * h + self.seq_len * h + self.layers * per_layer + 2 * h


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StepStats:
    percentile: int
    step_seconds: float
    samples_per_second: float


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TrainReport:
    spec: TrainSpec
    nranks: int
    global_batch: int
    parameters: int  # counted on the model the ranks trained
    stats: tuple[StepStats, ...]  # p50 p75 p90 p95
    step_seconds: tuple[float, ...]  # each timed step, the slowest rank's
    tokens_per_second: float  # at the median step
    #: median step without the gradient all-reduce; None when not measured
    no_sync_step_seconds: float | None
    comm_share: float | None  # (median - no_sync median) / median, at least 0
    replicas_in_sync: bool | None  # every rank's weights equal after the synced steps
    first_loss: float
    last_loss: float
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def summarise(spec: TrainSpec, data: Mapping[str, Any], metadata: Mapping[str, Any]) -> TrainReport:
    """The report from the worker's raw numbers (rank 0's result file).

    ``data["steps"]``: per timed step, each rank's seconds; the step's time is the
    slowest rank's (everyone waits for it at the next all-reduce).
    """
    nranks = int(data["nranks"])
    per_step = [max(ranks) for ranks in data["steps"]]
    if not per_step:
        raise ValueError("no timed step")
    global_batch = spec.batch * nranks
    stats = tuple(
        StepStats(
            percentile=p,
            step_seconds=(t := percentile(per_step, p / 100)),
            samples_per_second=global_batch / t if t > 0 else 0.0,
        )
        for p in PERCENTILES
    )
    median = stats[0].step_seconds
    no_sync = None
    share = None
    if data.get("no_sync_steps"):
        no_sync = percentile([max(r) for r in data["no_sync_steps"]], 0.5)
        share = max(0.0, (median - no_sync) / median) if median > 0 else None
    return TrainReport(
        spec=spec,
        nranks=nranks,
        global_batch=global_batch,
        parameters=int(data.get("parameters", spec.parameters())),
        stats=stats,
        step_seconds=tuple(per_step),
        tokens_per_second=global_batch * spec.seq_len / median if median > 0 else 0.0,
        no_sync_step_seconds=no_sync,
        comm_share=share,
        replicas_in_sync=data.get("replicas_in_sync"),
        first_loss=float(data["first_loss"]),
        last_loss=float(data["last_loss"]),
        metadata=metadata,
    )


def guide_line(report: TrainReport, hosts: int, per_host: int) -> str:
    """The ECS guide's summary line, to put beside its figure (8 sequences per GPU
    at 0.098 s per step on 16 GPUs are the guide's 1306 samples/s).

    >>> spec = TrainSpec(layers=1, hidden=8, heads=1, seq_len=8, vocab=8, batch=8,
    ...                  steps=4, warmup=1, device="cuda")
    >>> r = summarise(spec, {"nranks": 16, "steps": [[0.098]] * 4, "first_loss": 1,
    ...                      "last_loss": 1}, {})
    >>> guide_line(r, 2, 8)
    '16 GPUs -- 2M/8G: p50: 0.098s 1306/s p75: 0.098s 1306/s p90: 0.098s 1306/s p95: 0.098s 1306/s'
    """
    unit = "GPUs" if report.spec.device == "cuda" else "ranks"
    parts = [f"{report.nranks} {unit} -- {hosts}M/{per_host}G:"]
    for s in report.stats:
        parts.append(f"p{s.percentile}: {s.step_seconds:.3f}s {s.samples_per_second:.0f}/s")
    return " ".join(parts)


def defaults(device: str) -> dict[str, int]:
    """Model and run sizes: a GPT-2-small-like model on GPUs; one a 2-core CPU trains
    in seconds (what CI runs)."""
    if device == "cuda":
        return {"layers": 12, "hidden": 768, "heads": 12, "seq_len": 1024, "vocab": 50304,
                "batch": 8, "steps": 30, "warmup": 5}  # fmt: skip
    return {"layers": 2, "hidden": 64, "heads": 4, "seq_len": 64, "vocab": 512,
            "batch": 4, "steps": 12, "warmup": 2}  # fmt: skip


def validate(values: Mapping[str, int], device: str) -> list[str]:
    """What is wrong with a spec's sizes, as ``--flag value: reason`` lines."""
    problems = []
    for name in ("layers", "hidden", "heads", "seq_len", "vocab", "batch", "steps"):
        if values[name] < 1:
            problems.append(f"--{name.replace('_', '-')} {values[name]}: must be 1 or more")
    if values["warmup"] < 0:
        problems.append(f"--warmup {values['warmup']}: must be 0 or more")
    if values["heads"] >= 1 and values["hidden"] % values["heads"]:
        problems.append(
            f"--hidden {values['hidden']}: must be a multiple of --heads {values['heads']}"
        )
    return problems
