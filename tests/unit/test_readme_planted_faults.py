"""The planted-fault example is the program's output (issue 25): the doctor run that
docs/doctor.md shows (it moved there from the README, issue 26), on the recorded RoCE
tree, byte for byte from "Fixes, most important first:" on; and hpnet check lists the
same problems in the same order."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from hpnet.cli.main import main

PAGE = Path(__file__).parents[2] / "docs" / "doctor.md"
FAULTS = {"NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "nosuch0", "NCCL_IB_HCAA": "mlx5_0"}


def _block() -> str:
    text = PAGE.read_text()
    block = text.split("<!-- planted faults -->\n```\n", 1)[1].split("```\n<!-- end", 1)[0]
    assert "hpnet doctor --sysfs-root /tmp/roce" in block
    return block.split("...\n", 1)[1]


def test_the_readme_shows_what_the_doctor_prints(
    sysfs_tree: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = sysfs_tree("cx-roce-mixed-gids")
    for name in [n for n in os.environ if n.startswith("NCCL_")]:
        monkeypatch.delenv(name)
    for name, value in FAULTS.items():
        monkeypatch.setenv(name, value)
    main(["doctor", "--sysfs-root", str(root)])
    out = capsys.readouterr().out
    assert "Fixes, most important first:\n" + out.split("Fixes, most important first:\n", 1)[1] == (
        _block()
    )


def test_check_lists_the_same_problems_in_the_same_order(
    sysfs_tree: Callable[[str], Path],
) -> None:
    from hpnet.check import run as check_run
    from hpnet.check.execute import Launched
    from hpnet.check.plan import StagePlan

    def launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
        return Launched(bench=None, error="not run by this test")

    options = check_run.CheckOptions(
        profile="auto", sysfs_root=str(sysfs_tree("cx-roce-mixed-gids")), device="cpu"
    )
    report = check_run.run_check(options, {"PATH": "/bin", **FAULTS}, launcher=launcher)
    doctor = [
        p.code.removeprefix("doctor:") for p in report.problems if p.code.startswith("doctor:")
    ]
    assert doctor == re.findall(r"^  \d+\. \[([\w.]+)\]", _block(), re.MULTILINE)
