"""What is wrong, in order of impact: pure functions over typed facts, shared by the
node view (hpnet.check.run) and the cluster view (hpnet.check.cluster). Every impact
comes from the one table in :mod:`hpnet.check.impact`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hpnet.check.impact import CHECK_IMPACT, doctor_impact, verify_impact
from hpnet.check.model import READY_BELOW, DoctorFinding
from hpnet.check.plan import RDMA_TRANSPORTS
from hpnet.result import Problem, Verdict

if TYPE_CHECKING:
    from hpnet.check.model import Stage
    from hpnet.ncclog.report import VerifyReport

__all__ = [
    "DoctorFinding",
    "NodeFacts",
    "doctor_problems",
    "judge",
    "ordered",
    "stage_problems",
    "verdict",
    "verify_problems",
]

#: what an RDMA NIC gives across nodes, for the socket-fallback comparison (NCCL.md,
#: "Expected bandwidth": maintainers' figures in nccl-tests issues)
RDMA_BUSBW = "about 12 GB/s per 100 Gb/s NIC, 24 per 200 Gb/s, 46-48 per 400 Gb/s"
NO_GPU_FIX = (
    "run `hpnet check` on a GPU node (in a container: --gpus all; check CUDA_VISIBLE_DEVICES)"
)
NO_RDMA_FIX = (
    "run on an instance type with RDMA NICs, and pass them into the container "
    "(--device=/dev/infiniband/uverbsN --device=/dev/infiniband/rdma_cm --ulimit "
    "memlock=-1); `hpnet doctor` names what is missing"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeFacts:
    """What one node's check found, as the judge needs it."""

    device: str  # cuda, cpu
    gpu_source: str  # how the GPUs were looked for (evidence when there is none)
    transport: str  # the resolved intent
    profile: str
    active_rates_gbit: tuple[float, ...]
    doctor: tuple[DoctorFinding, ...]
    #: every stage, with its verified NCCL log (None: not read, or none)
    stages: tuple[tuple[Stage, VerifyReport | None], ...]


def judge(facts: NodeFacts) -> tuple[Problem, ...]:
    """The node's problems, most important first (pure)."""
    problems: list[Problem] = []
    stages = [stage for stage, _ in facts.stages]
    if facts.device == "cpu":
        cpu = next((s for s in stages if s.kind == "cpu"), None)
        measured = cpu.judgement.measured_gbps if cpu and cpu.judgement else None
        problems.append(
            Problem(
                impact=CHECK_IMPACT["hardware:gpu"],
                fails=True,
                what="no NVIDIA GPU visible: NCCL has nothing to run on here",
                code="hardware:gpu",
                evidence=(
                    f"GPUs: {facts.gpu_source}",
                    # only what ran: a recorded node's check measures nothing
                    *(
                        [
                            f"measured instead: gloo all_reduce on {cpu.nranks} CPU ranks"
                            + (f", busbw {measured:.2f} GB/s" if measured is not None else "")
                        ]
                        if cpu
                        else []
                    ),
                ),
                fix=NO_GPU_FIX,
            )
        )
    if (
        not facts.active_rates_gbit
        and facts.transport not in RDMA_TRANSPORTS
        and facts.profile != "socket"
    ):
        problems.append(_no_rdma(next((s for s in stages if s.kind == "fake-hosts"), None)))
    for stage, verify in facts.stages:
        problems += stage_problems(stage)
        if verify is not None:
            problems += verify_problems(stage, verify)
    problems += doctor_problems(facts.doctor)
    return ordered(problems)


def _no_rdma(net_stage: Stage | None) -> Problem:
    evidence = ["no RDMA device with an active port (sysfs class/infiniband)"]
    if net_stage is not None and net_stage.judgement and net_stage.judgement.measured_gbps:
        over = ", ".join(net_stage.transports.inter_node) or "NCCL's network"
        measured = net_stage.judgement.measured_gbps
        evidence.append(
            f"measured between 2 fake hosts over {over}: busbw {measured:.2f} GB/s; "
            f"an RDMA NIC gives {RDMA_BUSBW}"
        )
    return Problem(
        impact=CHECK_IMPACT["hardware:rdma"],
        what="no RDMA network: NCCL traffic between nodes goes over TCP sockets, "
        "typically 4-10x slower than RDMA",
        code="hardware:rdma",
        evidence=tuple(evidence),
        fix=NO_RDMA_FIX,
    )


def stage_problems(stage: Stage) -> list[Problem]:
    """A stage that failed, gave wrong results, or a bandwidth below the link's."""
    problems = []
    if stage.error:
        problems.append(
            Problem(
                impact=CHECK_IMPACT["bench:failed"],
                fails=True,
                what=f"the {stage.name} benchmark failed",
                code=f"bench:{stage.name}",
                evidence=(stage.error[:300],),
                fix="read the findings below and the rank logs (--logs DIR)",
            )
        )
    wrong = [
        row.size_bytes
        for run in (stage.bench.runs if stage.bench else ())
        for row in run.rows
        if any(m is not None and (m.wrong or 0) > 0 for m in (row.out_of_place, row.in_place))
    ]
    if wrong:
        problems.append(
            Problem(
                impact=CHECK_IMPACT["bench:wrong"],
                fails=True,
                what=f"{stage.name}: wrong results at {len(wrong)} size(s)",
                code=f"bench:{stage.name}",
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
                impact=CHECK_IMPACT[f"bandwidth:{judgement.status}"],
                what=f"{stage.name}: bus bandwidth {far}below what the link gives",
                code=f"bandwidth:{stage.name}",
                evidence=(judgement.detail,),
                fix="check the link (nvidia-smi topo -m, nvidia-smi nvlink -s; for a NIC its "
                "rate and errors), other jobs on the node, and NCCL_ALGO / NCCL_PROTO left set",
            )
        )
    return problems


def verify_problems(stage: Stage, verify: VerifyReport) -> list[Problem]:
    """An intent NCCL's log does not meet, and its error findings."""
    problems = []
    for result in verify.expectations:
        if not result.met:
            problems.append(
                Problem(
                    impact=CHECK_IMPACT["verify:intent"],
                    what=f"{stage.name}: traffic did not use the intended network "
                    f"({result.expectation}): {result.detail}",
                    code=f"verify:{stage.name}",
                    evidence=(
                        f"intra_node: {', '.join(stage.transports.intra_node)}",
                        f"inter_node: {', '.join(stage.transports.inter_node)}",
                    ),
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
                    impact=verify_impact(finding.id),
                    fails=finding.fatal,
                    what=f"{stage.name}: {finding.title}",
                    code=f"verify:{finding.id}",
                    evidence=(finding.cause, *finding.evidence[:3]),
                    fix=finding.fix,
                )
            )
    return problems


def doctor_problems(findings: Iterable[DoctorFinding], *, node: str | None = None) -> list[Problem]:
    """The doctor's WARN and FAIL results, weighed by the impact table; ``node``
    names the node they were found on (the cluster view)."""
    where = f"{node}: " if node else ""
    return [
        Problem(
            impact=doctor_impact(f.id, f.status),
            fails=f.status == "FAIL",
            what=f"{where}doctor: {f.summary}",
            code=f"doctor:{f.id}",
            evidence=f.evidence[:3],
            fix=f.fix,
        )
        for f in findings
        if f.status in ("FAIL", "WARN")
    ]


def ordered(problems: Sequence[Problem]) -> tuple[Problem, ...]:
    """Most important first (stable): what stops NCCL or the job before what does not
    (the doctor's order: FAIL before WARN), then by impact; each (code, what) once."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for problem in sorted(problems, key=lambda p: (not p.fails, p.impact or READY_BELOW + 1)):
        key = (problem.code, problem.what)
        if key not in seen:
            seen.add(key)
            unique.append(problem)
    return tuple(unique)


def verdict(problems: Sequence[Problem]) -> Verdict:
    """NOT READY when any problem is of impact 1 to 3 (a problem without an impact is
    not one of ``hpnet check``'s, and counts as a warning)."""
    worst = min((p.impact or READY_BELOW for p in problems), default=READY_BELOW)
    return Verdict.NOT_READY if worst < READY_BELOW else Verdict.READY
