"""``hpnet bench``: collective benchmarks with nccl-tests' semantics."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hpnet.errors import UsageError

if TYPE_CHECKING:
    from hpnet.bench.gate import Expectation, GateResult
    from hpnet.bench.model import BenchReport, BenchRun, BenchSpec

DESCRIPTION = """\
Measure collectives the way nccl-tests does (the same size sweep, bus-bandwidth
factors, correctness check, in-place and out-of-place, CUDA graphs), on this node's
GPUs (one rank per GPU), on N CPU ranks with gloo, or as one rank of a job that
torchrun, mpirun, srun or `hpnet launch` started.

  hpnet bench                                all_reduce, 8 B to 256 MiB (GPUs) / 4 MiB (CPUs)
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
2: bad usage, or --save / --plot could not be written (the result is printed);
130 / 143: Ctrl-C / SIGTERM (the rows measured before are printed and saved, marked
incomplete). --json: docs/bench-schema.md.
"""

SUBCOMMANDS = {
    "import": "hpnet.cli.bench_import",
    "compare": "hpnet.cli.bench_compare",
    "plot": "hpnet.cli.bench_plot",
    "train": "hpnet.cli.bench_train",
}

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
DEFAULT_SWEEP = {"cuda": (8, 256 << 20), "cpu": (8, 4 << 20)}
DEFAULT_FACTOR = {"cuda": 2, "cpu": 4}


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


def _ops(names: list[str]) -> tuple[str, ...]:
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


def _sizes(ns: argparse.Namespace, device: str) -> tuple[int, ...]:
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


def _spec(ns: argparse.Namespace, device: str) -> BenchSpec:
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
        ops=_ops(ns.ops),
        sizes=_sizes(ns, device),
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


def _expectations(ns: argparse.Namespace) -> list[Expectation]:
    from hpnet.bench.gate import Expectation, from_profile  # noqa: PLC0415

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
    expectations = _expectations(ns)
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
        spec = _spec(ns, "cuda" if device != "cpu" else "cpu")
        spec = dataclasses.replace(spec, device=device)
        meta["spec"] = _spec_meta(spec)
        checkpoint = ns.save + ".partial.json" if ns.save else None
        report = bench.run_in_launcher(spec, ranks=ranks, metadata=meta, checkpoint_path=checkpoint)
        if report is None:  # not rank 0: rank 0 reports for the job
            return 0
        if checkpoint:
            _remove(checkpoint)
    else:
        nproc, device = bench.local_defaults(ns.nproc, ns.device)
        spec = _spec(ns, device)
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
            _write(ns.save, result_json(report, gates))
        except HpnetError as exc:
            unsaved.append(exc)
    if ns.plot:
        from hpnet.bench.plot import series_of, write_plot  # noqa: PLC0415

        try:
            write_plot(ns.plot, series_of(report, "hpnet"), title=_title(report))
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


def emit(report: BenchReport, *, json: bool, csv: bool, gates: Sequence[GateResult] = ()) -> None:
    """Print the report as JSON, CSV, or the nccl-tests table with the verdict."""
    if json:
        print(result_json(report, gates), end="")
    elif csv:
        from hpnet.render.bench import render_csv  # noqa: PLC0415

        print(render_csv(report), end="")
    else:
        from hpnet.render.bench import render_report  # noqa: PLC0415

        status, verdict = verdict_of(report, gates)
        print(render_report(report, gates=gates, verdict=f"# {status}: {verdict}"), end="")


def verdict_of(report: BenchReport, gates: Sequence[GateResult]) -> tuple[str, str]:
    """PASS when every row is right, every expectation met and the sweep complete."""
    problems = []
    if report.incomplete:
        problems.append(f"the sweep stopped early: {report.incomplete}")
    wrong = [
        f"{run.op} {row.size_bytes} B"
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
    problems += [f"{run.op}: the run failed: {run.failure}" for run in report.runs if run.failure]
    problems += [f"{g.op} below expectation: {g.detail}" for g in gates if g.status == "FAIL"]
    if problems:
        return "FAIL", "; ".join(problems)
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
    met = [g for g in gates if g.status == "PASS"]
    tail = f"; {len(met)} expectation(s) met" if met else ""
    return "PASS", f"{summary}; {checked}{tail}"


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


def _title(report: BenchReport) -> str:
    meta = report.metadata
    ops = ", ".join(run.op for run in report.runs)
    nranks = report.runs[0].nranks if report.runs else None
    ranks = f"{nranks} ranks" if nranks is not None else "ranks not shown"
    stack = f"{meta.get('backend', '')} {meta.get('device', '')}".strip()
    return f"hpnet bench {ops}: {ranks}, {stack}"


def result_json(report: BenchReport, gates: Sequence[GateResult] = ()) -> str:
    """The JSON of docs/bench-schema.md: what --json prints and --save writes."""
    from hpnet.bench.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import dumps, to_data  # noqa: PLC0415

    status, verdict = verdict_of(report, gates)
    data: Any = to_data(report)
    return dumps(
        {
            "schema_version": SCHEMA_VERSION,
            "status": status,
            "verdict": verdict,
            **data,
            "gates": to_data(list(gates)),
        }
    )


def _write(path: str, text: str) -> None:
    from hpnet.errors import InputError  # noqa: PLC0415

    try:
        with open(path, "w") as handle:
            handle.write(text)
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
    directory is meant, with ``directory``). Nothing is created. Used for ``--save``,
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
    parent = os.path.dirname(target)
    if directory:  # made with its parents: the nearest one that exists must take it
        while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        missing = "is not a directory" if os.path.lexists(parent) else "does not exist"
        raise refuse(
            f"{parent} {missing}", f"create it first (mkdir -p {parent}), or choose another path"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise refuse(f"the directory {parent} is not writable", f"{flag} in a directory you own")


def _remove(path: str) -> None:
    import contextlib  # noqa: PLC0415

    with contextlib.suppress(OSError):
        os.unlink(path)
