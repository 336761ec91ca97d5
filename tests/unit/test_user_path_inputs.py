"""Inputs and outputs on a newcomer's path (issue 26, item 5): ``--sysfs-root`` takes a
recorded tree file as it is (the README points at ``tests/data/sysfs/*.tree``; no
``python -m hpnet.node.snapshot materialize`` step first), and an output under a missing
directory is refused up front by check as by bench."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA

TREE = DATA / "sysfs" / "cx6-ib-dgx.tree"


@pytest.mark.parametrize("command", ["detect", "env", "doctor"])
def test_a_tree_file_is_read_as_the_node_it_records(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [command, "--sysfs-root", str(TREE), "--json"]
    if command == "env":
        args[-1:] = ["--format", "json"]
    assert main(args) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    text = json.dumps(data)
    # the node's InfiniBand ports, read from the tree, and the tree named as the source
    assert "mlx5_0" in text
    assert f"sysfs-root {TREE}" in text


def test_the_same_answer_as_the_materialized_tree(
    sysfs_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    main(["env", "--sysfs-root", str(sysfs_tree("cx6-ib-dgx")), "--format", "json"])
    materialized = json.loads(capsys.readouterr().out)
    main(["env", "--sysfs-root", str(TREE), "--format", "json"])
    from_file = json.loads(capsys.readouterr().out)
    for data in (materialized, from_file):
        data.pop("node")
    assert from_file == materialized


def test_a_file_that_is_not_a_tree_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mlx5_0 port 1 ==> ib0 (Up)\n")
    assert main(["doctor", "--sysfs-root", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error[sysfs-root-not-a-tree]")
    assert str(notes) in err and "a .tree file" in err


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--report", "{missing}/report"],
        ["bench", "--device", "cpu", "--save", "{missing}/bench.json"],
    ],
)
def test_an_output_under_a_missing_directory_is_refused_before_any_work(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --report /nonexistent/dir`` made directories at / (issue 26, item 5):
    check now refuses a report directory whose parent does not exist, as bench refuses
    a --save file there, before anything runs, and creates nothing."""
    missing = tmp_path / "nonexistent"
    argv = [a.replace("{missing}", str(missing)) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error[unwritable]") and f"{missing} does not exist" in err
    assert not missing.exists()
