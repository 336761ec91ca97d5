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
    "Stopped",
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
    #: the Ctrl-C (KeyboardInterrupt) or SIGTERM / SIGHUP (Terminated) that stopped the
    #: ranks: :func:`execute` keeps the stages so far, then raises it again
    interrupted: BaseException | None = None


#: runs a stage's ranks with an environment, their rank logs in a directory
Launcher = Callable[["StagePlan", Mapping[str, str], str], Launched]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageOutcome:
    plan: StagePlan
    stage: Stage
    verify: VerifyReport | None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Stopped:
    """What a Ctrl-C or SIGTERM during the stages left (:func:`execute`)."""

    done: tuple[StageOutcome, ...]  # the stages that ran to their end
    #: the stage it stopped: its error says so, its rows so far are kept, and a sweep
    #: stopped part-way is not judged against the link (its judgement is None)
    stopped: StageOutcome
    #: ``stopped by SIGINT (Ctrl-C) during the benchmark cpu (stage 1 of 1)``
    why: str


def bench_launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
    """The default launcher: ``hpnet bench``'s local ranks (hpnet.bench.run)."""
    import hpnet.bench.run as bench_run  # noqa: PLC0415 - looked up at call time
    from hpnet.bench.model import BenchSpec  # noqa: PLC0415
    from hpnet.errors import HpnetError, Terminated  # noqa: PLC0415

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

    kept: list[BenchReport] = []  # the rows measured before a Ctrl-C or SIGTERM
    try:
        report = bench_run.run_plan(
            plan, environ=env, metadata={}, keep_dir=directory, progress=False,
            on_interrupt=kept.append,
        )  # fmt: skip
    except HpnetError as exc:
        return Launched(bench=None, error=exc.what)
    except (KeyboardInterrupt, Terminated) as exc:  # the ranks are ended by now
        partial = kept[0] if kept else None
        why = partial.incomplete if partial else bench_run.stopped_by(exc)
        return Launched(bench=partial, error=why, interrupted=exc)
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
    on_interrupt: Callable[[Stopped], None] | None = None,
) -> tuple[StageOutcome, ...]:
    """Every stage of ``plan`` in order, each in its own directory under ``root``.

    Ctrl-C or a SIGTERM / SIGHUP (:class:`~hpnet.errors.Terminated`) during a stage
    ends it (its ranks first): the stages so far and the stopped one, with the rows it
    measured, go to ``on_interrupt`` (a :class:`Stopped`), then the
    KeyboardInterrupt or Terminated is raised again, as :func:`hpnet.bench.run.run_plan`
    does, so that the command still exits as interrupted (130, 128 + the signal).
    """
    from hpnet.bench.run import stopped_by  # noqa: PLC0415
    from hpnet.errors import Terminated  # noqa: PLC0415
    from hpnet.result import Expectation  # noqa: PLC0415

    outcomes: list[StageOutcome] = []
    for number, stage in enumerate(plan.stages, 1):
        directory = os.path.join(root, stage.directory)
        os.makedirs(directory, exist_ok=True)
        progress(f"benchmark {stage.name}: all_reduce on {_ranks(stage)}")
        step = f"the benchmark {stage.name} (stage {number} of {len(plan.stages)})"
        launched, verify = Launched(bench=None), None
        try:
            launched = launcher(stage, env, directory)
            stopped = launched.interrupted
            if stopped is None and stage.verify_log:
                step = f"the verification of the {stage.name} benchmark's NCCL log"
                expectation = Expectation(net=stage.expect_net) if stage.expect_net else None
                verify = verify_logs(directory, expectation)
        except (KeyboardInterrupt, Terminated) as exc:
            stopped = exc
        error = launched.error if stopped is None else (launched.error or stopped_by(stopped))
        built = stage_from(stage.name, stage.backend, stage.nranks, launched.bench, verify,
                           stage.link, error=error, kind=stage.kind.value)  # fmt: skip
        if stopped is not None:
            rest = [s.name for s in plan.stages[number:]]
            why = f"{stopped_by(stopped)} during {step}" + (
                f"; not run: {', '.join(rest)}" if rest else ""
            )
            cut = StageOutcome(plan=stage, stage=dataclasses.replace(built, judgement=None),
                               verify=None)  # fmt: skip
            try:
                if on_interrupt is not None:
                    on_interrupt(Stopped(done=tuple(outcomes), stopped=cut, why=why))
            finally:  # whatever keeping the stages met, the command exits as interrupted
                raise stopped
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
    from hpnet.cluster.folder import LOGS_FIX, as_unwritable  # noqa: PLC0415

    if keep_dir is None:
        return tempfile.mkdtemp(prefix="hpnet-check-")
    with as_unwritable("cannot keep the rank logs there", where=f"--logs {keep_dir}", fix=LOGS_FIX):
        os.makedirs(keep_dir, exist_ok=True)
        return tempfile.mkdtemp(prefix=time.strftime("check-%Y%m%d-%H%M%S-"), dir=keep_dir)
