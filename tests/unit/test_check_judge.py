"""One judge and one impact table for the node view and the cluster view (issue 16):
what weighs how much is written once, its doctor ids are the doctor's, and a node's
problem reaches the cluster report with the impact the node view gives it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpnet.check.impact import CHECK_IMPACT, DOCTOR_BY_STATUS, DOCTOR_IMPACT, VERIFY_IMPACT
from hpnet.check.judge import NodeFacts, doctor_problems, judge
from hpnet.check.model import DoctorFinding, PortFact, RankFacts
from hpnet.doctor.registry import CHECKS
from tests.conftest import DATA

SOCKET_LOGS = DATA / "nccl-logs" / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"
IB_DISABLED = DoctorFinding(
    id="vars.ib_disabled", status="WARN", summary="NCCL_IB_DISABLE=1: InfiniBand/RoCE is off",
    evidence=("NCCL_IB_DISABLE=1",), fix="unset NCCL_IB_DISABLE",
)  # fmt: skip


def test_every_doctor_id_in_the_impact_table_is_the_doctors_and_every_check_is_weighed() -> None:
    assert set(DOCTOR_IMPACT) <= set(CHECKS), set(DOCTOR_IMPACT) - set(CHECKS)
    assert set(DOCTOR_BY_STATUS) <= set(CHECKS), set(DOCTOR_BY_STATUS) - set(CHECKS)
    assert not set(DOCTOR_IMPACT) & DOCTOR_BY_STATUS
    # a new doctor check is weighed on purpose, not by default
    assert set(CHECKS) == set(DOCTOR_IMPACT) | DOCTOR_BY_STATUS
    # what keeps traffic off RDMA altogether comes first
    for check_id in ("vars.ib_disabled", "vars.net", "vars.transport", "devices.uverbs"):
        assert DOCTOR_IMPACT[check_id] == 1
    assert all(1 <= impact <= 5 for impact in (*DOCTOR_IMPACT.values(), *CHECK_IMPACT.values()))


def test_every_verify_id_in_the_impact_table_is_a_finding_hpnet_verify_gives() -> None:
    from hpnet.check.execute import verify_logs
    from hpnet.result import Expectation

    verify = verify_logs(str(SOCKET_LOGS), Expectation(net="ib"))
    assert verify is not None
    found = {f.id for f in verify.findings if f.severity == "error"}
    assert set(VERIFY_IMPACT) <= found


def test_the_node_judge_is_pure_and_orders_by_impact() -> None:
    facts = NodeFacts(device="cpu", gpu_source="nvml: no GPU", transport="socket",
                      profile="auto", active_rates_gbit=(), doctor=(IB_DISABLED,),
                      stages=())  # fmt: skip
    problems = judge(facts)
    assert problems == judge(facts)
    assert [p.impact for p in problems] == sorted(p.impact for p in problems)
    by_source = {p.code: p for p in problems}
    assert by_source["doctor:vars.ib_disabled"].impact == 1
    assert by_source["hardware:gpu"].impact == 1 and by_source["hardware:rdma"].impact == 1


def test_a_failed_stage_is_a_problem_by_its_typed_error_on_every_device() -> None:
    from hpnet.check.model import Stage

    failed = Stage(name="cpu", kind="cpu", backend="gloo", nranks=2, bench=None,
                   judgement=None, error="rank 1 exited with 1")  # fmt: skip
    facts = NodeFacts(device="cpu", gpu_source="none", transport="socket", profile="socket",
                      active_rates_gbit=(), doctor=(), stages=((failed, None),))  # fmt: skip
    [bench] = [p for p in judge(facts) if p.code == "bench:cpu"]
    assert bench.impact == CHECK_IMPACT["bench:failed"] and bench.evidence == (
        "rank 1 exited with 1",
    )


def _inventory(tree: Path, state: str | None = None) -> Any:
    from hpnet.detect import DetectOptions, detect
    from hpnet.rdma.model import PortState

    inventory = detect(DetectOptions(sysfs_root=str(tree)), env={}, python_path=[])
    if state is None:
        return inventory
    devices = tuple(
        dataclasses.replace(
            d, ports=tuple(dataclasses.replace(p, state=PortState(state)) for p in d.ports)
        )
        for d in inventory.rdma_devices
    )
    return dataclasses.replace(inventory, rdma_devices=devices)


def _leader_facts(monkeypatch: pytest.MonkeyPatch, inventory: Any, node: str) -> dict[str, Any]:
    """What a node's first rank reports, from a recorded node and a doctor that warns
    that NCCL_IB_DISABLE=1."""
    import hpnet.detect
    import hpnet.doctor.gather
    from hpnet.check import cluster
    from hpnet.doctor.model import CheckResult, Report
    from hpnet.result import Status

    report = Report(node=node, profile="auto", variables_source="environment", checks=(
        CheckResult(id="vars.ib_disabled", area="vars", status=Status.WARN,
                    summary=IB_DISABLED.summary, evidence=IB_DISABLED.evidence,
                    fix=IB_DISABLED.fix),
        CheckResult(id="limits.shm", area="limits", status=Status.PASS, summary="ok"),
    ))  # fmt: skip
    monkeypatch.setattr(hpnet.detect, "detect", lambda *_a, **_k: inventory)
    monkeypatch.setattr(hpnet.doctor.gather, "diagnose", lambda **_k: report)
    environ = {"NCCL_HOSTID": node, "NCCL_IB_DISABLE": "1"}
    return cluster.local_facts(environ, {"RANK": "0", "LOCAL_RANK": "0"}, "auto")


def _cluster_report(tmp_path: Path, facts: list[dict[str, Any]]) -> Any:
    from hpnet.check import cluster
    from hpnet.check.run import CheckOptions

    (tmp_path / "logs").mkdir(exist_ok=True)
    nodes = {f["node"]: [rank] for rank, f in enumerate(facts)}
    result = {
        "runs": [],
        "metadata": {"backend": "gloo"},
        "cluster": {"facts": [dict(f, rank=r) for r, f in enumerate(facts)], "nodes": nodes,
                    "intra": {n: None for n in nodes}, "ring": []},
    }  # fmt: skip
    return cluster._report(CheckOptions(device="cpu"), result, str(tmp_path))


def test_an_impact_1_doctor_warning_reaches_the_cluster_report(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Drift fixed: the cluster view shipped only the doctor's FAILs, at impact 2, so
    NCCL_IB_DISABLE=1 on a node (a WARN of impact 1: every job off RDMA) never
    reached the cluster's report."""
    inventory = _inventory(sysfs_tree("cx6-ib-dgx"))
    facts = [_leader_facts(monkeypatch, inventory, name) for name in ("node0", "node1")]
    report = _cluster_report(tmp_path, facts)
    warned = [p for p in report.problems if p.code == "doctor:vars.ib_disabled"]
    assert [p.what for p in warned] == [
        f"{n}: doctor: {IB_DISABLED.summary}" for n in ("node0", "node1")
    ]
    assert all(p.impact == 1 for p in warned)  # as the node view weighs it
    node_view = doctor_problems((IB_DISABLED,))
    assert node_view[0].impact == warned[0].impact and node_view[0].fix == warned[0].fix
    assert report.verdict == "NOT READY" and report.headline == warned[0].what


def test_the_cluster_reads_port_state_as_a_field_as_the_node_view_does(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Drift fixed: the cluster view searched its own text for " ACTIVE", so a port
    in ACTIVE_DEFER counted as an active RDMA port there and not in the node view."""
    from hpnet.check.run import _ports

    inventory = _inventory(sysfs_tree("cx6-ib-dgx"), state="ACTIVE_DEFER")
    assert _ports(inventory)[1] == ()  # the node view: no active port
    facts = [_leader_facts(monkeypatch, inventory, "node0")]
    assert all(not PortFact(**p).active for p in facts[0]["ports"])
    report = _cluster_report(tmp_path, facts)
    assert report.transport == "socket"
    assert "hardware:rdma" in {p.code for p in report.problems}


def test_rank_facts_are_typed_from_the_json_the_ranks_share(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    data = _leader_facts(monkeypatch, _inventory(sysfs_tree("cx6-ib-dgx")), "node0")
    facts = RankFacts.from_data(json.loads(json.dumps(data)))
    assert facts.node == "node0" and facts.gpus == 4 and facts.doctor == (IB_DISABLED,)
    assert facts.ports and facts.ports[0].described.endswith(" ACTIVE")
    assert facts.nccl_env["NCCL_IB_DISABLE"] == "1"


def test_fake_hosts_of_one_machine_count_its_gpus_once_by_name_and_the_nccl_torch_loads(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Found on the 4x H200 machine (issue 26): `check --all` over two fake hosts of two
    GPUs each headed its report "8 x None" (each fake host sees the machine's four GPUs;
    no GPU name was carried), and each node's NCCL column read "2.28.3, 2.28.9": the
    image's apt libnccl2 beside the wheel torch loads, as if the node ran two NCCLs."""
    from hpnet.node.versions import LibraryInfo, NcclInfo, TorchInfo, Versions
    from hpnet.render.check import render_check

    inventory = _inventory(sysfs_tree("cx6-ib-dgx"))
    assert len(inventory.gpus) == 4
    gpus = tuple(dataclasses.replace(g, name="NVIDIA H200") for g in inventory.gpus)
    lib = LibraryInfo(name="libibverbs", path=None)
    versions = Versions(
        nvidia_driver="580.159.04", cuda_driver="13.0", rdma_core=None, libibverbs=lib,
        librdmacm=lib, providers=(), kernel=None,
        nccl=(NcclInfo(version="2.28.3", path="/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                       source="libnccl.so.2 via the dynamic loader"),
              NcclInfo(version="2.28.9", path="/venv/nvidia/nccl/lib/libnccl.so.2",
                       source="wheel nvidia-nccl-cu13")),
        torch=TorchInfo(version="2.11.0+cu130", cuda="13.0", nccl="2.28.9",
                        nccl_source="wheel pin"),
    )  # fmt: skip
    inventory = dataclasses.replace(inventory, gpus=gpus, versions=versions)
    facts = [_leader_facts(monkeypatch, inventory, name) for name in ("host0", "host1")]
    report = _cluster_report(tmp_path, facts)
    assert (report.gpus, report.gpu_name) == (4, "NVIDIA H200")
    assert "4 x NVIDIA H200" in render_check(report)
    assert [n.nccl_version for n in report.cluster.nodes] == ["2.28.9", "2.28.9"]
    other = dict(facts[1], node="host2", host="another-machine")
    assert _cluster_report(tmp_path, [*facts, other]).gpus == 8
    # without torch's own pin every installed NCCL is named, as before
    bare = dataclasses.replace(inventory, versions=dataclasses.replace(versions, torch=None))
    assert _leader_facts(monkeypatch, bare, "host0")["nccl_version"] == "2.28.3, 2.28.9"
