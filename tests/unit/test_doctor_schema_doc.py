"""docs/doctor-schema.md and docs/profiles-schema.md agree with `hpnet doctor --json`
and `hpnet profiles [show NAME] --json`, key path by key path (both ways)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.profiles import PROFILES
from tests.unit.test_schema_doc import documented_paths, emitted_paths

DOCS = Path(__file__).parents[2] / "docs"
DOCTOR = documented_paths((DOCS / "doctor-schema.md").read_text())
PROFILES_DOC = documented_paths((DOCS / "profiles-schema.md").read_text())


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code = main(args)
    assert code in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict) and data["schema_version"] == 1
    return data


@pytest.fixture(autouse=True)
def no_nccl_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def test_doctor_output_and_doc_agree(
    sysfs_tree: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NCCL_IB_TIMEOUTS", "22")  # a WARN with a fix and a note
    emitted: set[str] = set()
    for tree in ("cx-roce-mixed-gids", "no-rdma-vm"):
        root = str(sysfs_tree(tree))
        data = run_json(["doctor", "--profile", "roce", "--sysfs-root", root, "--json"], capsys)
        emitted |= set(emitted_paths(data))
    assert emitted - DOCTOR == set(), "emitted but not documented"
    assert DOCTOR - emitted == set(), "documented but never emitted"


def test_profiles_output_and_doc_agree(capsys: pytest.CaptureFixture[str]) -> None:
    listed = run_json(["profiles", "--json"], capsys)
    emitted = set(emitted_paths(listed))
    for name in PROFILES:
        shown = run_json(["profiles", "show", name, "--json"], capsys)
        # `show` prints one profile's keys at the top, beside schema_version
        emitted |= {
            path if path == "schema_version" else f"profiles[].{path}"
            for path in emitted_paths(shown)
        }
        assert {k: v for k, v in shown.items() if k != "schema_version"} in listed["profiles"]  # type: ignore[operator]
    assert emitted - PROFILES_DOC == set(), "emitted but not documented"
    assert PROFILES_DOC - emitted == set(), "documented but never emitted"
