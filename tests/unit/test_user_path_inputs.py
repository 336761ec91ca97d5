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


def test_a_saved_check_report_says_when_where_and_how_it_was_made(
    sysfs_tree: Callable[[str], Path], tmp_path: Path
) -> None:
    """The check report had no date, hpnet version, host or command line (issue 26,
    item 5): report.json carries them in `run`, report.html under its title; a
    credential on the command line is redacted there."""
    import argparse
    import dataclasses
    from collections.abc import Mapping

    from hpnet import __version__
    from hpnet.check import run as check_run
    from hpnet.check.execute import Launched
    from hpnet.check.plan import StagePlan
    from hpnet.check.report import write_report
    from hpnet.cli.check import _run_info

    def launcher(stage: StagePlan, env: Mapping[str, str], directory: str) -> Launched:
        return Launched(bench=None, error="not run by this test")

    options = check_run.CheckOptions(
        profile="auto", sysfs_root=str(sysfs_tree("cx6-ib-dgx")), device="cpu"
    )
    report = check_run.run_check(options, {"PATH": "/bin"}, launcher=launcher)
    typed = ("hpnet", "check", "--report", "https://user:hunter2@example.com/out")
    report = dataclasses.replace(report, run=_run_info(argparse.Namespace(command_line=typed)))
    write_report(str(tmp_path), report)
    data = json.loads((tmp_path / "report.json").read_text())
    run = data["run"]
    assert set(run) == {"date", "hpnet", "host", "command"}
    assert run["hpnet"] == __version__ and run["date"].endswith("+00:00")
    assert "hunter2" not in run["command"] and run["command"].startswith("hpnet check --report")
    html = (tmp_path / "report.html").read_text()
    assert f"hpnet {__version__} on {run['host']}" in html and run["date"] in html
    assert "hunter2" not in html


def test_the_guides_hpnet_cites_are_pages_a_user_can_open() -> None:
    """Profiles, `env --explain` and Dockerfiles cited seed file names that do not ship
    with hpnet (issue 26, item 6): every source whose vendor page was found carries its
    URL, the English page where the vendor publishes one. The two guides whose page is
    not found publicly (Scnet, ECS eRDMA with AIACC) are the only ones without."""
    from hpnet.profiles import PROFILES, get_profile
    from hpnet.profiles.model import SEED_URLS

    without = set()
    for profile in map(get_profile, PROFILES):
        sources = [*profile.sources, *(s.source for s in profile.settings)]
        for source in sources:
            if source.seed in SEED_URLS:
                assert source.url == SEED_URLS[source.seed], source
                assert source.url.startswith("https://") and source.url in source.cite()
            elif source.url is None:
                without.add(source.seed)
    assert without <= {"001_2a9a15a98fd62c43.txt", "002_ef36f584565cda0e.txt"}
