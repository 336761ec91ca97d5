"""`hpnet check` on one node: detect, resolve, doctor, benchmark under NCCL's debug log,
verify the transports against what the environment intends, judge the bandwidth
against the hardware, and order what is wrong by impact.

The benchmark runs with the environment a job would get (the caller's, with the
profile's resolved NCCL settings) plus NCCL_DEBUG=INFO / NCCL_DEBUG_SUBSYS=INIT,NET,ENV,
so that what is measured and what is verified is what jobs will use. Stages: all local
GPUs (intra-node: NVLink, PCIe, SHM); the GPUs split into two NCCL hosts with
NCCL_HOSTID (NCCL's network transport for real: NET/IB on an RDMA node, NET/Socket
without); on a machine without GPUs, gloo on two CPU ranks.

With ``--logs DIR`` each run keeps its logs in a directory of its own inside DIR
(``check-<date>-<time>-<unique>``, named in the report's notes): two checks that share
DIR, at once or one after the other, never read each other's rank logs.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from hpnet.check.expect import (
    LinkExpectation,
    judge,
    net_expectation,
    nvlink_expectation,
    pcie_expectation,
)
from hpnet.check.model import READY_BELOW, CheckReport, Problem, Stage

if TYPE_CHECKING:
    from hpnet.bench.model import BenchReport
    from hpnet.detect import NodeInventory
    from hpnet.doctor.model import Report as DoctorReport
    from hpnet.ncclog.report import VerifyReport

__all__ = ["CheckOptions", "run_check"]

RDMA_TRANSPORTS = frozenset({"ib", "roce", "rdma", "erdma"})
#: the doctor's checks whose findings weigh more (or less) than their status says:
#: impact 1 keeps traffic off RDMA altogether (4-10x); 2 stops or misroutes jobs;
#: 3 leaves a setting the user meant without effect; 4 costs some bandwidth
DOCTOR_IMPACT = {
    "vars.ib_disabled": 1,
    "vars.net": 1,
    "vars.transport": 1,
    "devices.uverbs": 1,
    "devices.rdma_cm": 2,
    "vars.hca": 2,
    "vars.gid": 2,
    "vars.ifname": 2,
    "vars.syntax": 2,
    "ports.state": 2,
    "limits.memlock": 2,
    "versions.nccl": 2,
    "versions.cuda": 2,
    "vars.unknown": 3,
    "gpudirect.module": 4,
    "gpudirect.acs": 4,
    "gpudirect.locality": 4,
    "ports.mixed": 4,
}
Progress = Callable[[str], None]
#: what an RDMA NIC gives across nodes, for the socket-fallback comparison (NCCL.md,
#: "Expected bandwidth": maintainers' figures in nccl-tests issues)
RDMA_BUSBW = "about 12 GB/s per 100 Gb/s NIC, 24 per 200 Gb/s, 46-48 per 400 Gb/s"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckOptions:
    profile: str = "auto"
    mode: Literal["quick", "full"] = "quick"
    sysfs_root: str = "/"
    device: str = "auto"  # auto, cuda, cpu
    nproc: int | None = None
    #: the stages' rank logs stay in a new directory of this run's own inside it
    keep_dir: str | None = None


def _sweep(mode: str, device: str) -> dict[str, Any]:
    if device == "cpu":
        return {"sizes": (1 << 10, 8 << 10, 64 << 10, 512 << 10), "iters": 10, "warmup": 2}
    if mode == "full":
        sizes = tuple(8 << (2 * i) for i in range(15))  # 8 B .. 2 GiB by 4
        return {"sizes": tuple(s for s in sizes if s <= 1 << 30), "iters": 20, "warmup": 5}
    return {"sizes": (1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20), "iters": 20, "warmup": 5}


def _stage_env(
    environ: Mapping[str, str], resolved: Mapping[str, str], unset: Sequence[str] = ()
) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if k != "NCCL_DEBUG_FILE"}  # logs to the rank logs
    env.update(resolved)
    for name in unset:  # --override-env said to remove it
        env.pop(name, None)
    # ENV: NCCL prints the variables it read, NCCL_HOSTID among them: without that line
    # the fake hosts of one machine cannot be told apart in the log
    env.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET,ENV")
    return env


def _verify(directory: str, expectation: Any) -> VerifyReport | None:
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


def _best(report: BenchReport | None) -> tuple[float | None, int | None]:
    """The best busbw at the largest size measured (the plateau nccl-tests' readers
    look at), either placement."""
    if report is None or not report.runs or not report.runs[0].rows:
        return None, None
    row = max(report.runs[0].rows, key=lambda r: r.size_bytes)
    values = [m.busbw_gbps for m in (row.out_of_place, row.in_place) if m is not None]
    return (max(values) if values else None), row.size_bytes


def _run_stage(
    name: str,
    *,
    nproc: int,
    device: str,
    fake_hosts: int,
    options: CheckOptions,
    env: Mapping[str, str],
    root: str,
    expectation: Any,
    link: LinkExpectation | None,
    progress: Progress,
) -> tuple[Stage, VerifyReport | None]:
    from hpnet.bench.model import BenchSpec  # noqa: PLC0415
    from hpnet.bench.run import plan_local as plan_bench  # noqa: PLC0415
    from hpnet.bench.run import run_plan  # noqa: PLC0415
    from hpnet.errors import HpnetError  # noqa: PLC0415

    directory = os.path.join(root, name.replace(" ", "-"))
    os.makedirs(directory, exist_ok=True)
    spec = BenchSpec(ops=("all_reduce",), device=device, **_sweep(options.mode, device))
    progress(
        f"benchmark {name}: all_reduce on {nproc} {'GPUs' if device == 'cuda' else 'CPU ranks'}"
    )

    def plan(port: int) -> Any:
        return plan_bench(
            spec, nproc=nproc, device=device, port=port, python=sys.executable,
            fake_hosts=fake_hosts,
        )  # fmt: skip

    backend = "gloo" if device == "cpu" else "nccl"
    report: BenchReport | None = None
    try:
        report = run_plan(plan, environ=env, metadata={}, keep_dir=directory, progress=False)
        error = report.incomplete
    except HpnetError as exc:
        error = exc.what
    verify = _verify(directory, expectation) if device == "cuda" else None
    return _stage_from(name, backend, nproc, report, verify, link, error=error), verify


def _stage_from(  # noqa: PLR0917 - a private constructor, called twice
    name: str,
    backend: str,
    nproc: int,
    report: BenchReport | None,
    verify: VerifyReport | None,
    link: LinkExpectation | None,
    *,
    error: str | None,
) -> Stage:
    measured, size = _best(report)
    transports: dict[str, tuple[str, ...]] = {}
    network: tuple[str, ...] = ()
    gdr = None
    if verify is not None:
        transports = dict(verify.transports)
        network = verify.network
        gdrs = {h.gdr for h in verify.hosts if h.gdr}
        gdr = ", ".join(sorted(gdrs)) or None
    return Stage(
        name=name,
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


def _rdma_ports(inventory: NodeInventory) -> tuple[list[str], list[float]]:
    described, rates = [], []
    for device in inventory.rdma_devices:
        for port in device.ports:
            state = getattr(port.state, "name", str(port.state))
            described.append(f"{device.name}:{port.number} {port.rate or '?'} {state}")
            if state == "ACTIVE" and port.rate_gbps:
                rates.append(float(port.rate_gbps))
    return described, rates


def run_check(
    options: CheckOptions,
    environ: Mapping[str, str],
    *,
    progress: Progress = lambda _message: None,
) -> CheckReport:
    from hpnet.bench.run import local_defaults  # noqa: PLC0415
    from hpnet.detect import DetectOptions, detect  # noqa: PLC0415
    from hpnet.doctor.gather import diagnose  # noqa: PLC0415
    from hpnet.nccl.env import resolve_env  # noqa: PLC0415
    from hpnet.ncclog.report import Expectation  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    progress("detect this node")
    env = dict(environ)
    inventory = detect(DetectOptions(sysfs_root=options.sysfs_root), env=env, python_path=sys.path)
    profile = get_profile(options.profile)
    resolution = resolve_env(profile, inventory, environment=env)
    resolved = dict(resolution.exported)
    stage_env = _stage_env(env, resolved, resolution.unset)
    progress("doctor: pre-flight checks")
    # one truth: the doctor judges the node detected above and the environment the
    # stages run with (not a second detection, nor the profile's presets alone)
    judged = {k: v for k, v in {**env, **resolved}.items() if k.startswith("NCCL_")}
    for name in resolution.unset:
        judged.pop(name, None)
    doctor = diagnose(
        sysfs_root=options.sysfs_root,
        profile=options.profile,
        environment=env,
        inventory=inventory,
        judged=(judged, "the environment hpnet check resolved and runs with"),
    )
    port_text, rates = _rdma_ports(inventory)
    transport = resolution.transport
    plugin = resolved.get("NCCL_NET_PLUGIN", "").lower() not in ("", "none")
    expectation = None
    if transport in RDMA_TRANSPORTS and not plugin:
        expectation = Expectation(net="ib")
    elif transport == "socket":
        expectation = Expectation(net="socket")

    nproc, device = local_defaults(options.nproc, options.device)
    root = run_directory(options.keep_dir)
    stages: list[Stage] = []
    verifies: list[tuple[Stage, VerifyReport | None]] = []
    notes: list[str] = []
    try:
        if device == "cuda":
            intra_link = _links(inventory, options.sysfs_root)
            if nproc >= 2:
                stage, verify = _run_stage(
                    "intra-node", nproc=nproc, device="cuda", fake_hosts=1, options=options,
                    env=stage_env, root=root, expectation=None, link=intra_link, progress=progress,
                )  # fmt: skip
                stages.append(stage)
                verifies.append((stage, verify))
                net_link = net_expectation(rates) if transport in RDMA_TRANSPORTS else None
                stage, verify = _run_stage(
                    "across 2 fake hosts", nproc=nproc, device="cuda", fake_hosts=2,
                    options=options, env=stage_env, root=root, expectation=expectation,
                    link=net_link, progress=progress,
                )  # fmt: skip
                stages.append(stage)
                verifies.append((stage, verify))
            else:
                notes.append(
                    "one GPU: no intra-node collective to measure, and no second NCCL host "
                    "to exercise the network with; run `hpnet check --all` across nodes under "
                    "a launcher"
                )
        else:
            stage, _ = _run_stage(
                "cpu", nproc=nproc, device="cpu", fake_hosts=1, options=options, env=stage_env,
                root=root, expectation=None, link=None, progress=progress,
            )  # fmt: skip
            stages.append(stage)
    finally:  # also on Ctrl-C / SIGTERM: no temporary directory is left behind
        if options.keep_dir is None:
            import shutil  # noqa: PLC0415

            shutil.rmtree(root, ignore_errors=True)
    if options.keep_dir is not None:
        notes.append(f"the stages' rank logs (with NCCL's INFO lines) are in {root}")
    problems = _problems(
        inventory=inventory, doctor=doctor, transport=transport, profile=options.profile,
        rates=rates, verifies=verifies, stages=stages, device=device,
    )  # fmt: skip
    return _report(
        options=options, inventory=inventory, doctor=doctor, transport=transport,
        ports=tuple(port_text), problems=problems, stages=stages, resolved=judged,
        notes=notes,
    )  # fmt: skip


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


def _problems(
    *,
    inventory: NodeInventory,
    doctor: DoctorReport,
    transport: str,
    profile: str,
    rates: list[float],
    verifies: list[tuple[Stage, VerifyReport | None]],
    stages: list[Stage],
    device: str,
) -> list[Problem]:
    problems: list[Problem] = []
    net_stage = next((s for s in stages if "fake hosts" in s.name), None)
    if device == "cpu":
        cpu = next((s for s in stages if s.name == "cpu"), None)
        measured = cpu.judgement.measured_gbps if cpu and cpu.judgement else None
        problems.append(
            Problem(
                impact=1,
                title="no NVIDIA GPU visible: NCCL has nothing to run on here",
                source="hardware:gpu",
                evidence=(
                    f"GPUs: {inventory.gpu_source}",
                    "measured instead: gloo all_reduce on 2 CPU ranks"
                    + (f", busbw {measured:.2f} GB/s" if measured is not None else ""),
                ),
                fix="run `hpnet check` on a GPU node (in a container: --gpus all; check "
                "CUDA_VISIBLE_DEVICES)",
            )
        )
    if not rates and transport not in RDMA_TRANSPORTS and profile != "socket":
        evidence = ["no RDMA device with an active port (sysfs class/infiniband)"]
        if net_stage is not None and net_stage.judgement and net_stage.judgement.measured_gbps:
            over = ", ".join(net_stage.transports.get("inter_node", ())) or "NCCL's network"
            measured = net_stage.judgement.measured_gbps
            evidence.append(
                f"measured between 2 fake hosts over {over}: busbw {measured:.2f} GB/s; "
                f"an RDMA NIC gives {RDMA_BUSBW}"
            )
        problems.append(
            Problem(
                impact=1,
                title="no RDMA network: NCCL traffic between nodes goes over TCP sockets, "
                "typically 4-10x slower than RDMA",
                source="hardware:rdma",
                evidence=tuple(evidence),
                fix="run on an instance type with RDMA NICs, and pass them into the container "
                "(--device=/dev/infiniband/uverbsN --device=/dev/infiniband/rdma_cm --ulimit "
                "memlock=-1); `hpnet doctor` names what is missing",
            )
        )
    for stage, verify in verifies:
        if stage.error:
            problems.append(
                Problem(
                    impact=2,
                    title=f"the {stage.name} benchmark failed",
                    source=f"bench:{stage.name}",
                    evidence=(stage.error[:300],),
                    fix="read the findings below and the rank logs (--logs DIR)",
                )
            )
        if verify is None:
            continue
        for result in verify.expectations:
            if not result.met:
                problems.append(
                    Problem(
                        impact=1,
                        title=f"{stage.name}: traffic did not use the intended network "
                        f"({result.expectation}): {result.detail}",
                        source=f"verify:{stage.name}",
                        evidence=tuple(f"{k}: {', '.join(v)}" for k, v in stage.transports.items()),
                        fix=next(
                            (f.fix for f in verify.findings if f.severity == "error"),
                            "run `hpnet doctor` and `hpnet verify` on the rank logs",
                        ),
                    )
                )
        for finding in verify.findings:
            if finding.severity == "error":
                problems.append(
                    Problem(
                        impact=1 if finding.id == "socket-fallback" else 2,
                        title=f"{stage.name}: {finding.title}",
                        source=f"verify:{finding.id}",
                        evidence=(finding.cause, *finding.evidence[:3]),
                        fix=finding.fix,
                    )
                )
    for stage in stages:
        wrong = [
            row.size_bytes
            for run in (stage.bench.runs if stage.bench else ())
            for row in run.rows
            if any(m is not None and (m.wrong or 0) > 0 for m in (row.out_of_place, row.in_place))
        ]
        if wrong:
            problems.append(
                Problem(
                    impact=2,
                    title=f"{stage.name}: wrong results at {len(wrong)} size(s)",
                    source=f"bench:{stage.name}",
                    evidence=(f"sizes: {wrong[:5]}",),
                    fix="a GPU, NVLink or NIC fault, or a bug in this NCCL: rerun, then test "
                    "the GPUs one pair at a time",
                )
            )
        judgement = stage.judgement
        if judgement is not None and judgement.status in ("FAIL", "WARN"):
            far = "far " if judgement.status == "FAIL" else ""
            problems.append(
                Problem(
                    impact=3 if judgement.status == "FAIL" else 4,
                    title=f"{stage.name}: bus bandwidth {far}below what the link gives",
                    source=f"bandwidth:{stage.name}",
                    evidence=(judgement.detail,),
                    fix="check the link (nvidia-smi topo -m, nvidia-smi nvlink -s; for a NIC its "
                    "rate and errors), other jobs on the node, and NCCL_ALGO / NCCL_PROTO left set",
                )
            )
    for check in doctor.checks:
        status = check.status.value
        if status in ("FAIL", "WARN"):
            problems.append(
                Problem(
                    impact=DOCTOR_IMPACT.get(check.id, 2 if status == "FAIL" else 5),
                    title=f"doctor: {check.summary}",
                    source=f"doctor:{check.id}",
                    evidence=check.evidence[:3],
                    fix=check.fix,
                )
            )
    seen: set[tuple[str, str]] = set()
    unique = []
    for problem in sorted(problems, key=lambda p: p.impact):
        key = (problem.source, problem.title)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return unique


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
) -> CheckReport:
    blocking = [p for p in problems if p.impact < READY_BELOW]
    verdict: Literal["READY", "NOT READY"] = "NOT READY" if blocking else "READY"
    if blocking:
        headline = blocking[0].title
    else:
        parts = []
        for stage in stages:
            if stage.judgement and stage.judgement.measured_gbps is not None:
                where = ", ".join(
                    stage.transports.get(
                        "inter_node" if "hosts" in stage.name else "intra_node", ()
                    )
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
        verdict=verdict,
        headline=headline,
        node=inventory.hostname
        or (f"(sysfs root {options.sysfs_root})" if options.sysfs_root != "/" else "this node"),
        profile=options.profile,
        transport=transport,
        gpus=len(inventory.gpus),
        gpu_name=", ".join(gpu_names) or None,
        rdma_ports=ports,
        problems=tuple(problems),
        stages=tuple(stages),
        doctor=counts,
        doctor_checks=tuple(
            {"id": c.id, "status": c.status.value, "summary": c.summary, "fix": c.fix}
            for c in doctor.checks
            if c.status.value in ("WARN", "FAIL")
        ),
        environment=dict(resolved),
        notes=tuple(notes),
        mode=options.mode,
    )
