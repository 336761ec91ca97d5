"""`hpnet check` judges one resolution: the doctor, the stages and the report see the
same node and the same NCCL environment (issue 16: on the recorded RoCE tree the
check ran with NCCL_IB_GID_INDEX=3 and NCCL_IB_HCA==mlx5_0:1, and its doctor said
"NCCL_IB_GID_INDEX is not set ... fix: export NCCL_IB_HCA='=mlx5_0:1'")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from hpnet.check import run as check_run
from hpnet.check.execute import Launched
from hpnet.check.plan import StagePlan
from hpnet.errors import HpnetError
from hpnet.profiles import PROFILES
from tests.conftest import DATA

TREES = sorted(p.stem for p in (DATA / "sysfs").glob("*.tree"))
#: hpnet's own probing settings, on top of what is judged
PROBING = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")


def _check(root: Path, profile: str, environ: Mapping[str, str], monkeypatch: pytest.MonkeyPatch
           ) -> tuple[Any, list[Mapping[str, str]]]:  # fmt: skip
    """The report and the environments the stages were given (the ranks are not run:
    this is about what is judged, not measured)."""
    given: list[Mapping[str, str]] = []

    def launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
        given.append(dict(env))
        return Launched(bench=None, error="not run by this test")

    options = check_run.CheckOptions(profile=profile, sysfs_root=str(root), device="cpu")
    return check_run.run_check(options, environ, launcher=launcher), given


@pytest.mark.parametrize("tree", TREES)
def test_checks_problems_are_the_doctors_on_the_users_environment(
    tree: str, sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25: `hpnet check` and `hpnet doctor --profile P` give one answer. The
    doctor judges what a job of the user's gets (the profile's presets under the user's
    NCCL_* variables), never a value only hpnet's resolution set; the stages run with
    hpnet env's resolution. Check lists every problem the doctor finds."""
    from hpnet.doctor.gather import diagnose

    root = sysfs_tree(tree)
    environ = {"PATH": "/usr/bin:/bin", "NCCL_IB_TIMEOUT": "22"}  # a user's own setting
    judged = 0
    for profile in PROFILES:
        try:
            report, given = _check(root, profile, environ, monkeypatch)
        except HpnetError:
            continue  # a profile this node cannot run (no device of its kind)
        judged += 1
        ran = {k: v for k, v in given[0].items() if k.startswith("NCCL_") and k not in PROBING}
        shown = {k: v for k, v in report.environment.items() if k not in PROBING}
        assert shown == ran, profile  # the report shows what ran
        assert ran["NCCL_IB_TIMEOUT"] == "22"
        doctor = diagnose(sysfs_root=str(root), profile=profile, environment=environ)
        problems = {(c.id, c.status.value, c.summary) for c in doctor.checks}
        problems = {p for p in problems if p[1] in ("WARN", "FAIL")}
        assert problems == {(c.id, c.status, c.summary) for c in report.doctor_checks}, profile
        coded = [p.code.removeprefix("doctor:") for p in report.problems]
        assert {i for i, _, _ in problems} <= set(coded), profile  # none dropped
    assert judged >= 2  # auto and socket at least


def test_the_recorded_roce_tree_runs_with_what_its_doctor_advises(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stages run with the doctor's fixes: vars.gid's GID index and vars.hca's
    NCCL_IB_HCA (NCCL_IB_HCA unset opens mlx4_0, whose automatic GID does not route)."""
    report, given = _check(sysfs_tree("cx-roce-mixed-gids"), "roce", {"PATH": "/bin"}, monkeypatch)
    assert given[0]["NCCL_IB_GID_INDEX"] == "3" and given[0]["NCCL_IB_HCA"] == "=mlx5_0:1"
    fixes = {c.id: c.fix for c in report.doctor_checks}
    assert fixes["vars.gid"] == "export NCCL_IB_GID_INDEX=3"
    assert fixes["vars.hca"] == "export NCCL_IB_HCA='=mlx5_0:1'"


def test_check_detects_the_node_once(
    sysfs_tree: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hpnet.detect

    calls: list[str] = []
    real = hpnet.detect.detect

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append("detect")
        return real(*args, **kwargs)

    monkeypatch.setattr(hpnet.detect, "detect", counted)
    _check(sysfs_tree("cx6-ib-dgx"), "ib", {"PATH": "/bin"}, monkeypatch)
    assert calls == ["detect"]
