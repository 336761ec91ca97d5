"""`hpnet check`'s result: one verdict, the problems in order of impact, the evidence.

Impact ranks (lower is worse), so that the fix that matters most comes first:

1. the fast network is not used, or not there (socket fallback, no RDMA device, no
   GPU): 4-10x of every multi-node job's communication;
2. what stops or corrupts jobs: a doctor FAIL, an error in NCCL's log, a rank that
   failed, wrong results;
3. bandwidth well below what the hardware gives;
4. GPUDirect RDMA off where it could be on, bandwidth somewhat low;
5. warnings: what is likely to bite later.

READY means nothing of impact 1 to 3.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hpnet.result import Problem, Status, Verdict

if TYPE_CHECKING:
    from hpnet.bench.model import BenchReport
    from hpnet.check.expect import Judgement

__all__ = [
    "CheckReport",
    "ClusterNode",
    "ClusterView",
    "DoctorFinding",
    "EnvMismatch",
    "PortFact",
    "RankFacts",
    "Stage",
    "StageTransports",
]

SCHEMA_VERSION = 1
READY_BELOW = 4  # impacts 1-3 make a node not ready


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StageTransports:
    """The transports NCCL's log shows a stage used, as labels (``P2P/CUMEM``,
    ``NET/Socket``, ``NET/IB/GDRDMA``): inside a host and towards other hosts."""

    intra_node: tuple[str, ...] = ()
    inter_node: tuple[str, ...] = ()

    @classmethod
    def from_labels(cls, labels: Mapping[str, Sequence[str]]) -> StageTransports:
        """From ``hpnet verify``'s ``transports`` (``intra_node`` / ``inter_node`` -> labels).

        >>> StageTransports.from_labels({"inter_node": ["NET/Socket"]}).inter_node
        ('NET/Socket',)
        """
        return cls(
            intra_node=tuple(labels.get("intra_node", ())),
            inter_node=tuple(labels.get("inter_node", ())),
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Stage:
    """One benchmark run of the check and what its NCCL log proves."""

    name: str  # "intra-node", "across 2 fake hosts", "cpu"
    backend: str
    nranks: int
    bench: BenchReport | None
    judgement: Judgement | None
    #: the transports NCCL's log shows (none without a log: gloo, a stage that failed)
    transports: StageTransports = StageTransports()
    network: tuple[str, ...] = ()  # NCCL's network module(s): IB, Socket, a plugin
    gdr: str | None = None  # GPUDirect RDMA as the log shows it
    verify_status: str | None = None
    error: str | None = None  # why the stage did not run or stopped
    #: the stage's kind (hpnet.check.plan.StageKind): intra-node, fake-hosts, cpu, cluster
    kind: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckReport:
    verdict: Verdict
    headline: str
    node: str
    profile: str
    transport: str  # what the resolved environment intends: ib, roce, erdma, socket
    gpus: int
    gpu_name: str | None
    rdma_ports: tuple[str, ...]  # "mlx5_0:1 200 Gb/s ACTIVE"
    problems: tuple[Problem, ...]
    stages: tuple[Stage, ...]
    doctor: dict[str, int]  # PASS/WARN/FAIL/SKIP counts
    doctor_checks: tuple[DoctorFinding, ...]  # the doctor's WARN and FAIL results
    environment: dict[str, str]  # the NCCL environment the check ran with (resolved)
    notes: tuple[str, ...] = ()
    mode: str = "quick"
    #: with --all under a launcher: the cluster view (hpnet.check.cluster)
    cluster: ClusterView | None = None
    #: when, by which hpnet, on which host and with which command line the report was
    #: made (``{"date": ..., "hpnet": ..., "host": ..., "command": ...}``; {} in tests)
    run: dict[str, str] = dataclasses.field(default_factory=dict)
    #: why the check stopped before its end (``stopped by SIGINT (Ctrl-C) during the
    #: benchmark cpu (stage 1 of 1)``): the report holds what was judged until then;
    #: None: it ran to its end
    incomplete: str | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == Verdict.READY else 1


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DoctorFinding:
    """A doctor's WARN or FAIL, as a node's check or a cluster rank's facts carry it."""

    id: str  # hpnet.doctor.registry.CHECKS
    status: Status  # WARN, FAIL (PASS and SKIP are no problem)
    summary: str
    evidence: tuple[str, ...] = ()
    fix: str | None = None

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> DoctorFinding:
        return cls(
            id=str(data["id"]),
            status=Status(str(data["status"])),
            summary=str(data["summary"]),
            evidence=tuple(str(e) for e in data.get("evidence") or ()),
            fix=data.get("fix"),
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PortFact:
    """An RDMA port as a cluster rank reports it: its state a field, not a text."""

    name: str  # "mlx5_0:1"
    rate: str | None  # as sysfs says it: "200 Gb/sec (4X HDR)"
    state: str  # ACTIVE, DOWN, ...
    rate_gbps: float | None = None

    @property
    def active(self) -> bool:
        return self.state == "ACTIVE"

    @property
    def described(self) -> str:
        return f"{self.name} {self.rate or '?'} {self.state}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankFacts:
    """What one rank of ``hpnet check --all`` saw; the node's first rank (``leader``)
    adds its node's GPUs, ports, versions and doctor."""

    rank: int
    node: str  # NCCL_HOSTID when set, else the host name
    host: str
    local_rank: int
    nccl_env: dict[str, str]  # secrets <redacted>
    gpus: int | None = None
    gpu_names: tuple[str, ...] = ()
    ports: tuple[PortFact, ...] = ()
    driver: str | None = None
    cuda: str | None = None
    nccl_version: str | None = None
    doctor_verdict: str | None = None
    doctor: tuple[DoctorFinding, ...] = ()

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> RankFacts:
        doctor = data.get("doctor") or {}
        return cls(
            rank=int(data["rank"]),
            node=str(data["node"]),
            host=str(data.get("host") or ""),
            local_rank=int(data.get("local_rank") or 0),
            nccl_env={str(k): str(v) for k, v in (data.get("nccl_env") or {}).items()},
            gpus=data.get("gpus"),
            gpu_names=tuple(str(n) for n in data.get("gpu_names") or ()),
            ports=tuple(PortFact(**p) for p in data.get("ports") or ()),
            driver=data.get("driver"),
            cuda=data.get("cuda"),
            nccl_version=data.get("nccl_version"),
            doctor_verdict=doctor.get("verdict"),
            doctor=tuple(DoctorFinding.from_data(f) for f in doctor.get("findings") or ()),
        )

    def version(self, key: str) -> str | None:
        return {"nccl_version": self.nccl_version, "driver": self.driver, "cuda": self.cuda}[key]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ClusterNode:
    node: str
    ranks: tuple[int, ...]
    gpus: int | None
    rdma_ports: tuple[str, ...]
    doctor: str | None  # the doctor's verdict on the node
    nccl_version: str | None
    driver: str | None
    cuda: str | None
    intra_busbw_gbps: float | None
    ring_busbw_gbps: float | None
    inter_node: tuple[str, ...]  # what NCCL's log shows its ranks used towards others


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class EnvMismatch:
    rank: int
    node: str
    differs: tuple[str, ...]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ClusterView:
    """``hpnet check --all``'s view of the nodes (docs/check-schema.md)."""

    nodes: tuple[ClusterNode, ...]
    env_mismatches: tuple[EnvMismatch, ...]
    version_mismatches: tuple[str, ...]
    median_intra_busbw_gbps: float | None
    median_ring_busbw_gbps: float | None
    slow_nodes: tuple[str, ...]
