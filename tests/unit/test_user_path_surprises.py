"""Issue 26, "a path without surprises": what a new user met on the first commands.

1. ``hpnet check --sysfs-root NODE.tree`` named a deleted temporary directory, listed
   the tree's 4 GPUs and then said no GPU was visible, and judged the recorded node by
   a gloo benchmark of *this* machine's CPUs. A recorded node is judged by what the
   record shows (detect, env, doctor, plan); no benchmark runs, and the report says so,
   naming the recording, with the stages the node itself would run.
2. ``hpnet check --report out/`` named ``out/report.html`` and a bare ``report.json``.
3. ``hpnet image run-flags --format docker`` on a node with no GPU and no RDMA device
   printed three flags and nothing on what it had not found.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from hpnet.check import run as check_run
from hpnet.check.execute import Launched
from hpnet.check.judge import doctor_problems, ordered, verdict
from hpnet.check.model import CheckReport
from hpnet.check.plan import StagePlan
from hpnet.check.run import CheckOptions, dry_run, run_check
from hpnet.cli.main import main
from hpnet.render.check import render_check
from hpnet.result import Verdict
from tests.conftest import DATA

Tree = Callable[[str], Path]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The caller's environment without NCCL_* (the user's settings are the test's)."""
    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)
    return dict(os.environ)


@pytest.fixture
def no_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's launcher fails the test if a stage is launched through it."""

    def never(stage: StagePlan, _env: Mapping[str, str], _directory: str) -> Launched:
        raise AssertionError(f"a recorded node's check launched the stage {stage.name}")

    monkeypatch.setattr(check_run, "bench_launcher", never)


# ---------------------------------------------------------------- 1. a recorded node


def test_a_recorded_node_runs_no_benchmark_and_says_what_it_would_run(
    sysfs_tree: Tree, clean_env: dict[str, str], no_benchmark: None
) -> None:
    root = str(sysfs_tree("cx6-ib-dgx"))
    options = CheckOptions(sysfs_root=root)
    report = run_check(options, clean_env)
    plan = dry_run(options, clean_env)
    # the stages are the plan's (4 ranks on the tree's 4 GPUs), each marked not run
    assert [(s.name, s.backend, s.nranks) for s in report.stages] == [
        (s.name, s.backend, s.nranks) for s in plan.stages
    ]
    assert [s.nranks for s in report.stages] == [4, 4]
    for stage in report.stages:
        assert stage.bench is None and stage.judgement is None
        assert stage.error is not None and stage.error.startswith("not run: ")
        assert root in stage.error
    assert any("not run" in note and root in note for note in report.notes)
    # the tree has 4 GPUs: no "no GPU" problem, and no measurement of this machine
    assert report.gpus == 4
    assert "hardware:gpu" not in {p.code for p in report.problems}
    assert not any("no NVIDIA GPU" in p.what for p in report.problems)
    # one verdict: the doctor's problems, weighed by the existing judge (mlx5_3's port
    # is down: a WARN of impact 3, NOT READY as on a live node)
    doctor = ordered(doctor_problems(report.doctor_checks))
    assert report.problems == doctor and doctor
    assert report.verdict == verdict(doctor) == Verdict.NOT_READY and report.exit_code == 1
    assert report.headline == doctor[0].what


def test_a_recorded_node_is_judged_by_the_live_rules_on_what_it_shows(
    sysfs_tree: Tree, clean_env: dict[str, str], no_benchmark: None
) -> None:
    """One truth: the record's GPUs and RDMA ports weigh as a live node's do (the 4x
    H200 without RDMA was NOT READY, "no RDMA network"; its recording must be too), and
    nothing is said to be measured."""
    root = str(sysfs_tree("h100-vm"))  # one GPU, no RDMA device
    report = run_check(CheckOptions(sysfs_root=root), clean_env)
    assert report.verdict == Verdict.NOT_READY and report.exit_code == 1
    assert report.problems[0].code == "hardware:rdma"
    assert not any("measured" in e for p in report.problems for e in p.evidence)
    [stage] = report.stages  # one GPU: two ranks share it as two NCCL hosts
    assert stage.name == "across 2 fake hosts" and stage.nranks == 2 and stage.bench is None
    text = render_check(report)
    assert "Benchmarks planned, not run" in text
    assert "Environment the benchmarks would run with" in text
    bare = run_check(CheckOptions(sysfs_root=str(sysfs_tree("no-rdma-vm"))), clean_env)
    gpu = next(p for p in bare.problems if p.code == "hardware:gpu")
    assert [e.split(":")[0] for e in gpu.evidence] == ["GPUs"]  # and no "measured instead"
    assert bare.verdict == Verdict.NOT_READY


def test_a_recorded_node_with_a_doctor_fail_is_not_ready(
    sysfs_tree: Tree, clean_env: dict[str, str], no_benchmark: None
) -> None:
    report = run_check(
        CheckOptions(sysfs_root=str(sysfs_tree("cx-roce-mixed-gids"))),
        {**clean_env, "NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "nosuch0"},
    )
    assert report.verdict == Verdict.NOT_READY and report.exit_code == 1
    assert set(ordered(doctor_problems(report.doctor_checks))) <= set(report.problems)
    assert report.headline == report.problems[0].what
    assert {"doctor:vars.ib_disabled", "doctor:vars.ifname"} <= {p.code for p in report.problems}


def test_check_names_the_tree_file_the_user_gave(
    capsys: pytest.CaptureFixture[str], clean_env: dict[str, str], no_benchmark: None
) -> None:
    tree = str(DATA / "sysfs" / "cx6-ib-dgx.tree")
    assert main(["check", "--dry-run", "--sysfs-root", tree]) == 0
    planned = capsys.readouterr().out
    assert f"node (sysfs-root {tree}): 4 GPU(s)" in planned
    code = main(["check", "--sysfs-root", tree])
    printed = capsys.readouterr().out
    assert code == 1, printed  # the doctor's WARN on mlx5_3's port down
    assert "hpnet-tree-" not in printed and "hpnet-tree-" not in planned
    assert f"node (sysfs-root {tree}): 4 x NVIDIA device 0x20b2" in printed
    assert "no NVIDIA GPU visible" not in printed and "gloo" not in printed
    assert f"not run: the node is a recording ({tree})" in printed


def test_check_json_of_a_recorded_node_carries_the_same(
    capsys: pytest.CaptureFixture[str], clean_env: dict[str, str], no_benchmark: None
) -> None:
    tree = str(DATA / "sysfs" / "cx6-ib-dgx.tree")
    code = main(["check", "--json", "--sysfs-root", tree])
    data = json.loads(capsys.readouterr().out)
    assert code == data["exit_code"] == 1 and data["verdict"] == "NOT READY"
    assert data["node"] == f"(sysfs-root {tree})"
    assert [(s["name"], s["nranks"], s["bench"]) for s in data["stages"]] == [
        ("intra-node", 4, None),
        ("across 2 fake hosts", 4, None),
    ]
    assert all(s["error"].startswith(f"not run: the node is a recording ({tree})")
               for s in data["stages"])  # fmt: skip
    assert "hardware:gpu" not in {p["code"] for p in data["problems"]}


# ---------------------------------------------------------------- 2. --report's paths


def test_report_names_both_files_in_full(tmp_path: Path) -> None:
    from hpnet.cli.check import _finish

    out = str(tmp_path / "out")
    ns = argparse.Namespace(json=True, report=out, command_line=("hpnet", "check"))
    report = CheckReport(verdict=Verdict.READY, headline="ok", node="n", profile="auto",
                         transport="socket", gpus=0, gpu_name=None, rdma_ports=(), problems=(),
                         stages=(), doctor={}, doctor_checks=(), environment={})  # fmt: skip
    said: list[str] = []
    assert _finish(ns, report, said.append) == 0
    html, data = os.path.join(out, "report.html"), os.path.join(out, "report.json")
    assert said == [f"wrote {html} and {data}"]
    assert os.path.isfile(html) and os.path.isfile(data)


# ---------------------------------------------------------------- 3. run-flags


@pytest.mark.parametrize("form", ["docker", "k8s"])
def test_run_flags_say_on_stderr_what_was_not_found(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    root = str(sysfs_tree("no-rdma-vm"))
    assert main(["image", "run-flags", "--sysfs-root", root, "--format", form]) == 0
    out, err = capsys.readouterr()
    if form == "docker":
        assert out == "--net=host --ipc=host --shm-size=8g\n"  # only the flags, for $(...)
    assert "no NVIDIA GPU" in err and "no --gpus" in err
    assert "no RDMA device" in err and "no --device" in err
    assert "hpnet detect" in err


def test_run_flags_say_nothing_more_where_everything_was_found(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(sysfs_tree("cx6-ib-dgx"))
    assert main(["image", "run-flags", "--sysfs-root", root, "--format", "docker"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("--gpus all --device=/dev/infiniband/rdma_cm") and err == ""
