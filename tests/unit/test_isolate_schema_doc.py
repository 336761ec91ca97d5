"""docs/isolate-schema.md and `hpnet isolate --json` agree, key path by key path.

The documents are the command's own (:func:`hpnet.cli.isolate.result_data` over the
result a job's rank 0 returns), their verdicts from the decision engine driven by the
simulated cluster with planted faults: one of every outlier kind (node, rail, link,
group, cluster) and fault (hardware, configuration), drift of both kinds, a failed
test, a test the harness could not run, an outlier that cannot be drained. Forward:
every path any of them has is documented. Backward: every documented path is emitted by
one of them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hpnet.cli.isolate import result_data
from hpnet.isolate.model import Baseline, ErrorSource, Measurement, Test
from hpnet.isolate.simulate import (
    Cluster,
    FactDrift,
    FlappingLink,
    GdrOff,
    PlantedFault,
    Simulator,
    SlowCluster,
    SlowGroup,
    SlowNic,
)
from hpnet.isolate.simulate import run as simulate
from hpnet.jsonout import dumps, to_data
from tests.unit.test_schema_doc import documented_paths, emitted_paths

DOC = (Path(__file__).parents[2] / "docs" / "isolate-schema.md").read_text()
DOCUMENTED = documented_paths(DOC)
SMALL = Cluster(num_nodes=16, rails=8, group_size=8)


def document(
    cluster: Cluster,
    faults: Sequence[PlantedFault] = (),
    *,
    seed: int = 1,
    baseline: Baseline | None = None,
    slow_link: bool = False,
    failing: str | None = None,
    harness: str | None = None,
    one_machine: bool = False,
) -> dict[str, Any]:
    """What `hpnet isolate --json` prints for a simulated job: ``slow_link`` halves the
    path between the first pair of round 1 (rail 1 and the whole-node tests over it),
    ``failing`` makes every test of that node fail on the link, ``harness`` every test
    of that node fail in the harness; ``one_machine``: every node is a fake host of one
    Slurm node."""
    sim = Simulator(cluster, faults, seed=seed)
    iso = sim.isolation(baseline=baseline, seed=seed)
    iso.drift(sim.facts())
    first = iso.next_round()
    assert first is not None
    link = {first.tests[0].a, first.tests[0].b} if slow_link else set()
    while (rnd := iso.next_round()) is not None:
        iso.record([_altered(m, link, failing, harness) for m in sim.measure(rnd.tests)])
    verdict = iso.verdict()
    result = {
        "nodes": sim.nodes,
        "rails": cluster.rails,
        "bytes": 64 << 20,
        "iters": cluster.iterations,
        "backend": "nccl",
        "scheduler": {n: ["slurm", "gpu-1" if one_machine else n] for n in sim.nodes},
        "drift": to_data(verdict.drift),
        "verdict": to_data(verdict),
        "files": "/scratch/isolate-10.0.0.1-29500",
    }
    data: dict[str, Any] = json.loads(dumps(result_data(result)))
    return data


def _altered(
    m: Measurement, link: set[str], failing: str | None, harness: str | None
) -> Measurement:
    t: Test = m.test
    if harness in (t.a, t.b):
        error = "DistStoreError: wait timeout after 300000ms, keys: /hpnet-isolate/1/0/0"
        return dataclasses.replace(
            m, samples_gbps=(), error=error, error_source=ErrorSource.HARNESS
        )
    if failing in (t.a, t.b):
        error = "DistBackendError: NCCL WARN NET/IB : Got completion with error 12"
        return dataclasses.replace(m, samples_gbps=(), error=error)
    if {t.a, t.b} == link and t.rail in (None, 1):
        return dataclasses.replace(m, samples_gbps=tuple(s * 0.5 for s in m.samples_gbps))
    return m


def _baseline(cluster: Cluster) -> Baseline:
    clean = Simulator(cluster, seed=1_000_003)
    return Baseline.from_json(to_data(simulate(clean.isolation(seed=2), clean)))


#: a slow NIC, GPUDirect RDMA off, one node's NCCL unlike the others', and the driver
#: split 8 / 8 (no majority)
MIXED = (
    SlowNic(node=SMALL.node(3), rail=5),
    GdrOff(node=SMALL.node(10)),
    FactDrift(node=SMALL.node(7), key="versions.nccl", value="2.19.3"),
    *(FactDrift(node=SMALL.node(i), key="versions.driver", value="535.104") for i in range(8)),
)


@functools.cache
def documents() -> dict[str, dict[str, Any]]:
    """Every kind of outlier, drift and test, on simulated clusters."""
    racks = Cluster(num_nodes=32, rails=4, group_size=8)
    return {
        "clean": document(SMALL),
        "rail and configuration, with drift": document(SMALL, MIXED),
        "node": document(SMALL, [SlowNic(node=SMALL.node(5), rail=r) for r in range(8)]),
        "flapping rail": document(SMALL, (FlappingLink(node=SMALL.node(12), rail=2),)),
        "link": document(SMALL, slow_link=True),
        "failed tests": document(SMALL, failing=SMALL.node(9)),
        "harness failure": document(SMALL, harness=SMALL.node(4)),
        "fake hosts": document(
            SMALL, [SlowNic(node=SMALL.node(5), rail=r) for r in range(8)], one_machine=True
        ),
        "group": document(racks, (SlowGroup(group="rack001"),)),
        "cluster": document(SMALL, (SlowCluster(factor=0.8),), baseline=_baseline(SMALL)),
    }


def test_the_doc_parses_into_paths() -> None:
    assert {"outliers[].evidence", "outliers[].drain", "pairs[].median_gbps",
            "drift[].counts", "rounds[].findings", "cluster_median_gbps"} <= DOCUMENTED  # fmt: skip


def test_the_documents_hold_every_kind() -> None:
    every = [o for d in documents().values() for o in d["outliers"]]
    assert {o["kind"] for o in every} == {"node", "rail", "link", "group", "cluster"}
    assert {o["fault"] for o in every} == {"hardware", "configuration"}
    drift = [d for doc in documents().values() for d in doc["drift"]]
    assert {d["kind"] for d in drift} == {"differs", "split"}
    pairs = [p for doc in documents().values() for p in doc["pairs"]]
    assert any(p["error"] for p in pairs) and any(p["rail"] is not None for p in pairs)
    assert any(o["drain"] for o in every) and documents()["clean"]["outliers"] == []


@pytest.mark.parametrize("name", sorted(documents()))
def test_output_is_documented(name: str) -> None:
    assert set(emitted_paths(documents()[name])) - DOCUMENTED == set()


def test_every_documented_path_is_emitted() -> None:
    emitted = {p for d in documents().values() for p in emitted_paths(d)}
    assert DOCUMENTED - emitted == set()


def _documented_words(section: str, key: str) -> set[str]:
    """The `words` of a key's row in one section of the doc."""
    part = DOC.split(section, 1)[1].split("\n## ", 1)[0]
    row = next(line for line in part.splitlines() if line.startswith(f"| `{key}` |"))
    return set(re.findall(r"`([^`]+)`", row.split("|")[3]))


def test_every_value_of_a_closed_vocabulary_is_documented() -> None:
    """The kinds, faults, codes and round names the documents hold are the doc's words."""
    docs = list(documents().values())
    outliers = [o for d in docs for o in d["outliers"]]
    checks = [
        ("## An outlier", "kind", {o["kind"] for o in outliers}),
        ("## An outlier", "fault", {o["fault"] for o in outliers}),
        ("## An outlier", "code", {o["code"] for o in outliers if o["code"]}),
        ("## Drift", "kind", {d["kind"] for doc in docs for d in doc["drift"]}),
        ("## A round", "name", {r["name"] for doc in docs for r in doc["rounds"]}),
        (
            "## A test",
            "error_source",
            {p["error_source"] for d in docs for p in d["pairs"] if p["error"]},
        ),
    ]
    assert {d["status"] for d in docs} == {"outliers", "inconclusive", "no-outlier"}
    assert {d["status"] for d in docs} <= _documented_words("| key |", "status")
    for section, key, values in checks:
        assert values <= _documented_words(section, key), (section, key)
    assert {"drift", "pairs", "re-pair", "rails"} <= {r["name"] for d in docs for r in d["rounds"]}


def test_a_document_reads_back_as_a_baseline() -> None:
    """As the doc says: the next run's --baseline is this run's --json."""
    data = documents()["rail and configuration, with drift"]
    base = Baseline.from_json(json.dumps(data))
    assert base.cluster_median_gbps == data["cluster_median_gbps"]
    first = [p for p in data["pairs"] if p["round"] == 1 and p["rail"] is None]
    assert len(base.pairs_gbps) == len(first) == SMALL.num_nodes // 2
