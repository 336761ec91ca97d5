"""`hpnet check`: the real CPU path end to end, planted faults caught and ordered by
impact with their fixes, verification of real GPU logs against the intent, the JSON
schema and the HTML report in a headless browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpnet.check.model import CheckReport
from hpnet.check.run import CheckOptions, run_check
from tests.conftest import DATA
from tests.unit.test_schema_doc import documented_paths, emitted_paths

DOC = (Path(__file__).parents[2] / "docs" / "check-schema.md").read_text()
HPNET = [sys.executable, "-m", "hpnet"]


def clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}


@pytest.fixture(scope="module")
def cpu_check() -> tuple[int, dict[str, Any], str]:
    """`hpnet check --json` on this machine, as the README's first command runs it."""
    done = subprocess.run(
        [*HPNET, "check", "--json"], capture_output=True, text=True, timeout=300,
        env={**clean_environment(), "CUDA_VISIBLE_DEVICES": ""}, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout), done.stderr


def test_a_cpu_node_is_not_ready_and_says_why(cpu_check: tuple[int, dict[str, Any], str]) -> None:
    code, data, err = cpu_check
    assert code == 1 and data["verdict"] == "NOT READY" and data["exit_code"] == 1
    first = data["problems"][0]
    assert first["code"] == "hardware:gpu" and first["impact"] == 1
    assert data["headline"] == first["what"]
    [stage] = data["stages"]
    assert stage["name"] == "cpu" and stage["backend"] == "gloo" and stage["nranks"] == 2
    assert stage["judgement"]["measured_gbps"] > 0  # a real gloo benchmark ran
    rows = stage["bench"]["runs"][0]["rows"]
    assert all(r["in_place"]["wrong"] == 0 for r in rows)  # and was checked
    assert sum(data["doctor"].values()) > 10  # the real doctor ran
    impacts = [p["impact"] for p in data["problems"]]
    assert impacts == sorted(impacts)
    assert "hpnet check: benchmark cpu" in err  # progress on standard error


def test_json_and_schema_doc_agree(cpu_check: tuple[int, dict[str, Any], str]) -> None:
    _, data, _ = cpu_check
    data = dict(data, notes=["n"], rdma_ports=["mlx5_0:1 200 Gb/sec ACTIVE"])
    data["stages"] = [dict(data["stages"][0], transports={"intra_node": ["P2P"]},
                           network=["IB"])]  # fmt: skip
    data["stages"][0]["judgement"] = dict(
        data["stages"][0]["judgement"], expectation={"link": "x", "peak_gbps": 1.0, "source": "s"}
    )
    data["cluster"] = None
    emitted = {
        p for p in emitted_paths(data)
        if not p.startswith(("environment.", "doctor.", "stages[].bench.", "stages[].transports."))
    }  # fmt: skip
    top = DOC.split("## The cluster view", 1)[0]
    documented = documented_paths(top)
    documented |= {
        f"stages[].judgement.expectation.{key}" for key in ("link", "peak_gbps", "source")
    }
    documented -= {"doctor.PASS"}  # written as a sentence, not keys
    assert emitted == documented


def run(tree: Callable[[str], Path], environ: dict[str, str], name: str) -> CheckReport:
    root = str(tree(name))
    options = CheckOptions(sysfs_root=root, device="cpu")
    return run_check(options, {**clean_environment(), **environ})


def test_planted_faults_are_caught_with_the_right_fix_in_order_of_impact(
    sysfs_tree: Callable[[str], Path],
) -> None:
    report = run(
        sysfs_tree,
        {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "nosuch0", "NCCL_IB_HCAA": "mlx5_0"},
        "cx-roce-mixed-gids",
    )
    assert report.verdict == "NOT READY"
    by_source = {p.code: p for p in report.problems}
    disabled = by_source["doctor:vars.ib_disabled"]
    assert disabled.impact == 1 and disabled.fix == "unset NCCL_IB_DISABLE"
    ifname = by_source["doctor:vars.ifname"]
    # a bootstrap that finds no interface: NCCL never starts, the heaviest impact
    assert ifname.impact == 1 and "NCCL_SOCKET_IFNAME" in (ifname.fix or "")
    unknown = by_source["doctor:vars.unknown"]
    assert unknown.impact == 3 and "NCCL_IB_HCA" in (unknown.fix or "")
    order = [p.code for p in report.problems]
    # the doctor's order (issue 25): the FAIL that stops NCCL at bootstrap (no such
    # interface) before the WARNs, then by impact
    assert ifname.fails and not disabled.fails
    assert order.index("doctor:vars.ifname") < order.index("doctor:vars.ib_disabled")
    assert order.index("doctor:vars.ib_disabled") < order.index("doctor:vars.unknown")
    assert report.transport == "roce" and len(report.rdma_ports) == 3


def test_a_clean_rdma_fixture_has_no_configuration_problem(
    sysfs_tree: Callable[[str], Path],
) -> None:
    report = run(sysfs_tree, {}, "cx6-ib-dgx")
    sources = {p.code for p in report.problems}
    assert not {"doctor:vars.ib_disabled", "doctor:vars.ifname", "doctor:vars.unknown"} & sources
    assert "hardware:rdma" not in sources  # the fixture's ports are active RDMA
    assert report.environment["NCCL_IB_HCA"]  # hpnet env filled the HCA list


def test_real_gpu_logs_are_verified_against_the_intent() -> None:
    """The recorded 2x2 fake-host run on 4x H200 used NET/Socket: an RDMA intent makes
    it an impact-1 problem with the socket-fallback fix; a socket intent is met."""
    from hpnet.check.execute import stage_from as _stage_from
    from hpnet.check.execute import verify_logs as _verify
    from hpnet.check.judge import NodeFacts, judge
    from hpnet.result import Expectation

    logs = DATA / "nccl-logs" / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"
    for net, met in (("ib", False), ("socket", True)):
        verify = _verify(str(logs), Expectation(net=net))
        assert verify is not None and [r.met for r in verify.expectations] == [met]
        stage = _stage_from("across 2 fake hosts", "nccl", 4, None, verify, None, error=None)
        assert stage.transports.inter_node == ("NET/Socket",)
    stage = _stage_from("across 2 fake hosts", "nccl", 4, None, verify, None, error=None)
    verify_ib = _verify(str(logs), Expectation(net="ib"))
    problems = judge(
        NodeFacts(device="cuda", gpu_source="nvml", transport="roce", profile="roce",
                  active_rates_gbit=(200.0,), doctor=(), stages=((stage, verify_ib),))
    )  # fmt: skip
    first = problems[0]
    assert first.impact == 1 and "did not use the intended network (net=ib)" in first.what
    assert first.fix is not None and "--device=/dev/infiniband" in first.fix  # socket-fallback's


@pytest.mark.skipif(
    shutil.which("chromium-headless-shell") is None and shutil.which("chromium") is None,
    reason="no headless Chromium (Debian: chromium-headless-shell)",
)
def test_the_html_report_renders_in_a_headless_browser(
    cpu_check: tuple[int, dict[str, Any], str], tmp_path: Path
) -> None:
    from hpnet.check.report import write_report

    done = subprocess.run(
        [*HPNET, "check", "--report", str(tmp_path / "out")], capture_output=True, text=True,
        timeout=300, env={**clean_environment(), "CUDA_VISIBLE_DEVICES": ""}, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "out" / "report.json").exists()
    page = tmp_path / "out" / "report.html"
    browser = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    assert browser is not None and write_report  # imported: the module loads without torch
    rendered = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    dom = rendered.stdout
    assert "<b>NOT READY</b>" in dom and "no NVIDIA GPU visible" in dom
    assert dom.count("<svg") == 1 and "all_reduce bus bandwidth, cpu" in dom
    assert 'id="problems"' in dom and 'id="transports"' in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
         "--window-size=1000,1200", page.as_uri()],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert shot.exists() and shot.stat().st_size > 10_000  # something was drawn


def cluster_run(tmp_path: Path, extra_env_rank1: dict[str, str], world: int = 2) -> dict[str, Any]:
    """``world`` ranks started as a launcher starts them, each its own "node"
    (NCCL_HOSTID), running `hpnet check --all --json`; rank 0 prints the cluster's
    report."""
    from hpnet.localrun import free_port

    port = str(free_port())
    procs = []
    for rank in range(world):
        env = {**clean_environment(), "RANK": str(rank), "WORLD_SIZE": str(world),
               "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": port, "CUDA_VISIBLE_DEVICES": "", "NCCL_DEBUG": "WARN",
               "NCCL_HOSTID": f"node{rank}", **(extra_env_rank1 if rank == 1 else {})}  # fmt: skip
        procs.append(
            subprocess.Popen(
                [*HPNET, "check", "--all", "--json", "--logs", str(tmp_path / f"r{rank}")],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(
        p.returncode == 0 and out[0] == "" for p, out in zip(procs[1:], outs[1:], strict=True)
    ), outs
    assert procs[0].returncode == 1, outs[0][1]  # no GPU, no RDMA: not ready
    return dict(json.loads(outs[0][0]))


def test_the_cluster_view_finds_the_rank_with_a_different_environment(tmp_path: Path) -> None:
    data = cluster_run(tmp_path, {"NCCL_IB_HCA": "mlx5_9"}, world=3)
    cluster = data["cluster"]
    assert [n["node"] for n in cluster["nodes"]] == ["node0", "node1", "node2"]
    assert all(n["ring_busbw_gbps"] > 0 for n in cluster["nodes"])  # a real hop each way
    [mismatch] = cluster["env_mismatches"]
    assert mismatch["rank"] == 1 and mismatch["node"] == "node1"
    assert mismatch["differs"] == ["NCCL_IB_HCA=mlx5_9 (others: (unset))"]
    env = next(p for p in data["problems"] if p["code"] == "cluster:env")
    assert env["impact"] == 2 and "rank 1 on node1" in env["what"]
    assert data["stages"][0]["name"] == "cluster" and data["stages"][0]["nranks"] == 3
    assert {p["code"] for p in data["problems"]} >= {"hardware:gpu", "hardware:rdma"}
    view = DOC.split("## The cluster view", 1)[1].split("\n## The plan", 1)[0]
    documented = documented_paths("## The cluster view" + view)
    emitted = {p for p in emitted_paths({"cluster": cluster}) if p != "cluster"}
    assert emitted == documented


def test_two_ranks_that_disagree_name_no_rank_but_every_side() -> None:
    """With no majority (2 ranks, one value each), blaming either rank would be a guess:
    the variable and each side are named, as isolate's drift names a split."""
    from hpnet.check.cluster import _agreement
    from hpnet.check.model import RankFacts

    facts = [
        RankFacts(rank=0, node="node0", host="h0", local_rank=0, nccl_env={}),
        RankFacts(rank=1, node="node1", host="h1", local_rank=0,
                  nccl_env={"NCCL_IB_HCA": "mlx5_9"}),
    ]  # fmt: skip
    mismatches, versions, problems = _agreement(facts, {})
    assert mismatches == [] and versions == []
    [split] = problems
    assert split.code == "cluster:env" and "no value has a majority" in split.what
    assert split.evidence == ("NCCL_IB_HCA=(unset) on rank(s) 0", "NCCL_IB_HCA=mlx5_9 on rank(s) 1")


def test_the_cluster_view_of_agreeing_ranks_has_no_mismatch(tmp_path: Path) -> None:
    data = cluster_run(tmp_path, {})
    assert data["cluster"]["env_mismatches"] == [] and data["cluster"]["slow_nodes"] == []
    assert "cluster:env" not in {p["code"] for p in data["problems"]}


def test_the_cluster_view_names_each_nodes_inter_node_transport() -> None:
    """From NCCL's own log of two fake hosts (NCCL_HOSTID) on the 4x H200 machine."""
    from hpnet.check.cluster import inter_node_by_node
    from hpnet.check.execute import verify_logs as _verify

    logs = DATA / "nccl-logs" / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"
    verify = _verify(str(logs), None)
    assert verify is not None
    assert inter_node_by_node(verify) == {
        "hpnet-fake-host0": ["NET/Socket"],
        "hpnet-fake-host1": ["NET/Socket"],
    }
