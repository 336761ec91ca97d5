"""Run a :class:`~hpnet.check.plan.CheckPlan`: each stage's ranks through one
injectable launcher (the only side effects of a check's benchmarks), then NCCL's log
of the stage read back and verified against the plan's intent.

The benchmark runs with the environment a job would get (the caller's, with the
profile's resolved NCCL settings) plus NCCL_DEBUG=INFO / NCCL_DEBUG_SUBSYS=INIT,NET,ENV,
so that what is measured and what is verified is what jobs will use.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hpnet.check.expect import judge
from hpnet.check.model import Stage, StageTransports

if TYPE_CHECKING:
    from hpnet.bench.model import BenchReport
    from hpnet.check.expect import LinkExpectation
    from hpnet.check.plan import CheckPlan, StagePlan
    from hpnet.ncclog.report import VerifyReport

__all__ = [
    "Launched",
    "Launcher",
    "StageOutcome",
    "bench_launcher",
    "execute",
    "run_directory",
    "stage_env",
    "stage_from",
    "verify_logs",
]

Progress = Callable[[str], None]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Launched:
    """What a stage's ranks left: rank 0's benchmark report, and why they stopped
    short (None: they did not)."""

    bench: BenchReport | None
    error: str | None = None


#: runs a stage's ranks with an environment, their rank logs in a directory
Launcher = Callable[["StagePlan", Mapping[str, str], str], Launched]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageOutcome:
    plan: StagePlan
    stage: Stage
    verify: VerifyReport | None


def bench_launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
    """The default launcher: ``hpnet bench``'s local ranks (hpnet.bench.run)."""
    import hpnet.bench.run as bench_run  # noqa: PLC0415 - looked up at call time
    from hpnet.bench.model import BenchSpec  # noqa: PLC0415
    from hpnet.errors import HpnetError  # noqa: PLC0415

    spec = BenchSpec(
        ops=("all_reduce",),
        device=stage.device,
        sizes=stage.sweep.sizes_bytes,
        iters=stage.sweep.iters,
        warmup=stage.sweep.warmup,
    )

    def plan(port: int) -> Any:
        return bench_run.plan_local(
            spec, nproc=stage.nranks, device=stage.device, port=port, python=sys.executable,
            fake_hosts=stage.fake_hosts,
        )  # fmt: skip

    try:
        report = bench_run.run_plan(
            plan, environ=env, metadata={}, keep_dir=directory, progress=False
        )
    except HpnetError as exc:
        return Launched(bench=None, error=exc.what)
    return Launched(bench=report, error=report.incomplete)


def stage_env(
    environ: Mapping[str, str], resolved: Mapping[str, str], unset: Sequence[str] = ()
) -> dict[str, str]:
    """The stages' environment: the caller's, with the resolved NCCL settings, less
    what --override-env removes, with NCCL's INFO log on."""
    env = {k: v for k, v in environ.items() if k != "NCCL_DEBUG_FILE"}  # logs to the rank logs
    env.update(resolved)
    for name in unset:
        env.pop(name, None)
    # ENV: NCCL prints the variables it read, NCCL_HOSTID among them: without that line
    # the fake hosts of one machine cannot be told apart in the log
    env.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET,ENV")
    return env


def execute(
    plan: CheckPlan,
    *,
    env: Mapping[str, str],
    root: str,
    launcher: Launcher = bench_launcher,
    progress: Progress = lambda _message: None,
) -> tuple[StageOutcome, ...]:
    """Every stage of ``plan`` in order, each in its own directory under ``root``."""
    from hpnet.result import Expectation  # noqa: PLC0415

    outcomes = []
    for stage in plan.stages:
        directory = os.path.join(root, stage.directory)
        os.makedirs(directory, exist_ok=True)
        progress(f"benchmark {stage.name}: all_reduce on {_ranks(stage)}")
        launched = launcher(stage, env, directory)
        verify = None
        if stage.verify_log:
            expectation = Expectation(net=stage.expect_net) if stage.expect_net else None
            verify = verify_logs(directory, expectation)
        built = stage_from(stage.name, stage.backend, stage.nranks, launched.bench, verify,
                           stage.link, error=launched.error, kind=stage.kind.value)  # fmt: skip
        outcomes.append(StageOutcome(plan=stage, stage=built, verify=verify))
    return tuple(outcomes)


def _ranks(stage: StagePlan) -> str:
    """``4 GPUs``, ``2 CPU ranks``, ``2 ranks on 1 GPU``."""
    if stage.device == "cpu":
        return f"{stage.nranks} CPU ranks"
    if stage.num_gpus < stage.nranks:
        return f"{stage.nranks} ranks on {stage.num_gpus} GPU{'s' if stage.num_gpus > 1 else ''}"
    return f"{stage.nranks} GPUs"


def verify_logs(directory: str, expectation: Any) -> VerifyReport | None:
    """NCCL's log in a stage's rank logs, verified (None: no rank log there)."""
    from hpnet.ncclog.read import collect_inputs, read_logs  # noqa: PLC0415
    from hpnet.ncclog.report import analyse  # noqa: PLC0415

    logs = sorted(
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if name.startswith("rank") and name.endswith(".log")
    )
    if not logs:
        return None
    inputs, notes = collect_inputs(logs)
    return analyse(read_logs(inputs, jobs=1, notes=notes), expectation)


def best(report: BenchReport | None) -> tuple[float | None, int | None]:
    """The best busbw at the largest size measured (the plateau nccl-tests' readers
    look at), either placement."""
    if report is None or not report.runs or not report.runs[0].rows:
        return None, None
    row = max(report.runs[0].rows, key=lambda r: r.size_bytes)
    values = [m.busbw_gbps for m in (row.out_of_place, row.in_place) if m is not None]
    return (max(values) if values else None), row.size_bytes


def stage_from(  # noqa: PLR0917 - the stage's facts, in the order they come
    name: str,
    backend: str,
    nproc: int,
    report: BenchReport | None,
    verify: VerifyReport | None,
    link: LinkExpectation | None,
    *,
    error: str | None,
    kind: str | None = None,
) -> Stage:
    """A stage's result: its benchmark, judged against the link, and what its log says."""
    measured, size = best(report)
    transports = StageTransports()
    network: tuple[str, ...] = ()
    gdr = None
    if verify is not None:
        transports = StageTransports.from_labels(verify.transports)
        network = verify.network
        gdrs = {h.gdr for h in verify.hosts if h.gdr}
        gdr = ", ".join(sorted(gdrs)) or None
    return Stage(
        name=name,
        kind=kind,
        backend=(report.metadata.get("backend", backend) if report else backend),
        nranks=nproc,
        bench=report,
        judgement=judge(measured, size, link),
        transports=transports,
        network=network,
        gdr=gdr,
        verify_status=verify.status if verify is not None else None,
        error=error,
    )


def run_directory(keep_dir: str | None) -> str:
    """Where this run's stages write their rank logs: a new temporary directory, or
    with ``--logs DIR`` a new one inside DIR whose name no other run can have
    (``check-20261124-101500-k3j9x2``): concurrent checks sharing DIR keep apart."""
    from hpnet.errors import InputError  # noqa: PLC0415

    if keep_dir is None:
        return tempfile.mkdtemp(prefix="hpnet-check-")
    try:
        os.makedirs(keep_dir, exist_ok=True)
        return tempfile.mkdtemp(prefix=time.strftime("check-%Y%m%d-%H%M%S-"), dir=keep_dir)
    except OSError as exc:
        raise InputError(
            f"cannot keep the rank logs there: {exc.strerror or exc}",
            code="unwritable",
            where=f"--logs {keep_dir}",
            fix="--logs a directory you own",
        ) from None
