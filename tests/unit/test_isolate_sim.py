"""hpnet.isolate against simulated clusters with planted faults: every fault localised
in at most 4 rounds (drift included), no false positive, over many seeds."""

from __future__ import annotations

import pytest

from hpnet.isolate import Fault, OutlierKind
from hpnet.isolate.simulate import (
    SCENARIOS,
    Cluster,
    FactDrift,
    GdrOff,
    Simulator,
    SlowGroup,
    SlowNic,
    plant,
    run,
    score,
    trial,
)

BIG = Cluster(num_nodes=1024, rails=8)
#: (cluster, seeds): the 1,024-node cluster with few seeds, smaller ones with more
SIZES = [
    pytest.param(BIG, range(2), id="1024x8"),
    pytest.param(Cluster(num_nodes=127, rails=8, group_size=16), range(12), id="127x8-odd"),
    pytest.param(Cluster(num_nodes=64, rails=4, group_size=8), range(20), id="64x4"),
]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize(("cluster", "seeds"), SIZES)
def test_each_fault_localised_without_false_positive(
    scenario: str, cluster: Cluster, seeds: range
) -> None:
    for seed in seeds:
        faults = plant(scenario, cluster, seed)
        got = trial(cluster, faults, seed)
        assert got.localised, (scenario, seed, faults)
        assert got.false_positives == 0, (scenario, seed, faults)
        assert got.rounds <= 4, (scenario, seed)


def test_clean_clusters_have_no_outlier_over_many_seeds() -> None:
    for seed in range(40):
        cluster = Cluster(num_nodes=96 + seed, rails=8, group_size=16)
        sim = Simulator(cluster, seed=seed)
        verdict = run(sim.isolation(seed=seed), sim)
        assert verdict.outliers == (), seed
        assert verdict.drift == ()
        # round 0 and the pairs; an odd N adds the leftover's test
        assert len(verdict.rounds) == 2 + cluster.num_nodes % 2


def test_the_mix_names_each_fault_with_its_evidence() -> None:
    faults = plant("mix", BIG, 7)
    sim = Simulator(BIG, faults, seed=7)
    verdict = run(sim.isolation(seed=7), sim)
    assert score(verdict, faults).localised
    by_kind = {(o.kind, o.fault): o for o in verdict.outliers}
    rack = next(f for f in faults if isinstance(f, SlowGroup))
    group = by_kind[(OutlierKind.GROUP, Fault.HARDWARE)]
    assert group.group == rack.group and "32 of the 32 nodes" in group.evidence[0]
    nic = next(f for f in faults if isinstance(f, SlowNic))
    rail = next(o for o in verdict.outliers if o.node == nic.node)
    assert rail.nic == f"mlx5_{nic.rail}:1" and "slow again" in " ".join(rail.evidence)
    gdr = next(f for f in faults if isinstance(f, GdrOff))
    config = by_kind[(OutlierKind.NODE, Fault.CONFIGURATION)]
    assert config.node == gdr.node and config.code == "no-gdr"
    assert any("GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" in e for e in config.evidence)
    # 512 pairs, then a few dozen re-pairs and rails: far from N tests per node
    assert verdict.collectives < 512 + 32 * 2 + 40 * 8


def test_drift_found_in_round_zero_on_a_big_cluster() -> None:
    faults = (FactDrift(node="node0042", key="versions.nccl", value="2.18.3"),)
    sim = Simulator(BIG, faults, seed=3)
    verdict = run(sim.isolation(seed=3), sim)
    assert verdict.outliers == ()
    (d,) = verdict.drift
    assert (d.node, d.value, d.majority_value, d.majority_count) == (
        "node0042",
        "2.18.3",
        "2.21.5",
        1023,
    )


def test_simulation_is_deterministic() -> None:
    def once() -> object:
        sim = Simulator(BIG, plant("mix", BIG, 5), seed=5)
        return run(sim.isolation(seed=5), sim)

    assert once() == once()
