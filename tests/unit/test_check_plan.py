"""`hpnet check` plans before it runs (issue 16): typed stages built purely from the
detected node and the options, printed by ``--dry-run`` with nothing launched, then
run through one injectable launcher."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from hpnet.check.execute import Launched, execute
from hpnet.check.plan import CheckPlan, PlanFacts, StageKind, StagePlan, plan_check, plan_data
from hpnet.check.run import CheckOptions, dry_run
from hpnet.cli.main import main
from tests.unit.test_schema_doc import documented_paths, emitted_paths

DOC = (Path(__file__).parents[2] / "docs" / "check-schema.md").read_text()
ENV = {"PATH": "/usr/bin:/bin"}


def planned(tree: Path, **options: object) -> CheckPlan:
    return dry_run(CheckOptions(sysfs_root=str(tree), **options), ENV)  # type: ignore[arg-type]


def kinds(plan: CheckPlan) -> list[tuple[str, int, int, int]]:
    return [(s.kind.value, s.nranks, s.num_gpus, s.fake_hosts) for s in plan.stages]


def test_no_gpu_plans_gloo_on_two_cpu_ranks(sysfs_tree: Callable[[str], Path]) -> None:
    plan = planned(sysfs_tree("no-rdma-vm"))
    assert plan.device == "cpu" and plan.num_gpus == 0
    assert kinds(plan) == [("cpu", 2, 0, 1)]
    [stage] = plan.stages
    assert stage.backend == "gloo" and not stage.verify_log and stage.expect_net is None


def test_one_gpu_still_exercises_the_network_with_two_ranks_on_it(
    sysfs_tree: Callable[[str], Path],
) -> None:
    """NCCL refuses two ranks on one GPU only within one host: as two NCCL_HOSTIDs
    the ranks of the one GPU are two hosts, and NCCL's network transport runs."""
    plan = planned(sysfs_tree("h100-vm"))
    assert plan.device == "cuda" and plan.num_gpus == 1
    assert kinds(plan) == [("fake-hosts", 2, 1, 2)]
    [stage] = plan.stages
    assert stage.verify_log and stage.expect_net == "socket"  # no RDMA device: sockets meant
    assert any("two ranks share it" in note for note in plan.notes)


def test_a_multi_gpu_rdma_node_plans_intra_node_then_fake_hosts_over_ib(
    sysfs_tree: Callable[[str], Path],
) -> None:
    plan = planned(sysfs_tree("cx6-ib-dgx"))  # the recorded DGX: 4 GPUs, 3 active IB ports
    assert kinds(plan) == [("intra-node", 4, 4, 1), ("fake-hosts", 4, 4, 2)]
    intra, net = plan.stages
    assert intra.expect_net is None and net.expect_net == "ib"
    assert net.link is not None and net.link.link == "3 x 200 Gb/s RDMA"
    assert plan.environment["NCCL_IB_HCA"]  # the resolved environment it would run with


def test_eight_gpus_and_the_options_shape_the_plan() -> None:
    facts = PlanFacts(node="n", profile="auto", transport="ib", device="cuda", num_gpus=8,
                      nproc=8, active_rates_gbit=(400.0,) * 8)  # fmt: skip
    plan = plan_check(facts)
    assert kinds(plan) == [("intra-node", 8, 8, 1), ("fake-hosts", 8, 8, 2)]
    assert plan.stages[1].link is not None and plan.stages[1].link.peak_gbps > 0
    full = plan_check(facts, mode="full")
    assert (
        full.stages[0].sweep.sizes_bytes[0] == 8
        and full.stages[0].sweep.sizes_bytes[-1] == 1 << 30  # --full: "8 B to 1 GiB"
    )
    plugin = plan_check(PlanFacts(**{**_fields(facts), "net_plugin": True}))
    assert plugin.stages[1].expect_net is None  # a plugin names its own network
    assert plan_check(facts) == plan  # pure: same facts, same plan


def _fields(facts: PlanFacts) -> dict[str, object]:
    return {name: getattr(facts, name) for name in PlanFacts.__dataclass_fields__}


def test_the_stage_kind_not_its_display_name_decides() -> None:
    stage = plan_check(PlanFacts(node="n", profile="auto", transport="socket", device="cuda",
                                 num_gpus=2, nproc=2)).stages[1]  # fmt: skip
    assert stage.kind is StageKind.FAKE_HOSTS and stage.across_hosts
    assert stage.directory == "across-2-fake-hosts"


@pytest.fixture
def nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import hpnet.bench.run
    from hpnet import localrun

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("--dry-run started a rank")

    monkeypatch.setattr(localrun, "run_ranks", refuse)
    monkeypatch.setattr(hpnet.bench.run, "run_plan", refuse)


@pytest.mark.usefixtures("nothing_runs")
def test_dry_run_prints_the_plan_and_runs_nothing(
    sysfs_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(sysfs_tree("cx6-ib-dgx"))
    assert main(["check", "--dry-run", "--sysfs-root", root]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hpnet check --dry-run: 2 stage(s) planned, nothing run")
    assert "intra-node" in out and "across 2 fake hosts" in out and "net=ib" in out
    assert main(["check", "--dry-run", "--json", "--sysfs-root", root]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dry_run"] is True and data["schema_version"] == 1
    assert [s["kind"] for s in data["stages"]] == ["intra-node", "fake-hosts"]
    documented = documented_paths("## The plan" + DOC.split("## The plan", 1)[1])
    emitted = {p for p in emitted_paths(data) if not p.startswith("environment.")}
    assert emitted == documented


@pytest.mark.usefixtures("nothing_runs")
def test_dry_run_redacts_secrets_and_refuses_all(
    sysfs_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("NCCL_NET_TOKEN", "tok-123456")
    root = str(sysfs_tree("no-rdma-vm"))
    for flags in ([], ["--json"]):
        assert main(["check", "--dry-run", "--sysfs-root", root, *flags]) == 0
        out = capsys.readouterr().out
        assert "tok-123456" not in out and "<redacted>" in out
    assert main(["check", "--dry-run", "--all"]) == 2


def test_the_executor_runs_each_stage_through_the_launcher_it_is_given(tmp_path: Path) -> None:
    plan = plan_check(PlanFacts(node="n", profile="auto", transport="socket", device="cuda",
                                num_gpus=1, nproc=1))  # fmt: skip
    seen: list[tuple[str, int, int, str]] = []

    def launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
        seen.append((stage.kind.value, stage.nranks, stage.fake_hosts, Path(directory).name))
        assert env["NCCL_DEBUG"] == "INFO"
        return Launched(bench=None, error="not run by this test")

    [outcome] = execute(plan, env={"NCCL_DEBUG": "INFO"}, root=str(tmp_path), launcher=launcher)
    assert seen == [("fake-hosts", 2, 2, "across-2-fake-hosts")]
    assert outcome.stage.kind == "fake-hosts" and outcome.stage.error == "not run by this test"
    assert outcome.verify is None  # no rank log was written


def test_plan_data_is_json() -> None:
    facts = PlanFacts(node="n", profile="auto", transport="ib", device="cpu", num_gpus=0,
                      nproc=2, environment={"NCCL_NET_TOKEN": "abcd"})  # fmt: skip
    plan = plan_check(facts)
    data = plan_data(plan)
    assert json.loads(json.dumps(data))["environment"] == {"NCCL_NET_TOKEN": "<redacted>"}
