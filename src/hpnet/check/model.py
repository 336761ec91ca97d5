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
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from hpnet.bench.model import BenchReport
    from hpnet.check.expect import Judgement

__all__ = ["CheckReport", "Problem", "Stage"]

SCHEMA_VERSION = 1
READY_BELOW = 4  # impacts 1-3 make a node not ready


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    impact: int
    title: str
    source: str  # "doctor:memlock", "verify:socket-fallback", "bandwidth:intra-node", ...
    evidence: tuple[str, ...] = ()
    fix: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Stage:
    """One benchmark run of the check and what its NCCL log proves."""

    name: str  # "intra-node", "across 2 fake hosts", "cpu"
    backend: str
    nranks: int
    bench: BenchReport | None
    judgement: Judgement | None
    #: the transports NCCL's log shows: intra_node / inter_node -> labels
    transports: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    network: tuple[str, ...] = ()  # NCCL's network module(s): IB, Socket, a plugin
    gdr: str | None = None  # GPUDirect RDMA as the log shows it
    verify_status: str | None = None
    error: str | None = None  # why the stage did not run or stopped


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckReport:
    verdict: Literal["READY", "NOT READY"]
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
    doctor_checks: tuple[dict[str, Any], ...]  # the doctor's WARN and FAIL results
    environment: dict[str, str]  # the NCCL environment the check ran with (resolved)
    notes: tuple[str, ...] = ()
    mode: str = "quick"
    #: with --all under a launcher: the cluster view (hpnet.check.cluster)
    cluster: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == "READY" else 1
