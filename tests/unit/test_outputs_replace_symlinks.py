"""Issue 23: a symlink planted where hpnet writes a report, a saved result or a figure
(a shared ``--report`` directory, /tmp) is replaced by the file, never written
through: the file it points to is left as it was (hpnet.outputfile)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from hpnet.cli.main import main
from tests.unit.test_isolate_schema_doc import documents
from tests.unit.test_results_kept import _check_report, environment

HPNET = [sys.executable, "-m", "hpnet"]
MINE = "the victim's own content\n"


def plant(tmp_path: Path, *targets: Path) -> Path:
    """A victim file, and a symlink to it at each target."""
    victim = tmp_path / "victim.txt"
    victim.write_text(MINE)
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(victim)
    return victim


def replaced(victim: Path, *targets: Path) -> None:
    """The victim untouched; each target a regular file of its own."""
    assert victim.read_text() == MINE
    for target in targets:
        assert not target.is_symlink(), target
        assert target.is_file(), target
        assert target.read_text() != MINE, target


def test_check_report_replaces_planted_symlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpnet.check import run as check_run

    out = tmp_path / "shared"
    page, data = out / "report.html", out / "report.json"
    victim = plant(tmp_path, page, data)
    monkeypatch.setattr(check_run, "run_check", lambda *_args, **_kwargs: _check_report())
    assert main(["check", "--device", "cpu", "--report", str(out)]) == 1
    replaced(victim, page, data)
    assert json.loads(data.read_text())["headline"] == "no RDMA network"
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert "hpnet check: NOT READY" in capsys.readouterr().out


def test_isolate_report_replaces_planted_symlinks(tmp_path: Path) -> None:
    from hpnet.isolate.report import write_report

    page, data = tmp_path / "out" / "report.html", tmp_path / "out" / "report.json"
    victim = plant(tmp_path, page, data)
    document: dict[str, Any] = documents()["clean"]
    write_report(str(tmp_path / "out"), document)
    replaced(victim, page, data)
    assert json.loads(data.read_text()) == document


def test_bench_save_and_plot_replace_planted_symlinks(tmp_path: Path) -> None:
    """A real `hpnet bench` on 2 gloo ranks: --save and --plot go where the links were,
    and so does the spec it writes for its ranks in a shared --logs directory."""
    pytest.importorskip("torch")
    saved, figure = tmp_path / "out" / "run.json", tmp_path / "out" / "run.svg"
    spec = tmp_path / "logs" / "spec.json"
    victim = plant(tmp_path, saved, figure, spec)
    done = subprocess.run(
        [*HPNET, "bench", "--device", "cpu", "--nproc", "2", "-b", "8", "-e", "8", "-n", "2",
         "--save", str(saved), "--plot", str(figure), "--logs", str(spec.parent)],
        capture_output=True, text=True, timeout=300, env=environment(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    replaced(victim, saved, figure, spec)
    assert json.loads(saved.read_text())["runs"][0]["rows"][0]["size_bytes"] == 8
    assert figure.read_text().startswith("<svg")


def test_a_figure_from_a_saved_result_replaces_a_planted_symlink(tmp_path: Path) -> None:
    """`hpnet bench plot` (and import / compare, through the same writer)."""
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(_saved_result()))
    figure = tmp_path / "out" / "plot.svg"
    victim = plant(tmp_path, figure)
    assert main(["bench", "plot", str(saved), "-o", str(figure)]) == 0
    replaced(victim, figure)


def test_a_bench_checkpoint_replaces_a_planted_symlink(tmp_path: Path) -> None:
    """Under a launcher rank 0 keeps its rows beside --save after every row: neither the
    checkpoint nor a file beside it is written through a link."""
    from hpnet.bench.worker import write_json

    checkpoint = tmp_path / "run.json.partial.json"
    victim = plant(tmp_path, checkpoint, Path(f"{checkpoint}.partial"))
    write_json(str(checkpoint), {"runs": [], "complete": False})
    replaced(victim, checkpoint)
    assert json.loads(checkpoint.read_text()) == {"runs": [], "complete": False}


def test_launch_files_keep_their_mode(tmp_path: Path) -> None:
    """The helper moved out of hpnet launch: its files still get their own mode."""
    from hpnet.launch.execute import write_files
    from hpnet.launch.plan import GeneratedFile, LaunchPlan

    script = tmp_path / "job.sbatch"
    victim = plant(tmp_path, script)
    file = GeneratedFile(path=str(script), content="#!/bin/sh\n", purpose="batch", mode=0o750)
    write_files(cast(LaunchPlan, SimpleNamespace(files=(file,))))  # only its files are read
    replaced(victim, script)
    assert os.stat(script).st_mode & 0o777 == 0o750


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    from hpnet.outputfile import write_file

    before = os.umask(0o027)
    try:
        write_file(str(tmp_path / "r.json"), "{}")
    finally:
        os.umask(before)
    assert os.stat(tmp_path / "r.json").st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def _saved_result() -> dict[str, Any]:
    cell = {"time_us": 10.0, "algbw_gbps": 1.0, "busbw_gbps": 1.0, "wrong": 0}
    row = {"size_bytes": 1024, "count": 256, "dtype": "float", "redop": "sum", "root": -1,
           "out_of_place": cell, "in_place": cell}  # fmt: skip
    return {"source": "hpnet", "runs": [{"op": "all_reduce", "nranks": 2, "rows": [row]}],
            "metadata": {}}  # fmt: skip
