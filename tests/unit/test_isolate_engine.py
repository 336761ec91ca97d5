"""hpnet.isolate's decision rules on small hand-built measurement sets."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from hpnet.cluster.drift import drift
from hpnet.errors import InputError
from hpnet.isolate import (
    Baseline,
    ConfigIssue,
    DriftKind,
    Fault,
    IsolateVerdict,
    Isolation,
    Measurement,
    OutlierKind,
    Test,
    Thresholds,
)
from hpnet.isolate.pairing import cross_pairs
from hpnet.isolate.scoring import PairState, judge, reference
from hpnet.jsonout import dumps, to_data

NOMINAL = 48.0
NODES = [f"n{i}" for i in range(8)]

Rule = Callable[[Test], "Measurement | float"]


def flat(test: Test, gbps: float, *, n: int = 10) -> Measurement:
    """Samples around ``gbps`` with 1% wiggle, deterministic."""
    return Measurement(
        test=test, samples_gbps=tuple(gbps * (1 + 0.01 * ((i % 3) - 1)) for i in range(n))
    )


def drive(iso: Isolation, rule: Rule) -> IsolateVerdict:
    while (rnd := iso.next_round()) is not None:
        out = []
        for t in rnd.tests:
            got = rule(t)
            out.append(got if isinstance(got, Measurement) else flat(t, got))
        iso.record(out)
    return iso.verdict()


def slow_nodes(
    factors: dict[str, float], rails: dict[tuple[str, int], float] | None = None
) -> Rule:
    """Node factors apply to every test of the node; rail factors to that rail (and to
    whole-node tests, which run at their slowest rail)."""
    rails = rails or {}

    def rule(t: Test) -> float:
        f = min(factors.get(t.a, 1.0), factors.get(t.b, 1.0))
        for (node, r), rf in rails.items():
            if node in (t.a, t.b) and t.rail in (None, r):
                f = min(f, rf)
        return NOMINAL * f

    return rule


def kinds(v: IsolateVerdict) -> list[tuple[str, str, str | None, int | None]]:
    return [(o.kind.value, o.fault.value, o.node, o.rail) for o in v.outliers]


# -- round 0: drift ----------------------------------------------------------------------
def test_drift_names_the_node_against_the_strict_majority() -> None:
    facts = {n: {"versions.nccl": "2.21.5", "hostname": n, "nic.mlx5_0.addr": n} for n in NODES}
    facts["n3"] = {**facts["n3"], "versions.nccl": "2.18.3"}
    (d,) = drift(facts)
    assert (d.kind, d.key, d.node, d.value) == (DriftKind.DIFFERS, "versions.nccl", "n3", "2.18.3")
    assert (d.majority_value, d.majority_count, d.num_nodes) == ("2.21.5", 7, 8)


def test_drift_without_a_majority_is_a_split_blaming_nobody() -> None:
    facts = {n: {"limits.memlock": "unlimited" if i < 4 else "65536"} for i, n in enumerate(NODES)}
    (d,) = drift(facts)
    assert d.kind is DriftKind.SPLIT and d.node is None
    assert d.counts == (("65536", 4), ("unlimited", 4))


def test_drift_ignores_the_keys_declared_per_node() -> None:
    facts = {n: {"boot.id": n, "env.NCCL_IB_HCA": "mlx5"} for n in NODES[:3]}
    iso = Isolation(NODES[:3], rails=1)
    assert [d.kind for d in iso.drift(facts)] == [DriftKind.SPLIT]
    assert iso.drift(facts, per_node_keys=("boot.*",)) == ()


def test_drift_is_evidence_on_the_node_it_names() -> None:
    facts = {n: {"nic.mlx5_2.rate": "400", "rail.2.nic": "mlx5_2:1"} for n in NODES}
    facts["n5"]["nic.mlx5_2.rate"] = "200"
    iso = Isolation(NODES, rails=4)
    iso.drift(facts)
    v = drive(iso, slow_nodes({}, {("n5", 2): 0.5}))
    (o,) = v.outliers
    assert (o.kind, o.node, o.rail, o.nic) == (OutlierKind.RAIL, "n5", 2, "mlx5_2:1")
    assert any("nic.mlx5_2.rate=200 where 7 of 8 nodes have 400" in e for e in o.evidence)
    assert v.rounds[0].name == "drift"


# -- scoring -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("samples", "error", "status"),
    [
        ((48.0, 47.5, 48.4), None, PairState.OK),
        ((41.0, 41.2, 41.1), None, PairState.SLOW),  # z -4.9 with the 3% floor
        ((43.0, 43.1, 42.9), None, PairState.OK),  # z -3.5
        ((48.0, 47.9, 48.1, 20.0, 21.0), None, PairState.UNSTABLE),  # 2 iterations < 0.5 x
        ((48.0, 47.9, 48.1, 48.0, 20.0), None, PairState.OK),  # one is a straggler
        ((), "NCCL error: remote process exited", PairState.ERROR),
    ],
)
def test_judge_rules(samples: tuple[float, ...], error: str | None, status: PairState) -> None:
    ref = reference([48.0] * 20 + [47.8, 48.2], floor=0.03, label="cluster")
    assert ref is not None and ref.scale_gbps == pytest.approx(1.44)
    m = Measurement(test=Test(round=1, a="a", b="b"), samples_gbps=samples, error=error)
    assert judge(m, [ref], Thresholds()).status is status


def test_fraction_rule_catches_a_drop_a_noisy_cluster_hides() -> None:
    noisy = reference([30.0, 40.0, 50.0, 60.0, 48.0, 36.0], floor=0.03, label="cluster")
    assert noisy is not None
    m = Measurement(test=Test(round=1, a="a", b="b"), samples_gbps=(33.0,))
    assert noisy.z(33.0) > -4
    assert judge(m, [noisy], Thresholds()).status is PairState.SLOW


# -- rounds ------------------------------------------------------------------------------
def test_a_clean_cluster_has_no_outlier_after_one_round() -> None:
    iso = Isolation(NODES, rails=8)
    v = drive(iso, slow_nodes({}))
    assert v.outliers == () and v.collectives == 4
    assert [r.number for r in v.rounds] == [1]
    assert v.cluster_median_gbps == pytest.approx(NOMINAL)


def test_pairs_are_disjoint_deterministic_and_cross_groups() -> None:
    groups = {n: "A" if i < 4 else "B" for i, n in enumerate(NODES)}
    first = Isolation(NODES, rails=8, groups=groups, seed=3).next_round()
    again = Isolation(NODES, rails=8, groups=groups, seed=3).next_round()
    assert first == again and first is not None
    used = [n for t in first.tests for n in (t.a, t.b)]
    assert sorted(used) == sorted(NODES)
    assert all(groups[t.a] != groups[t.b] for t in first.tests)


def test_odd_n_tests_the_leftover_with_a_good_node() -> None:
    nodes = NODES[:5]
    pairs, leftover = cross_pairs(nodes, {}, 0)
    assert leftover is not None and len(pairs) == 2
    iso = Isolation(nodes, rails=2)
    v = drive(iso, slow_nodes({leftover: 0.5}))
    (o,) = v.outliers
    assert (o.kind, o.node) == (OutlierKind.NODE, leftover)
    second = [p for p in v.pairs if p.round == 2]
    assert len(second) == 1 and leftover in (second[0].a, second[0].b)
    assert max(r.number for r in v.rounds) == 3


def test_odd_n_clean_leftover_is_fine() -> None:
    v = drive(Isolation(NODES[:7], rails=2), slow_nodes({}))
    assert v.outliers == () and v.collectives == 4


def test_re_pair_decides_the_side() -> None:
    iso = Isolation(NODES, rails=4)
    v = drive(iso, slow_nodes({"n6": 0.6}))
    assert kinds(v) == [("node", "hardware", "n6", None)]
    (o,) = v.outliers
    assert any("slow again" in e for e in o.evidence)
    assert any("rails alike" in e for e in o.evidence)


def test_both_sides_slow_are_both_bad() -> None:
    iso = Isolation(NODES, rails=2)
    pair = next(t for t in iso.next_round().tests)  # type: ignore[union-attr]
    v = drive(iso, slow_nodes({pair.a: 0.5, pair.b: 0.5}))
    assert sorted(o.node for o in v.outliers) == sorted([pair.a, pair.b])  # type: ignore[type-var]


def test_a_link_when_both_sides_are_fine_with_good_partners() -> None:
    iso = Isolation(NODES, rails=4)
    first = iso.next_round()
    assert first is not None
    a, b = first.tests[0].a, first.tests[0].b

    def rule(t: Test) -> float:
        between = {t.a, t.b} == {a, b}
        return NOMINAL * (0.4 if between and t.rail in (None, 1) else 1.0)

    v = drive(iso, rule)
    (o,) = v.outliers
    assert (o.kind, o.node, o.peer, o.rail) == (OutlierKind.LINK, a, b, 1)


@pytest.mark.parametrize("rails", [1, 4])
def test_a_link_slow_on_every_rail_is_confirmed_against_a_control_pair(rails: int) -> None:
    iso = Isolation(NODES, rails=rails)
    first = iso.next_round()
    assert first is not None
    a, b = first.tests[0].a, first.tests[0].b
    v = drive(iso, lambda t: NOMINAL * (0.5 if {t.a, t.b} == {a, b} else 1.0))
    (o,) = v.outliers
    assert (o.kind, o.node, o.peer, o.rail) == (OutlierKind.LINK, a, b, None)
    assert any("slow again" in e for e in o.evidence)
    third = [p for p in v.pairs if p.round == 3]
    assert len(third) == 2 * rails  # the link and the control pair, rail by rail


def test_a_dip_of_round_one_that_does_not_come_back_is_no_link() -> None:
    iso = Isolation(NODES, rails=2)
    first = iso.next_round()
    assert first is not None
    a, b = first.tests[0].a, first.tests[0].b
    v = drive(iso, lambda t: NOMINAL * (0.5 if t.round == 1 and {t.a, t.b} == {a, b} else 1.0))
    assert v.outliers == ()
    assert "did not come back" in v.rounds[-1].findings[-1]


def test_one_rail_nodes_are_not_split_further() -> None:
    v = drive(Isolation(NODES, rails=1), slow_nodes({"n4": 0.3}))
    assert kinds(v) == [("node", "hardware", "n4", None)]
    assert [r.number for r in v.rounds] == [1, 2]


def broken(nodes: set[str]) -> Rule:
    """Tests with any of ``nodes`` fail (failed tests stay out of the cluster median)."""

    def rule(t: Test) -> Measurement | float:
        if nodes & {t.a, t.b}:
            return Measurement(test=t, samples_gbps=(), error="NCCL WARN NET/IB : timeout")
        return NOMINAL

    return rule


def test_short_of_good_nodes_one_side_of_each_pair_goes_first() -> None:
    iso = Isolation(NODES[:6], rails=1)
    first = iso.next_round()
    assert first is not None
    bad = {first.tests[0].a, first.tests[1].a}
    v = drive(iso, broken(bad))
    assert {(o.kind, o.node) for o in v.outliers} == {(OutlierKind.NODE, n) for n in bad}


def test_a_pair_nobody_could_re_test_is_reported_unresolved() -> None:
    iso = Isolation(NODES[:6], rails=1)
    first = iso.next_round()
    assert first is not None
    v = drive(iso, broken({first.tests[0].b, first.tests[1].b}))
    assert [(o.kind, o.node, o.peer) for o in v.outliers] == [
        (OutlierKind.LINK, t.a, t.b) for t in first.tests[:2]
    ]
    assert all("no node proven good was left" in o.evidence[-1] for o in v.outliers)
    # both sides of a pair drift from the majority: which one is not known, and each
    # side's drift is quoted under its name
    a, b = first.tests[0].a, first.tests[0].b
    facts = {n: {"env.NCCL_IB_HCA": "mlx5"} for n in NODES[:6]}
    facts[a], facts[b] = {"env.NCCL_IB_HCA": "mlx5_0"}, {"env.NCCL_IB_HCA": "mlx5_1"}
    iso = Isolation(NODES[:6], rails=1)
    iso.drift(facts)
    v = drive(iso, broken({first.tests[0].b, first.tests[1].b}))
    (o,) = [o for o in v.outliers if o.node == a]
    assert (o.kind, o.peer) == (OutlierKind.LINK, b)
    assert {line.split(":")[0] for line in o.evidence if ": drift:" in line} == {a, b}


def test_an_unresolved_pair_with_one_drifted_side_names_that_side_s_settings() -> None:
    """3 fake hosts on an H100, host1 given other NCCL socket settings: its one round-1
    test failed, the third host sat out round 1, no node was proven good. The pair was
    one "link host2" outlier with host1's drift among host2's evidence; the drift says
    which side: host1's configuration, its fix the majority's values."""
    nodes = ["host0", "host1", "host2"]
    pairs, odd = cross_pairs(nodes, {}, 0)
    (pair,) = pairs
    drifted = pair[1]
    facts = {n: {"env.NCCL_SOCKET_NTHREADS": "4"} for n in nodes}
    facts[drifted] = {"env.NCCL_SOCKET_NTHREADS": "1"}
    iso = Isolation(nodes, rails=1)
    iso.drift(facts)
    v = drive(iso, broken({drifted}))
    assert kinds(v) == [("node", "configuration", drifted, None)]
    (o,) = v.outliers
    assert o.code == "drift" and "NCCL_SOCKET_NTHREADS=4 (it has 1)" in o.fix
    assert any(line.startswith("round 1:") for line in o.evidence)
    # three values, no majority: no side drifts, which one is not known: unresolved
    facts[pair[0]] = {"env.NCCL_SOCKET_NTHREADS": "2"}
    iso = Isolation(nodes, rails=1)
    iso.drift(facts)
    v = drive(iso, broken({drifted}))
    assert [(o.kind, o.node, o.peer) for o in v.outliers] == [(OutlierKind.LINK, *pair)]
    assert odd not in {o.node for o in v.outliers}


def test_a_failed_test_is_suspect() -> None:
    iso = Isolation(NODES, rails=2)

    def rule(t: Test) -> Measurement | float:
        if "n2" in (t.a, t.b):
            return Measurement(test=t, samples_gbps=(), error="NCCL WARN Net : Connection closed")
        return NOMINAL

    v = drive(iso, rule)
    assert kinds(v) == [("node", "hardware", "n2", None)]


def test_rail_named_with_its_nic_from_facts() -> None:
    iso = Isolation(NODES, rails=8)
    iso.drift({n: {f"rail.{r}.nic": f"mlx5_{r}:1" for r in range(8)} for n in NODES})
    v = drive(iso, slow_nodes({}, {("n1", 3): 0.5}))
    (o,) = v.outliers
    assert (o.kind, o.node, o.rail, o.nic) == (OutlierKind.RAIL, "n1", 3, "mlx5_3:1")
    assert "mlx5_3:1" in o.fix
    assert len(v.rounds) == 4  # drift, pairs, re-pair, rails


def test_flapping_rail_is_named_by_its_instability() -> None:
    def rule(t: Test) -> Measurement | float:
        if "n4" in (t.a, t.b) and t.rail in (None, 6):
            return Measurement(test=t, samples_gbps=(48.0, 47.8, 4.0, 4.1, 48.1, 48.2))
        return NOMINAL

    v = drive(Isolation(NODES, rails=8), rule)
    (o,) = v.outliers
    assert (o.kind, o.node, o.rail) == (OutlierKind.RAIL, "n4", 6)
    assert "flaps" in o.fix


def test_a_flap_that_stays_quiet_in_round_three_names_the_node_rail_unknown() -> None:
    def rule(t: Test) -> Measurement | float:
        if "n4" in (t.a, t.b) and t.round < 3:
            return Measurement(test=t, samples_gbps=(48.0, 47.8, 4.0, 4.1, 48.1, 48.2))
        return NOMINAL

    (o,) = drive(Isolation(NODES, rails=8), rule).outliers
    assert (o.kind, o.node, o.rail) == (OutlierKind.NODE, "n4", None)
    assert "no rail dropped this time" in o.evidence[-1]


def test_group_named_instead_of_its_nodes() -> None:
    nodes = [f"n{i:02d}" for i in range(24)]
    groups = {n: f"rack{i // 6}" for i, n in enumerate(nodes)}
    slow_rack = {n for n in nodes if groups[n] == "rack2"}

    def rule(t: Test) -> float:
        crosses = (t.a in slow_rack) != (t.b in slow_rack)
        return NOMINAL * (0.5 if crosses else 1.0)

    v = drive(Isolation(nodes, rails=4, groups=groups), rule)
    (o,) = v.outliers
    assert (o.kind, o.group) == (OutlierKind.GROUP, "rack2")
    assert "6 of the 6 nodes of rack2" in o.evidence[0]


def test_two_bad_nodes_of_a_big_group_stay_nodes() -> None:
    groups = {n: "rack0" for n in NODES}
    v = drive(Isolation(NODES, rails=2, groups=groups), slow_nodes({"n1": 0.5, "n6": 0.5}))
    assert {o.kind for o in v.outliers} == {OutlierKind.NODE}


def test_configuration_fault_is_not_also_hardware() -> None:
    issue = ConfigIssue(
        node="n3",
        rail=None,
        code="socket-fallback",
        what="NCCL fell back to sockets on n3",
        evidence=("n3:99:99 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.3<0>",),
        fix="set NCCL_IB_HCA to the node's RDMA devices",
    )

    def rule(t: Test) -> Measurement:
        if "n3" in (t.a, t.b):
            m = flat(t, 0.1 * NOMINAL)
            return Measurement(test=t, samples_gbps=m.samples_gbps, issues=(issue,))
        return flat(t, NOMINAL)

    v = drive(Isolation(NODES, rails=8), rule)
    (o,) = v.outliers
    assert (o.kind, o.fault, o.node, o.code) == (
        OutlierKind.NODE,
        Fault.CONFIGURATION,
        "n3",
        "socket-fallback",
    )
    assert o.fix == issue.fix and issue.evidence[0] in o.evidence
    # the partner was re-paired and cleared; n3 was not re-paired as hardware
    assert all(p.a != "n3" for p in v.pairs if p.round == 2)


def test_baseline_catches_a_uniformly_slow_cluster() -> None:
    clean = drive(Isolation(NODES, rails=2), slow_nodes({}))
    base = Baseline.from_json(json.loads(dumps(clean)))
    assert base.cluster_median_gbps == pytest.approx(NOMINAL)
    uniform = slow_nodes(dict.fromkeys(NODES, 0.85))
    assert drive(Isolation(NODES, rails=2), uniform).outliers == ()
    v = drive(Isolation(NODES, rails=2, baseline=base), uniform)
    (o,) = v.outliers
    assert o.kind is OutlierKind.CLUSTER and "15% below" in o.evidence[0]
    assert v.baseline_median_gbps == pytest.approx(NOMINAL)


def test_baseline_pair_catches_a_pair_the_round_cannot() -> None:
    clean = drive(Isolation(NODES, rails=2), slow_nodes({}))
    base = Baseline.from_json(to_data(clean))
    # n0's pair 20% slower than before, the cluster otherwise 5% slower: inside the
    # cluster margin, and 16% below the round's median only with the baseline's scale
    rule = slow_nodes({**dict.fromkeys(NODES, 0.95), "n0": 0.8})
    v = drive(Isolation(NODES, rails=2, baseline=base), rule)
    assert kinds(v) == [("node", "hardware", "n0", None)]


def test_baseline_reads_json_text_and_rejects_garbage() -> None:
    text = '{"schema_version": 1, "cluster_median_gbps": 40, "pairs": []}'
    assert Baseline.from_json(text).cluster_median_gbps == 40.0
    for bad in (
        "[]",
        "{",
        '{"cluster_median_gbps": "fast"}',
        '{"cluster_median_gbps": 1, "pairs": 3}',
    ):
        with pytest.raises(InputError) as e:
            Baseline.from_json(bad)
        assert e.value.code == "bad-baseline"


def test_record_rejects_foreign_tests_and_fills_missing_ones() -> None:
    iso = Isolation(NODES[:4], rails=1)
    rnd = iso.next_round()
    assert rnd is not None and iso.next_round() == rnd
    with pytest.raises(InputError):
        iso.record([flat(Test(round=1, a="x", b="y"), 1.0)])
    iso.record([flat(rnd.tests[0], NOMINAL)])
    v = iso.verdict()
    assert [p.error for p in v.pairs] == [None, "no result"]


def test_bad_inputs() -> None:
    with pytest.raises(InputError):
        Isolation(["a"], rails=8)
    with pytest.raises(InputError):
        Isolation(["a", "a"], rails=8)
    with pytest.raises(InputError):
        Isolation(["a", "b"], rails=0)
    with pytest.raises(InputError):
        Isolation(["a", "b"], rails=1).record([])


def test_verdict_json_has_the_matrix() -> None:
    v = drive(Isolation(NODES, rails=2), slow_nodes({"n2": 0.5}))
    data = to_data(v)
    assert isinstance(data, dict)
    assert data["outliers"][0]["kind"] == "node"
    assert {(p["a"], p["b"]) for p in data["pairs"] if p["round"] == 1} == {
        (t.a, t.b)
        for t in Isolation(NODES, rails=2).next_round().tests  # type: ignore[union-attr]
    }


def test_a_slow_node_whose_settings_drift_is_a_configuration_fault() -> None:
    """The GPU machine's case (benchmarks/device_isolate.sh): one fake host with its own
    NCCL settings, one of them set there only; its tests fail. The verdict is a
    configuration fault on that host whose fix is the majority's setting, not a bad node."""
    nodes = [f"h{i}" for i in range(6)]
    base = {"env.NCCL_SOCKET_NTHREADS": "4", "versions.nccl": "2.28.9"}
    facts = {n: dict(base) for n in nodes}
    facts["h2"] = {**base, "env.NCCL_SOCKET_NTHREADS": "1", "env.NCCL_BUFFSIZE": "65536"}
    iso = Isolation(nodes, rails=1)
    keys = {(d.node, d.key, d.value, d.majority_value) for d in iso.drift(facts)}
    assert keys == {
        ("h2", "env.NCCL_BUFFSIZE", "65536", "<unset>"),
        ("h2", "env.NCCL_SOCKET_NTHREADS", "1", "4"),
    }
    verdict = drive(iso, slow_nodes({"h2": 0.3}))
    assert kinds(verdict) == [("node", "configuration", "h2", None)]
    (outlier,) = verdict.outliers
    assert outlier.code == "drift"
    assert "unset NCCL_BUFFSIZE (it has 65536)" in outlier.fix
    assert "NCCL_SOCKET_NTHREADS=4 (it has 1)" in outlier.fix
    assert any("GB/s" in line for line in outlier.evidence)  # the numbers come with it


def test_drift_alone_on_a_fast_node_is_no_outlier() -> None:
    nodes = [f"h{i}" for i in range(4)]
    facts = {n: {"env.NCCL_DEBUG": "WARN"} for n in nodes}
    facts["h1"] = {"env.NCCL_DEBUG": "INFO"}
    iso = Isolation(nodes, rails=1)
    assert len(iso.drift(facts)) == 1
    verdict = drive(iso, slow_nodes({}))
    assert verdict.outliers == () and len(verdict.drift) == 1


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_every_test_failing_is_never_a_pass(n: int) -> None:
    """No node proven good, so nothing to re-pair with: each failed pair stays an
    outlier (unresolved), with its error as evidence; the verdict is not ok."""
    iso = Isolation([f"n{i}" for i in range(n)], rails=8)
    verdict = drive(
        iso, lambda t: Measurement(test=t, samples_gbps=(), error="NCCL error: remote closed")
    )
    assert not verdict.ok and len(verdict.outliers) == n // 2
    for outlier in verdict.outliers:
        assert any("remote closed" in line for line in outlier.evidence), outlier


def test_a_slow_test_names_the_rule_that_found_it() -> None:
    """On the 4x H200 (a fake host whose GPU another process kept busy, issue 26) the
    evidence read "2.0 GB/s, z -0.7 vs cluster median 2.7 GB/s": true, but a z of -0.7
    reads as "no outlier". Found by the fraction rule, it says the fraction."""
    ref = reference([3.31, 2.0], floor=0.03, label="cluster")
    assert ref is not None
    slow = Measurement(test=Test(round=1, a="a", b="b"), samples_gbps=(2.0, 2.0, 2.0))
    score = judge(slow, [ref], Thresholds())
    assert score.status is PairState.SLOW
    assert score.reason.startswith("2.0 GB/s, 75% of the cluster median 2.7 GB/s (below 80%")
    far = reference([48.0] * 20 + [47.8, 48.2], floor=0.03, label="cluster")
    assert far is not None
    low = Measurement(test=Test(round=1, a="a", b="b"), samples_gbps=(41.0, 41.2, 41.1))
    assert judge(low, [far], Thresholds()).reason == "41.1 GB/s, z -4.8 vs cluster median 48.0 GB/s"
