"""A simulated cluster that stands in for the collective executor, pure and seeded.

N nodes x R rails, racks of ``group_size`` nodes. A test's busbw per iteration is the
nominal per-rail busbw times the slowest rail path's factor (a ring all_reduce over
all local GPUs runs at its slowest rail), with gaussian noise and occasional small
dips. Planted faults: a slow NIC, a flapping link, GPUDirect RDMA off (slow, and a
``no-gdr`` issue with the line NCCL logs), a rack behind a slow uplink, a slow cluster.

>>> sim = Simulator(Cluster(num_nodes=4, rails=2), seed=1)
>>> iso = sim.isolation()
>>> run(iso, sim).outliers
()
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import TypeAlias

from hpnet.isolate.engine import Isolation
from hpnet.isolate.model import (
    Baseline,
    ConfigIssue,
    Fault,
    IsolateVerdict,
    Measurement,
    Outlier,
    OutlierKind,
    Test,
)
from hpnet.jsonout import to_data

__all__ = [
    "SCENARIOS",
    "Cluster",
    "FactDrift",
    "FlappingLink",
    "GdrOff",
    "Simulator",
    "SlowCluster",
    "SlowGroup",
    "SlowNic",
    "plant",
    "run",
    "score",
    "trial",
]

SCENARIOS = ("clean", "slow-nic", "flapping", "no-gdr", "slow-rack", "slow-cluster", "mix")

GDR_FIX = (
    "load nvidia_peermem (or use NCCL >= 2.19 with dma-buf on a kernel that has it) and "
    "check NCCL_NET_GDR_LEVEL; `hpnet doctor` checks GPUDirect RDMA"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Cluster:
    num_nodes: int
    rails: int = 8
    nominal_gbps: float = 48.0  # all_reduce busbw of one 400 Gb/s NIC
    group_size: int = 32
    noise: float = 0.025  # gaussian sigma per iteration, as a fraction
    dip_probability: float = 0.02  # an iteration 5-15% low (a neighbour's burst)
    iterations: int = 20

    def node(self, i: int) -> str:
        return f"node{i:04d}"

    def group(self, i: int) -> str:
        return f"rack{i // self.group_size:03d}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SlowNic:
    node: str
    rail: int
    factor: float = 0.5

    def matches(self, o: Outlier) -> bool:
        return o.kind is OutlierKind.RAIL and (o.node, o.rail) == (self.node, self.rail)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class FlappingLink:
    node: str
    rail: int
    probability: float = 0.4  # of a flap starting at an iteration
    burst: int = 2  # iterations a flap lasts (a link down is retrained over seconds)
    fraction: float = 0.1  # of the nominal bandwidth it drops to

    def matches(self, o: Outlier) -> bool:
        return o.kind is OutlierKind.RAIL and (o.node, o.rail) == (self.node, self.rail)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GdrOff:
    node: str
    factor: float = 0.6

    def matches(self, o: Outlier) -> bool:
        return o.fault is Fault.CONFIGURATION and o.node == self.node and o.code == "no-gdr"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SlowGroup:
    group: str
    factor: float = 0.5  # of tests crossing the group's uplink

    def matches(self, o: Outlier) -> bool:
        return o.kind is OutlierKind.GROUP and o.group == self.group


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class SlowCluster:
    factor: float = 0.8

    def matches(self, o: Outlier) -> bool:
        return o.kind is OutlierKind.CLUSTER


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class FactDrift:
    """A node whose facts differ (found by round 0, no outlier of its own)."""

    node: str
    key: str
    value: str

    def matches(self, o: Outlier) -> bool:
        return False


PlantedFault: TypeAlias = SlowNic | FlappingLink | GdrOff | SlowGroup | SlowCluster | FactDrift


class Simulator:
    """Measures tests on a simulated cluster with planted faults."""

    def __init__(
        self, cluster: Cluster, faults: Sequence[PlantedFault] = (), *, seed: int = 0
    ) -> None:
        self.cluster = cluster
        self.faults = tuple(faults)
        self.rng = random.Random(seed)  # noqa: S311 - simulated noise
        self.nodes = [cluster.node(i) for i in range(cluster.num_nodes)]
        self.groups = {cluster.node(i): cluster.group(i) for i in range(cluster.num_nodes)}
        self._rail = {(f.node, f.rail): f for f in self.faults if isinstance(f, SlowNic)}
        self._flap = {(f.node, f.rail): f for f in self.faults if isinstance(f, FlappingLink)}
        self._gdr = {f.node: f for f in self.faults if isinstance(f, GdrOff)}
        self._slow_groups = {f.group: f.factor for f in self.faults if isinstance(f, SlowGroup)}
        self._cluster = 1.0
        for f in self.faults:
            if isinstance(f, SlowCluster):
                self._cluster *= f.factor

    def isolation(self, *, baseline: Baseline | None = None, seed: int = 0) -> Isolation:
        return Isolation(
            self.nodes, self.cluster.rails, groups=self.groups, baseline=baseline, seed=seed
        )

    def facts(self) -> dict[str, dict[str, str]]:
        """Each node's facts, as round 0 would gather them."""
        out: dict[str, dict[str, str]] = {}
        for node in self.nodes:
            facts = {
                "hostname": node,
                "versions.nccl": "2.21.5",
                "versions.driver": "550.54.15",
                "env.NCCL_IB_HCA": "mlx5",
                "limits.memlock": "unlimited",
            }
            for r in range(self.cluster.rails):
                facts[f"rail.{r}.nic"] = f"mlx5_{r}:1"
                facts[f"nic.mlx5_{r}.rate"] = "400"
            out[node] = facts
        for f in self.faults:
            if isinstance(f, FactDrift):
                out[f.node][f.key] = f.value
        return out

    def measure(self, tests: Sequence[Test]) -> list[Measurement]:
        return [self._measure(t) for t in tests]

    def _measure(self, test: Test) -> Measurement:
        c = self.cluster
        rails = range(c.rails) if test.rail is None else (test.rail,)
        factor = self._cluster * self._uplink(test.a, test.b)
        for node in (test.a, test.b):
            if node in self._gdr:
                factor *= self._gdr[node].factor
        slow = min(self._rail_factor(n, r) for n in (test.a, test.b) for r in rails)
        flaps = [
            self._flap[(n, r)] for n in (test.a, test.b) for r in rails if (n, r) in self._flap
        ]
        samples = []
        down = 0  # iterations left in the current flap
        for _ in range(c.iterations):
            value = c.nominal_gbps * factor * slow * self.rng.gauss(1.0, c.noise)
            if self.rng.random() < c.dip_probability:
                value *= self.rng.uniform(0.85, 0.95)
            if down == 0 and any(self.rng.random() < f.probability for f in flaps):
                down = max(f.burst for f in flaps)
            if down:
                down -= 1
                value = min(value, c.nominal_gbps * min(f.fraction for f in flaps))
            samples.append(round(max(value, 0.0), 3))
        return Measurement(test=test, samples_gbps=tuple(samples), issues=self._issues(test))

    def _rail_factor(self, node: str, rail: int) -> float:
        f = self._rail.get((node, rail))
        return f.factor if f is not None else 1.0

    def _uplink(self, a: str, b: str) -> float:
        ga, gb = self.groups[a], self.groups[b]
        if ga == gb:
            return 1.0
        return self._slow_groups.get(ga, 1.0) * self._slow_groups.get(gb, 1.0)

    def _issues(self, test: Test) -> tuple[ConfigIssue, ...]:
        rails = range(self.cluster.rails) if test.rail is None else (test.rail,)
        return tuple(
            ConfigIssue(
                node=node,
                rail=None,
                code="no-gdr",
                what=f"GPUDirect RDMA is off on {node}: NIC traffic is staged through host memory",
                evidence=tuple(
                    # net_ib.cc logs this per HCA when nvidia_peermem / dma-buf is missing
                    f"{node}:4242:4310 [{r}] NCCL INFO NET/IB : GPU Direct RDMA Disabled for "
                    f"HCA {r} 'mlx5_{r}' (no module)"
                    for r in rails
                ),
                fix=GDR_FIX,
            )
            for node in (test.a, test.b)
            if node in self._gdr
        )


def run(isolation: Isolation, simulator: Simulator, *, drift: bool = True) -> IsolateVerdict:
    """Drive ``isolation`` with ``simulator`` as its executor, round 0 included."""
    if drift:
        isolation.drift(simulator.facts())
    while (rnd := isolation.next_round()) is not None:
        isolation.record(simulator.measure(rnd.tests))
    return isolation.verdict()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Score:
    localised: bool  # every planted fault named exactly (its rail, its group...)
    #: rail faults named only as their node (the right node, not the NIC: a flapping
    #: link that did not flap during its rail test); neither localised nor false
    node_only: int
    false_positives: int  # outliers no planted fault explains
    rounds: int  # counting round 0
    collectives: int


def _node_of(o: Outlier, faults: Sequence[PlantedFault]) -> bool:
    return o.kind is OutlierKind.NODE and any(
        isinstance(f, (SlowNic, FlappingLink)) and f.node == o.node for f in faults
    )


def score(verdict: IsolateVerdict, faults: Sequence[PlantedFault]) -> Score:
    """How a verdict compares with the faults planted."""
    named = [f for f in faults if not isinstance(f, FactDrift)]
    localised = all(any(f.matches(o) for o in verdict.outliers) for f in named)
    unexplained = [o for o in verdict.outliers if not any(f.matches(o) for f in named)]
    coarse = sum(_node_of(o, named) and o.fault is Fault.HARDWARE for o in unexplained)
    return Score(
        localised=localised,
        node_only=coarse,
        false_positives=len(unexplained) - coarse,
        rounds=len(verdict.rounds),
        collectives=verdict.collectives,
    )


def plant(scenario: str, cluster: Cluster, seed: int) -> tuple[PlantedFault, ...]:
    """The faults of a named scenario (:data:`SCENARIOS`), on nodes chosen by ``seed``;
    "mix" plants a slow NIC, a flapping link, GPUDirect off and a slow rack, the node
    faults outside that rack."""
    rng = random.Random(seed)  # noqa: S311 - simulated placement
    num_groups = -(-cluster.num_nodes // cluster.group_size)
    rack = rng.randrange(num_groups)
    outside = [
        i for i in range(cluster.num_nodes) if scenario != "mix" or i // cluster.group_size != rack
    ]
    a, b, c = (cluster.node(i) for i in rng.sample(outside, 3))
    rail, other = rng.randrange(cluster.rails), rng.randrange(cluster.rails)
    faults: dict[str, tuple[PlantedFault, ...]] = {
        "clean": (),
        "slow-nic": (SlowNic(node=a, rail=rail),),
        "flapping": (FlappingLink(node=a, rail=rail),),
        "no-gdr": (GdrOff(node=a),),
        "slow-rack": (SlowGroup(group=cluster.group(rack * cluster.group_size)),),
        "slow-cluster": (SlowCluster(factor=0.85),),
        "mix": (
            SlowNic(node=a, rail=rail),
            FlappingLink(node=b, rail=other),
            GdrOff(node=c),
            SlowGroup(group=cluster.group(rack * cluster.group_size)),
        ),
    }
    return faults[scenario]


def trial(cluster: Cluster, faults: Sequence[PlantedFault], seed: int) -> Score:
    """One isolation run on a simulated cluster, scored; with a slow cluster planted, a
    clean run of the same cluster (another seed) is the baseline."""
    baseline = None
    if any(isinstance(f, SlowCluster) for f in faults):
        clean = Simulator(cluster, seed=seed + 1_000_003)
        baseline = Baseline.from_json(to_data(run(clean.isolation(seed=seed + 1), clean)))
    sim = Simulator(cluster, faults, seed=seed)
    return score(run(sim.isolation(baseline=baseline, seed=seed), sim), faults)
