"""What `hpnet check` will run, as a value: typed stages built from the detected facts
and the options, with no side effect (STYLE.md, "Plan, then execute"). ``hpnet check
--dry-run`` prints it; :mod:`hpnet.check.execute` runs it.

Stages (:class:`StageKind`):

- ``intra-node``: all local GPUs in one NCCL host (NVLink, PCIe, SHM);
- ``fake-hosts``: the ranks split into two NCCL hosts with NCCL_HOSTID, so that NCCL
  uses its network transport between them (NET/IB on an RDMA node, NET/Socket
  without). On a one-GPU node both ranks share the GPU: NCCL refuses two ranks on
  one GPU only within one host ("Duplicate GPU detected", init.cc), and the two fake
  hosts are two hosts to it, so the network is still exercised and measured;
- ``cpu``: gloo on CPU ranks where there is no GPU;
- ``cluster``: ``--all`` under a launcher: every rank of the job in one sweep
  (:func:`cluster_stage`; run by hpnet.check.cluster, which knows the job's size only
  once its ranks have met).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from hpnet.check.expect import net_expectation

if TYPE_CHECKING:
    from hpnet.check.expect import LinkExpectation

__all__ = [
    "RDMA_TRANSPORTS",
    "CheckPlan",
    "PlanFacts",
    "StageKind",
    "StagePlan",
    "plan_check",
    "plan_data",
    "sweep",
]

RDMA_TRANSPORTS = frozenset({"ib", "roce", "rdma", "erdma"})


class StageKind(str, enum.Enum):
    INTRA_NODE = "intra-node"
    FAKE_HOSTS = "fake-hosts"
    CPU = "cpu"
    CLUSTER = "cluster"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Sweep:
    sizes_bytes: tuple[int, ...]
    iters: int
    warmup: int


def sweep(mode: str, device: str) -> Sweep:
    """The all_reduce sizes and iterations of a stage.

    >>> sweep("quick", "cpu").sizes_bytes[-1]
    524288
    >>> full = sweep("full", "cuda").sizes_bytes
    >>> full[0], full[-2], full[-1]  # 8 B by 4 to 512 MiB, then 1 GiB as --full promises
    (8, 536870912, 1073741824)
    """
    if device == "cpu":
        return Sweep(sizes_bytes=(1 << 10, 8 << 10, 64 << 10, 512 << 10), iters=10, warmup=2)
    if mode == "full":
        sizes = (*(8 << (2 * i) for i in range(14)), 1 << 30)  # 8 B .. 512 MiB by 4, 1 GiB
        return Sweep(sizes_bytes=sizes, iters=20, warmup=5)
    return Sweep(sizes_bytes=(1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20), iters=20, warmup=5)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class StagePlan:
    """One benchmark of the check: an all_reduce sweep on ``nranks`` ranks."""

    kind: StageKind
    name: str  # as reports show it: "intra-node", "across 2 fake hosts", "cpu"
    device: Literal["cuda", "cpu"]
    nranks: int
    num_gpus: int  # the GPUs the ranks run on (2 ranks on 1 GPU: 1)
    fake_hosts: int  # NCCL hosts the ranks are split into (1: none)
    sweep: Sweep
    #: what NCCL's log must show between the hosts ("ib", "socket"), None: not verified
    expect_net: str | None
    #: the link the bandwidth is judged against
    link: LinkExpectation | None
    verify_log: bool  # whether NCCL's log is read (NCCL stages only)

    @property
    def backend(self) -> str:
        return "nccl" if self.device == "cuda" else "gloo"

    @property
    def directory(self) -> str:
        """The stage's directory in the run's: its rank logs."""
        return self.name.replace(" ", "-")

    @property
    def across_hosts(self) -> bool:
        return self.kind in (StageKind.FAKE_HOSTS, StageKind.CLUSTER)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PlanFacts:
    """What the plan is built from: the node as detected, the environment as resolved."""

    node: str
    profile: str
    transport: str  # what the resolved environment intends: ib, roce, erdma, socket
    device: Literal["cuda", "cpu"]
    num_gpus: int  # GPUs the ranks may use (0 on device cpu)
    nproc: int  # local ranks asked for, or the default (one per GPU, 2 on CPU)
    active_rates_gbit: tuple[float, ...] = ()  # the active RDMA ports' rates
    net_plugin: bool = False  # NCCL_NET_PLUGIN set: its network's name is its own
    intra_link: LinkExpectation | None = None
    environment: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckPlan:
    node: str
    profile: str
    mode: str
    transport: str
    device: Literal["cuda", "cpu"]
    num_gpus: int
    stages: tuple[StagePlan, ...]
    #: the NCCL environment the stages run with (without hpnet's NCCL_DEBUG settings)
    environment: Mapping[str, str]
    notes: tuple[str, ...] = ()


def plan_check(facts: PlanFacts, *, mode: str = "quick") -> CheckPlan:
    """The stages for a node (pure).

    >>> facts = PlanFacts(node="n", profile="auto", transport="socket", device="cuda",
    ...     num_gpus=1, nproc=1)
    >>> [(s.kind.value, s.nranks, s.num_gpus, s.fake_hosts) for s in plan_check(facts).stages]
    [('fake-hosts', 2, 1, 2)]
    """
    stages: list[StagePlan] = []
    notes: list[str] = []
    if facts.device == "cpu":
        stages.append(
            StagePlan(
                kind=StageKind.CPU,
                name="cpu",
                device="cpu",
                nranks=facts.nproc,
                num_gpus=0,
                fake_hosts=1,
                sweep=sweep(mode, "cpu"),
                expect_net=None,
                link=None,
                verify_log=False,
            )
        )
    else:
        nranks = facts.nproc
        if nranks >= 2:
            stages.append(
                StagePlan(
                    kind=StageKind.INTRA_NODE,
                    name="intra-node",
                    device="cuda",
                    nranks=nranks,
                    num_gpus=min(nranks, facts.num_gpus),
                    fake_hosts=1,
                    sweep=sweep(mode, "cuda"),
                    expect_net=None,
                    link=facts.intra_link,
                    verify_log=True,
                )
            )
        else:
            nranks = 2
            notes.append(
                "one GPU: no intra-node collective to measure; two ranks share it as two "
                "NCCL hosts (NCCL_HOSTID) to exercise the network transport"
            )
        stages.append(
            StagePlan(
                kind=StageKind.FAKE_HOSTS,
                name="across 2 fake hosts",
                device="cuda",
                nranks=nranks,
                num_gpus=min(nranks, max(facts.num_gpus, 1)),
                fake_hosts=2,
                sweep=sweep(mode, "cuda"),
                expect_net=expected_net(facts),
                link=(
                    net_expectation(facts.active_rates_gbit)
                    if facts.transport in RDMA_TRANSPORTS
                    else None
                ),
                verify_log=True,
            )
        )
    return CheckPlan(
        node=facts.node,
        profile=facts.profile,
        mode=mode,
        transport=facts.transport,
        device=facts.device,
        num_gpus=facts.num_gpus,
        stages=tuple(stages),
        environment=dict(facts.environment),
        notes=tuple(notes),
    )


def cluster_stage(mode: str, device: str, nranks: int) -> StagePlan:
    """The one stage of ``hpnet check --all``: every rank of the job (``nranks``, the
    launcher's WORLD_SIZE) in one all_reduce sweep, across the job's nodes; what each
    node used towards the others is read from the gathered NCCL logs, against the
    resolved intent, by :mod:`hpnet.check.cluster`.

    >>> stage = cluster_stage("quick", "cuda", 16)
    >>> stage.kind.value, stage.backend, stage.across_hosts, stage.sweep.sizes_bytes[-1]
    ('cluster', 'nccl', True, 268435456)
    """
    cuda = device == "cuda"
    return StagePlan(
        kind=StageKind.CLUSTER,
        name="cluster",
        device="cuda" if cuda else "cpu",
        nranks=nranks,
        num_gpus=nranks if cuda else 0,
        fake_hosts=1,
        sweep=sweep(mode, "cuda" if cuda else "cpu"),
        expect_net=None,
        link=None,
        verify_log=cuda,
    )


def expected_net(facts: PlanFacts) -> str | None:
    """What NCCL's log must name between hosts: IB for an RDMA intent (a plugin names
    its own network), Socket for a socket one."""
    if facts.transport in RDMA_TRANSPORTS and not facts.net_plugin:
        return "ib"
    if facts.transport == "socket":
        return "socket"
    return None


def active_rates(ports: Sequence[tuple[str, float | None]]) -> tuple[float, ...]:
    """The rates of the ports whose state is ACTIVE (state name, rate in Gb/s)."""
    return tuple(float(rate) for state, rate in ports if state == "ACTIVE" and rate)


def plan_data(plan: CheckPlan) -> dict[str, object]:
    """``hpnet check --dry-run --json``: the plan as data (docs/check-schema.md), its
    secret values ``<redacted>``."""
    from hpnet.check.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import envelope  # noqa: PLC0415
    from hpnet.secrets import redact  # noqa: PLC0415

    shown = dataclasses.replace(
        plan, environment={k: redact(k, v) for k, v in plan.environment.items()}
    )
    return envelope(shown, schema_version=SCHEMA_VERSION, dry_run=True)
