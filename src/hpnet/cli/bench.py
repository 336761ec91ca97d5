"""``hpnet bench``: collective benchmarks with nccl-tests' semantics."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import TYPE_CHECKING, Any

from hpnet.cli.bench_args import bench_spec, expectations_of
from hpnet.cli.bench_output import (
    check_output,
    emit,
    remove_file,
    result_json,
    title_of,
    verdict_of,
    write_result,
)
from hpnet.errors import UsageError

#: check_output: also ``hpnet check --report``'s (hpnet.cli.check imports it from here)
__all__ = ["DESCRIPTION", "SUBCOMMANDS", "add_arguments", "check_output", "run"]

if TYPE_CHECKING:
    from hpnet.bench.gate import GateResult
    from hpnet.bench.model import BenchReport, BenchSpec
    from hpnet.result import Expectation

DESCRIPTION = """\
Measure collectives the way nccl-tests does (the same size sweep, bus-bandwidth
factors, correctness check, in-place and out-of-place, CUDA graphs), on this node's
GPUs (one rank per GPU), on N CPU ranks with gloo, or as one rank of a job that
torchrun, mpirun, srun or `hpnet launch` started.

  hpnet bench                                all_reduce, 8 B to 256 MiB (GPUs) / 2 MiB (CPUs)
  hpnet bench all -b 8 -e 1G -f 2            every op, nccl-tests' flags
  hpnet bench all_reduce -G 10               CUDA-graph mode (10 graph launches)
  hpnet bench --nproc 4 --device cpu         4 gloo ranks on the CPU
  hpnet bench --fake-hosts 2                 split the GPUs into 2 NCCL hosts: NCCL's
                                             network transport between them
  hpnet bench --min-busbw 300 -e 1G          exit 1 below 300 GB/s at the largest size
  hpnet bench --save run.json --plot run.svg keep the result and a figure

  hpnet bench import FILE                    read nccl-tests output (any version)
  hpnet bench compare A B                    B against A (hpnet JSON or nccl-tests text)
  hpnet bench plot A B ... -o FIG.svg        busbw vs size, several results in one figure
  hpnet bench train                          end-to-end data-parallel training throughput

Exit 0: measured, every check right, every expectation met; 1: wrong results, an
expectation failed, or a rank failed (the rows measured before are printed);
2: bad usage, a CPU sweep its ranks cannot fit in the memory available (about 3x the
largest size and 0.3 GiB per rank), a rank the out-of-memory killer ended before any
row, or --save / --plot could not be written (the result is printed);
130 / 143: Ctrl-C / SIGTERM (the rows measured before are printed and saved, marked
incomplete). --json: docs/bench-schema.md.
"""

SUBCOMMANDS = {
    "import": "hpnet.cli.bench_import",
    "compare": "hpnet.cli.bench_compare",
    "plot": "hpnet.cli.bench_plot",
    "train": "hpnet.cli.bench_train",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ops",
        nargs="*",
        metavar="OP",
        help="all_reduce (default), all_gather, reduce_scatter, broadcast, reduce, alltoall, "
        "sendrecv, or all",
    )
    nccl = parser.add_argument_group("nccl-tests' flags")
    nccl.add_argument("-b", "--minbytes", metavar="SIZE", help="smallest size (8, 1K, 32M, 1G)")
    nccl.add_argument("-e", "--maxbytes", metavar="SIZE", help="largest size")
    nccl.add_argument("-f", "--stepfactor", type=int, metavar="F", help="multiply the size by F")
    nccl.add_argument("-i", "--stepbytes", metavar="SIZE", help="add SIZE bytes instead")
    nccl.add_argument("-n", "--iters", type=int, default=20, metavar="N", help="timed iterations")
    nccl.add_argument(
        "-w", "--warmup_iters", type=int, default=1, metavar="N", help="warm-up iterations"
    )
    nccl.add_argument(
        "-c", "--check", type=int, default=1, choices=(0, 1), help="check results (default 1)"
    )
    nccl.add_argument("-o", "--op", default="sum", metavar="REDOP", help="sum prod max min avg")
    nccl.add_argument("-d", "--datatype", default="float", metavar="TYPE", help="float, half, ...")
    nccl.add_argument(
        "-r", "--root", type=int, default=0, metavar="R", help="broadcast/reduce root"
    )
    nccl.add_argument(
        "-G", "--cudagraph", type=int, default=0, metavar="G", help="CUDA-graph launches"
    )
    ranks = parser.add_argument_group("ranks")
    ranks.add_argument(
        "--nproc", type=int, metavar="N", help="local ranks (default: one per GPU, or 2)"
    )
    ranks.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ranks.add_argument(
        "--backend",
        choices=("auto", "nccl", "torch-nccl", "gloo"),
        default="auto",
        help="nccl: NCCL through CuPy (the lowest overhead); torch-nccl: torch.distributed; "
        "gloo: CPU tensors (auto: nccl if CuPy is there, else torch-nccl, gloo on CPUs)",
    )
    ranks.add_argument(
        "--fake-hosts",
        type=int,
        default=1,
        metavar="K",
        help="split the local ranks into K NCCL hosts (NCCL_HOSTID)",
    )
    ranks.add_argument(
        "--logs",
        metavar="DIR",
        help="keep the per-rank logs in DIR (one run at a time: a DIR in use is refused)",
    )
    out = parser.add_argument_group("results")
    out.add_argument("--json", action="store_true", help="print JSON (docs/bench-schema.md)")
    out.add_argument(
        "--csv", action="store_true", help="print CSV, one line per size and placement"
    )
    out.add_argument("--save", metavar="FILE", help="also write the JSON result to FILE")
    out.add_argument(
        "--plot", metavar="FILE", help="busbw vs size: FILE.svg, or FILE.png (matplotlib)"
    )
    gate = parser.add_argument_group("expectations")
    gate.add_argument(
        "--min-busbw", type=float, metavar="GBPS", help="fail below GBPS at the largest size"
    )
    gate.add_argument(
        "--profile",
        metavar="NAME",
        help="fail below the profile's measured busbw (less --tolerance)",
    )
    gate.add_argument(
        "--tolerance",
        type=float,
        default=10.0,
        metavar="PCT",
        help="how far below the profile's figure still passes (default 10)",
    )


def _check_torch() -> None:
    import importlib.util  # noqa: PLC0415

    if importlib.util.find_spec("torch") is None:
        from hpnet.errors import MissingDependencyError  # noqa: PLC0415

        raise MissingDependencyError(
            "hpnet bench runs its ranks on torch, which is not installed",
            code="missing-torch",
            where=sys.executable,
            fix="pip install 'hpnet[bench]' (or pip install torch)",
        )


def run(ns: argparse.Namespace) -> int:
    from hpnet.bench import run as bench  # noqa: PLC0415

    if ns.json and ns.csv:
        raise UsageError(
            "--json and --csv both given", code="usage", where="hpnet bench", fix="pick one"
        )
    expectations = expectations_of(ns)
    # a result that cannot be kept is found out now, not after the sweep
    if ns.logs:
        check_output(ns.logs, flag="--logs", directory=True)
    if ns.save:
        check_output(ns.save, flag="--save")
    if ns.plot:
        from hpnet.bench.plot import check_plot_path  # noqa: PLC0415

        check_plot_path(ns.plot)
        check_output(ns.plot, flag="--plot")
    _check_torch()
    ranks = bench.launcher_ranks(os.environ)
    meta: dict[str, Any] = bench.metadata(getattr(ns, "command_line", ()), os.environ)
    if ranks is not None:
        if ns.nproc is not None or ns.fake_hosts != 1:
            raise UsageError(
                f"running as rank {ranks['RANK']} of {ranks['WORLD_SIZE']} under a launcher",
                code="usage",
                where="--nproc / --fake-hosts",
                fix="the launcher decides the ranks: drop --nproc and --fake-hosts",
            )
        device = "cpu" if ns.device == "cpu" else ("cuda" if ns.device == "cuda" else "auto")
        # the sweep of the device the ranks will run on: a CPU node under a launcher ran
        # the GPU sweep (26 sizes, 72 s for the CPU's 7, issue 26)
        swept = device
        if device == "auto":
            from hpnet.node.gpus import read_gpus_nvml, visible_gpu_count  # noqa: PLC0415
            from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

            seen = visible_gpu_count(read_gpus_nvml(FsRoot("/")).gpus, os.environ)
            swept = "cuda" if seen else "cpu"
        spec = bench_spec(ns, swept)
        spec = dataclasses.replace(spec, device=device)
        meta["spec"] = _spec_meta(spec)
        checkpoint = ns.save + ".partial.json" if ns.save else None
        report = bench.run_in_launcher(spec, ranks=ranks, metadata=meta, checkpoint_path=checkpoint)
        if report is None:  # not rank 0: rank 0 reports for the job
            return 0
        if checkpoint:
            remove_file(checkpoint)
    else:
        nproc, device = bench.local_defaults(ns.nproc, ns.device)
        spec = bench_spec(ns, device)
        if device == "cpu" and spec.backend in ("nccl", "torch-nccl"):
            raise UsageError(
                f"--backend {spec.backend} needs GPUs",
                code="usage",
                where="hpnet bench",
                fix="--backend gloo",
            )

        def plan(port: int) -> bench.BenchPlan:
            return bench.plan_local(
                spec, nproc=nproc, device=device, port=port, python=sys.executable,
                fake_hosts=ns.fake_hosts,
            )  # fmt: skip

        plan(0)  # refuse a bad --nproc / --fake-hosts before any rank starts
        # and a CPU sweep the machine's memory cannot hold (issue 23)
        bench.check_memory(spec, nproc=nproc, device=device)
        meta["spec"] = _spec_meta(spec)
        meta["fake_hosts"] = ns.fake_hosts

        def keep(partial: BenchReport) -> None:
            """Ctrl-C or SIGTERM: print and save the rows measured (the report says it
            is incomplete); the command then exits as interrupted."""
            _finish(ns, partial, expectations, raise_unsaved=False)

        report = bench.run_plan(
            plan,
            environ=_rank_environ(device),
            metadata=meta,
            keep_dir=ns.logs,
            on_interrupt=keep,
        )
    return _finish(ns, report, expectations)


def _rank_environ(device: str) -> dict[str, str]:
    """The ranks' environment: the caller's (NCCL_* included, untouched; its secrets
    are left out where the ranks start: hpnet.localrun.inheritable_env); CPU ranks
    are kept off the GPUs."""
    env = dict(os.environ)
    if device == "cpu":
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
    return env


def _spec_meta(spec: BenchSpec) -> dict[str, Any]:
    data = dataclasses.asdict(spec)
    data.pop("sizes")
    data["min_bytes"], data["max_bytes"] = min(spec.sizes), max(spec.sizes)
    data["num_sizes"] = len(spec.sizes)
    return data


def _finish(
    ns: argparse.Namespace,
    report: BenchReport,
    expectations: list[Expectation],
    *,
    raise_unsaved: bool = True,
) -> int:
    """Save, plot and print the report. A file that cannot be written loses nothing:
    the result is printed all the same, then each file that could not be written is
    named (on standard error) and the first such error is raised (exit 2); with
    ``raise_unsaved`` False (an interrupted run, which exits as interrupted) they are
    only named."""
    from hpnet.bench.gate import evaluate  # noqa: PLC0415
    from hpnet.errors import HpnetError  # noqa: PLC0415

    gates: list[GateResult] = [g for e in expectations for g in evaluate(report, e)]
    status, _ = verdict_of(report, gates)
    unsaved: list[HpnetError] = []
    if ns.save:
        try:
            write_result(ns.save, result_json(report, gates))
        except HpnetError as exc:
            unsaved.append(exc)
    if ns.plot:
        from hpnet.bench.plot import series_of, write_plot  # noqa: PLC0415

        try:
            write_plot(ns.plot, series_of(report, "hpnet"), title=title_of(report))
        except HpnetError as exc:
            unsaved.append(exc)
    emit(report, json=ns.json, csv=ns.csv, gates=gates)
    if unsaved:
        sys.stdout.flush()
        for error in unsaved[1:] if raise_unsaved else unsaved:
            print(error.render(), file=sys.stderr)
        if raise_unsaved:
            raise unsaved[0]
    return 0 if status == "PASS" else 1
