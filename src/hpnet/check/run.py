"""`hpnet check` on one node, as plan -> execute -> judge: detect once, resolve the
environment, run the doctor over both, plan the stages (:mod:`hpnet.check.plan`, what
``--dry-run`` prints), run them through one launcher (:mod:`hpnet.check.execute`,
the only side effects), judge the facts (:mod:`hpnet.check.judge`, impacts from
:mod:`hpnet.check.impact`) and report.

A recorded node (``--sysfs-root DIR`` or a ``.tree`` file) is judged by what the
record shows: detect, env, the doctor and the plan, with no benchmark. A benchmark
measures the machine it runs on, which is not the recorded node (issue 26: a tree of
4 GPUs was judged by a gloo run on this machine's CPUs, "no NVIDIA GPU visible").
The report lists the plan's stages, each marked not run and why, and its verdict is
the doctor's problems weighed by the judge.

With ``--logs DIR`` each run keeps its logs in a directory of its own inside DIR
(``check-<date>-<time>-<unique>``, named in the report's notes): two checks that share
DIR, at once or one after the other, never read each other's rank logs.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from hpnet.check.execute import (
    Launcher,
    StageOutcome,
    Stopped,
    bench_launcher,
    execute,
    run_directory,
    stage_env,
)
from hpnet.check.expect import LinkExpectation, nvlink_expectation, pcie_expectation
from hpnet.check.judge import DoctorFinding, NodeFacts, judge, verdict
from hpnet.check.model import CheckReport, Stage
from hpnet.check.plan import (
    CheckPlan,
    PlanFacts,
    StageKind,
    StagePlan,
    active_rates,
    plan_check,
)
from hpnet.result import Problem, Status, Verdict

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.doctor.model import Report as DoctorReport
    from hpnet.ncclog.report import VerifyReport

__all__ = ["CheckOptions", "Prepared", "dry_run", "prepare", "run_check", "run_directory"]

Progress = Callable[[str], None]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckOptions:
    profile: str = "auto"
    mode: Literal["quick", "full"] = "quick"
    sysfs_root: str = "/"
    device: str = "auto"  # auto, cuda, cpu
    nproc: int | None = None
    #: the stages' rank logs stay in a new directory of this run's own inside it
    keep_dir: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Prepared:
    """A check up to its benchmarks: the node detected once, the environment resolved,
    the doctor's judgement of both, and the plan of the stages."""

    inventory: NodeInventory
    doctor: DoctorReport
    plan: CheckPlan
    #: what the stages run with (the caller's environment, resolved, NCCL_DEBUG=INFO)
    stage_env: Mapping[str, str]
    ports: tuple[str, ...]  # "mlx5_0:1 200 Gb/s ACTIVE"
    active_rates_gbit: tuple[float, ...]  # the ACTIVE ports' rates
    #: the recorded node judged, as the user named it (a tree file or a directory);
    #: None: this machine, live
    recording: str | None = None


def _links(inventory: NodeInventory, sysfs_root: str) -> LinkExpectation | None:
    """The intra-node link: NVLink when NVML shows it, else the slowest GPU's PCIe."""
    from hpnet.check.links import read_nvlinks, read_pcie  # noqa: PLC0415

    if sysfs_root == "/":
        nvlink = nvlink_expectation(read_nvlinks())
        if nvlink is not None:
            return nvlink
    pcie = [read_pcie(sysfs_root, gpu.pci_bus_id) for gpu in inventory.gpus]
    found = [e for e in (pcie_expectation(s, w) for s, w in pcie) if e is not None]
    return min(found, key=lambda e: e.peak_gbps) if found else None


def _ports(inventory: NodeInventory) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Every RDMA port described, and the active ports' rates (typed state, no text)."""
    described, states = [], []
    for device in inventory.rdma_devices:
        for port in device.ports:
            state = getattr(port.state, "name", str(port.state))
            described.append(f"{device.name}:{port.number} {port.rate or '?'} {state}")
            states.append((state, port.rate_gbps))
    return tuple(described), active_rates(states)


def prepare(
    options: CheckOptions,
    environ: Mapping[str, str],
    *,
    progress: Progress = lambda _message: None,
    local: Callable[[NodeInventory], tuple[int, str]] | None = None,
) -> Prepared:
    """Detect, resolve, run the doctor and plan; nothing is launched. ``local``: the
    local ranks and device for the node detected (default: on a live node hpnet
    bench's, from the GPUs NVML sees here; on a recorded one, its recorded GPUs)."""
    from hpnet.bench.run import local_defaults  # noqa: PLC0415
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415
    from hpnet.doctor.gather import diagnose  # noqa: PLC0415
    from hpnet.nccl.env import resolve_env  # noqa: PLC0415
    from hpnet.node.snapshot import given_path  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    progress("detect this node" if options.sysfs_root == "/" else "read the recorded node")
    env = dict(environ)
    inventory = detect(DetectOptions(sysfs_root=options.sysfs_root), env=env, python_path=sys.path)
    # what detection read decides, as for `hpnet detect` and `hpnet doctor`
    recording = None if inventory.source == "live" else given_path(options.sysfs_root)
    profile = get_profile(options.profile)
    resolution = resolve_env(profile, inventory, environment=env)
    resolved = dict(resolution.exported)
    progress("doctor: pre-flight checks")
    # one truth: the doctor judges the node detected above (not a second detection)
    # and the environment a job of the user's gets: the profile's presets under the
    # user's NCCL_* variables, as `hpnet doctor --profile` does, so that check's problems
    # are the doctor's and every fix is judged against what the user set (issue 25);
    # the stages run with hpnet env's resolution of it
    judged = {k: v for k, v in {**env, **resolved}.items() if k.startswith("NCCL_")}
    for name in resolution.unset:
        judged.pop(name, None)
    doctor = diagnose(
        sysfs_root=options.sysfs_root,
        profile=options.profile,
        environment=env,
        inventory=inventory,
    )
    ports, rates = _ports(inventory)
    if local is None and recording is not None:
        local = _recorded(options)
    nproc, device = local(inventory) if local else local_defaults(options.nproc, options.device)
    facts = PlanFacts(
        node=_node_name(inventory),
        profile=options.profile,
        transport=resolution.transport,
        device="cuda" if device == "cuda" else "cpu",
        num_gpus=nproc if device == "cuda" else 0,
        nproc=nproc,
        active_rates_gbit=rates,
        net_plugin=resolved.get("NCCL_NET_PLUGIN", "").lower() not in ("", "none"),
        intra_link=_links(inventory, options.sysfs_root) if device == "cuda" else None,
        environment=judged,
    )
    return Prepared(
        inventory=inventory,
        doctor=doctor,
        plan=plan_check(facts, mode=options.mode),
        stage_env=stage_env(env, resolved, resolution.unset),
        ports=ports,
        active_rates_gbit=rates,
        recording=recording,
    )


def dry_run(
    options: CheckOptions, environ: Mapping[str, str], *, progress: Progress = lambda _m: None
) -> CheckPlan:
    """``hpnet check --dry-run``: the plan, nothing launched. With ``--sysfs-root DIR``
    the ranks are planned for the recorded node's GPUs, not this machine's."""
    return prepare(options, environ, progress=progress).plan


def _recorded(options: CheckOptions) -> Callable[[NodeInventory], tuple[int, str]]:
    def local(inventory: NodeInventory) -> tuple[int, str]:
        gpus = 0 if options.device == "cpu" else len(inventory.gpus)
        if gpus:
            return min(options.nproc or gpus, gpus), "cuda"
        return options.nproc or 2, "cpu"

    return local


def _node_name(inventory: NodeInventory) -> str:
    """The host name; a recorded node as `hpnet doctor` names it, by the path the user
    gave (``(sysfs-root node.tree)``, not the temporary directory it was rebuilt in)."""
    if inventory.hostname:
        return inventory.hostname
    return "this node" if inventory.source == "live" else f"({inventory.source})"


def run_check(
    options: CheckOptions,
    environ: Mapping[str, str],
    *,
    progress: Progress = lambda _message: None,
    launcher: Launcher | None = None,
    on_interrupt: Callable[[CheckReport], None] | None = None,
) -> CheckReport:
    """Prepare, execute the plan's stages through ``launcher``, judge, report.

    ``launcher`` None: the stages' ranks run on this machine (hpnet bench's), and a
    recorded node's stages are not run at all (:func:`_unmeasured`): they would
    measure this machine, not the node. A launcher given stands for the node's ranks
    (tests replay recorded results through it), and its stages are judged.

    Ctrl-C or a SIGTERM / SIGHUP during the stages ends them; what was judged until
    then (the node detected, the doctor's findings, the stages that ran to their end)
    goes to ``on_interrupt`` (to be printed and saved) as a report marked
    ``incomplete``, and the KeyboardInterrupt or :class:`~hpnet.errors.Terminated` is
    raised again, so that the command still exits as interrupted (130, 128 + the
    signal), as ``hpnet bench`` does. Stopped earlier (detection, doctor), nothing
    was judged: the signal is raised with no report.
    """
    from hpnet.localrun import StopSignals  # noqa: PLC0415

    # SIGTERM / SIGHUP raise Terminated as Ctrl-C raises KeyboardInterrupt (the
    # default would end hpnet on the spot, the doctor's findings unsaid)
    with StopSignals() as signals:
        prepared = prepare(options, environ, progress=progress)
        if launcher is None and prepared.recording is not None:
            progress(f"benchmarks not run: the node is a recording ({prepared.recording})")
            return _unmeasured(options, prepared)
        plan = prepared.plan
        notes = list(plan.notes)

        def keep(stopped: Stopped) -> None:
            signals.hold()  # a second Ctrl-C must not cut the saving short
            if on_interrupt is not None:
                report = _judged(options, prepared, stopped.done, notes, stopped=stopped)
                on_interrupt(report)

        root = run_directory(options.keep_dir)
        if options.keep_dir is not None:
            notes.append(f"the stages' rank logs (with NCCL's INFO lines) are in {root}")
        try:
            outcomes = execute(
                plan, env=prepared.stage_env, root=root, launcher=launcher or bench_launcher,
                progress=progress, on_interrupt=keep,
            )  # fmt: skip
        finally:  # also on Ctrl-C / SIGTERM: no temporary directory is left behind
            if options.keep_dir is None:
                shutil.rmtree(root, ignore_errors=True)
    return _judged(options, prepared, outcomes, notes)


def _judged(
    options: CheckOptions,
    prepared: Prepared,
    outcomes: Sequence[StageOutcome],
    notes: list[str],
    *,
    stopped: Stopped | None = None,
) -> CheckReport:
    """The report on the stages that ran to their end; with ``stopped``, the stage a
    signal stopped is shown (its rows, its error), not judged, and the report says it
    is incomplete."""
    plan = prepared.plan
    facts = _facts(options, prepared, tuple((o.stage, o.verify) for o in outcomes))
    stages = [o.stage for o in outcomes] + ([stopped.stopped.stage] if stopped else [])
    return _report(
        options=options, inventory=prepared.inventory, doctor=prepared.doctor,
        transport=plan.transport, ports=prepared.ports, problems=list(judge(facts)),
        stages=stages, resolved=plan.environment, notes=notes,
        incomplete=stopped.why if stopped else None,
    )  # fmt: skip


def _facts(
    options: CheckOptions,
    prepared: Prepared,
    stages: tuple[tuple[Stage, VerifyReport | None], ...],
) -> NodeFacts:
    """What the judge weighs: the node (live or recorded) and the stages that ran."""
    return NodeFacts(
        device=prepared.plan.device,
        gpu_source=prepared.inventory.gpu_source,
        transport=prepared.plan.transport,
        profile=options.profile,
        active_rates_gbit=prepared.active_rates_gbit,
        doctor=_findings(prepared.doctor),
        stages=stages,
    )


def _unmeasured(options: CheckOptions, prepared: Prepared) -> CheckReport:
    """A recorded node's report: the plan's stages, each marked not run and why (a
    benchmark here measures this machine, not the recorded node), and the judge's
    verdict on what the record shows (its GPUs, its RDMA ports, the doctor), as a live
    node with no stage run would get."""
    plan, where = prepared.plan, prepared.recording
    why = f"not run: the node is a recording ({where})"
    stages = [
        Stage(name=s.name, backend=s.backend, nranks=s.nranks, bench=None, judgement=None,
              error=f"{why}; planned: {_planned(s)}", kind=s.kind.value)
        for s in plan.stages
    ]  # fmt: skip
    notes = [
        *plan.notes,
        f"the benchmarks were not run: the node is a recording ({where}), and a benchmark "
        "here would measure this machine, not it; `hpnet check` on the node itself runs "
        "the stages listed (`hpnet check --dry-run` prints them)",
    ]
    if options.keep_dir is not None:
        notes.append(f"no rank logs in {options.keep_dir}: no benchmark ran")
    return _report(
        options=options, inventory=prepared.inventory, doctor=prepared.doctor,
        transport=plan.transport, ports=prepared.ports,
        problems=list(judge(_facts(options, prepared, ()))),
        stages=stages, resolved=plan.environment, notes=notes,
        ready=f"judged from the recording {where}: the doctor finds nothing that stops "
        "jobs; benchmarks not run (they measure the machine they run on, not a recording)",
    )  # fmt: skip


def _planned(stage: StagePlan) -> str:
    """A stage as planned, in words: ``4 ranks on 4 GPU(s) as 2 NCCL hosts, 1 MiB..256
    MiB, NCCL's log to show net=ib, against 3 x 200 Gb/s RDMA``."""
    from hpnet.render.text import size_text  # noqa: PLC0415

    sizes = stage.sweep.sizes_bytes
    words = [
        f"{stage.nranks} ranks on "
        + (f"{stage.num_gpus} GPU(s)" if stage.device == "cuda" else "CPUs")
        + (f" as {stage.fake_hosts} NCCL hosts" if stage.fake_hosts > 1 else ""),
        f"{size_text(sizes[0])}..{size_text(sizes[-1])}",
    ]
    if stage.expect_net:
        words.append(f"NCCL's log to show net={stage.expect_net}")
    if stage.link is not None:
        words.append(f"against {stage.link.link}")
    return ", ".join(words)


def _findings(doctor: DoctorReport) -> tuple[DoctorFinding, ...]:
    return tuple(
        DoctorFinding(id=c.id, status=c.status, summary=c.summary, evidence=c.evidence, fix=c.fix)
        for c in doctor.checks
    )


def _report(
    *,
    options: CheckOptions,
    inventory: NodeInventory,
    doctor: DoctorReport,
    transport: str,
    ports: tuple[str, ...],
    problems: list[Problem],
    stages: list[Stage],
    resolved: Mapping[str, str],
    notes: list[str],
    incomplete: str | None = None,
    ready: str | None = None,
) -> CheckReport:
    """``ready``: the headline of a READY verdict (default: what the stages measured)."""
    if incomplete is not None:  # proves nothing ready: what it found so far comes first
        found = problems[0].what if problems else "no problem found before it stopped"
        headline = f"INCOMPLETE, {incomplete}; so far: {found}"
    elif verdict(problems) == Verdict.NOT_READY:
        headline = problems[0].what
    elif ready is not None:
        headline = ready
    else:
        parts = []
        for stage in stages:
            if stage.judgement and stage.judgement.measured_gbps is not None:
                where = ", ".join(
                    stage.transports.inter_node
                    if stage.kind == StageKind.FAKE_HOSTS
                    else stage.transports.intra_node
                )
                j = stage.judgement
                share = (
                    f" ({j.fraction:.0%} of {j.expectation.link})"
                    if j.fraction and j.expectation
                    else ""
                )
                parts.append(
                    f"{stage.name} {where or stage.backend} at {j.measured_gbps:.1f} GB/s{share}"
                )
        headline = (
            "jobs here use the network intended, at the bandwidth the hardware gives: "
            + "; ".join(parts)
        )
    counts: dict[str, int] = {}
    for check in doctor.checks:
        counts[check.status.value] = counts.get(check.status.value, 0) + 1
    gpu_names = sorted({g.name for g in inventory.gpus})
    return CheckReport(
        # a check stopped part-way never says READY
        verdict=Verdict.NOT_READY if incomplete is not None else verdict(problems),
        headline=headline,
        node=_node_name(inventory),
        profile=options.profile,
        transport=transport,
        gpus=len(inventory.gpus),
        gpu_name=", ".join(gpu_names) or None,
        rdma_ports=ports,
        problems=tuple(problems),
        stages=tuple(stages),
        doctor=counts,
        doctor_checks=tuple(f for f in _findings(doctor) if f.status in (Status.WARN, Status.FAIL)),
        environment=dict(resolved),
        notes=tuple(notes),
        mode=options.mode,
        incomplete=incomplete,
    )
