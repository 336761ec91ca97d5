"""``hpnet bench train``: end-to-end data-parallel training throughput."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

DESCRIPTION = """\
Train a synthetic GPT-style transformer with DistributedDataParallel (NCCL on GPUs,
gloo on CPUs; random tokens, nothing downloaded) and report the step time and
samples/s at p50 / p75 / p90 / p95, as the ECS eRDMA guide's benchmark does, plus the
share of the step the gradient all-reduce adds (measured: the same steps without it).

  hpnet bench train                              one rank per GPU, GPT-2-small size
  hpnet bench train --layers 24 --hidden 1024    a bigger model
  hpnet bench train --nproc 2 --device cpu       2 gloo ranks: a small model on CPUs
  torchrun --nnodes 2 ... -m hpnet bench train   one rank of a multi-node job

--json: docs/bench-schema.md ("hpnet bench train"). Exit 1 if a rank failed or the
replicas' weights differ after synchronised steps.
"""

SIZES = ("layers", "hidden", "heads", "seq_len", "vocab", "batch", "steps", "warmup")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    model = parser.add_argument_group("model and run (defaults: GPT-2 small on GPUs, tiny on CPUs)")
    for name in SIZES:
        model.add_argument(f"--{name.replace('_', '-')}", type=int, metavar="N", dest=name)
    model.add_argument(
        "--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16",
        help="autocast type on GPUs (CPUs train in float32)",
    )  # fmt: skip
    model.add_argument(
        "--no-comm-share", action="store_true", help="skip the steps without all-reduce"
    )
    ranks = parser.add_argument_group("ranks")
    ranks.add_argument(
        "--nproc", type=int, metavar="N", help="local ranks (default: one per GPU, or 2)"
    )
    ranks.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ranks.add_argument(
        "--fake-hosts", type=int, default=1, metavar="K", help="K NCCL hosts (NCCL_HOSTID)"
    )
    ranks.add_argument("--logs", metavar="DIR", help="keep the per-rank logs in DIR")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(ns: argparse.Namespace) -> int:
    import dataclasses  # noqa: PLC0415

    from hpnet.bench import run as bench  # noqa: PLC0415
    from hpnet.bench.train import TrainSpec, defaults, summarise, validate  # noqa: PLC0415
    from hpnet.cli.bench import _check_torch  # noqa: PLC0415
    from hpnet.errors import HpnetError, UsageError  # noqa: PLC0415

    _check_torch()
    ranks = bench.launcher_ranks(os.environ)
    if ranks is None:
        nproc, device = bench.local_defaults(ns.nproc, ns.device)
    else:
        nproc, device = int(ranks["WORLD_SIZE"]), ("cpu" if ns.device == "cpu" else "cuda")
        if ns.device == "auto":
            _, device = bench.local_defaults(1, "auto")
    values = {
        **defaults(device),
        **{k: getattr(ns, k) for k in SIZES if getattr(ns, k) is not None},
    }
    problems = validate(values, device)
    if problems:
        raise UsageError(
            "; ".join(problems),
            code="usage",
            where="hpnet bench train",
            fix="see hpnet bench train --help",
        )
    spec = TrainSpec(**values, device=device, dtype=ns.dtype, measure_comm=not ns.no_comm_share)
    meta: dict[str, Any] = bench.metadata(getattr(ns, "command_line", ()), os.environ)
    if ranks is not None:
        if ns.nproc is not None or ns.fake_hosts != 1:
            raise UsageError(
                f"running as rank {ranks['RANK']} under a launcher",
                code="usage",
                where="--nproc / --fake-hosts",
                fix="the launcher decides the ranks: drop --nproc and --fake-hosts",
            )
        from hpnet.bench import train_worker  # noqa: PLC0415

        data = train_worker.run(dataclasses.asdict(spec), ranks)
        if data is None:
            return 0
    else:

        def plan(port: int) -> bench.BenchPlan:
            return bench.plan_local(
                spec, nproc=nproc, device=device, port=port, python=sys.executable,
                fake_hosts=ns.fake_hosts, worker="hpnet.bench.train_worker",
            )  # fmt: skip

        plan(0)  # refuse a bad --nproc / --fake-hosts before any rank starts
        environ = dict(os.environ)
        if device == "cpu":
            environ.setdefault("CUDA_VISIBLE_DEVICES", "")
        outcome = bench.execute_with_port(plan, environ=environ, keep_dir=ns.logs)
        if outcome.data is None or outcome.failure:
            raise HpnetError(
                outcome.failure or "no result",
                code="bench-failed",
                where=os.path.join(outcome.directory, "rank0.log"),
                fix="read the rank logs in " + outcome.directory,
            )
        data = outcome.data
        meta["fake_hosts"] = ns.fake_hosts
    report = summarise(spec, data, {**(data.get("metadata") or {}), **meta})
    if ns.json:
        from hpnet.bench.train import SCHEMA_VERSION  # noqa: PLC0415
        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        print(dumps(envelope(report, schema_version=SCHEMA_VERSION)))
    else:
        from hpnet.render.bench import render_train  # noqa: PLC0415

        print(render_train(report), end="")
    return 1 if report.replicas_in_sync is False else 0
