"""``hpnet hang`` on real stuck jobs (issue 27): gloo jobs with one planted fault each,
recorded under tests/data/flight-recorder (tests/hang_plant.py; each directory's
.source.txt says what a correct tool concludes), watchdog lines posted in public
threads (tests/data/hang), and one planted job run live."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.hang.collect import collect
from hpnet.hang.flight import load_dump
from hpnet.hang.judge import judge
from hpnet.hang.ranklog import read_errors
from tests.conftest import DATA

FR = DATA / "flight-recorder"
ROOT = Path(__file__).parents[2]
HPNET = [sys.executable, "-m", "hpnet"]

#: directory -> (kind, ranks named, group, sequence number) of the first cause, from
#: each recording's conclusions
PLANTED = {
    "gloo-torch2.13-w4-skip-rank2": ("never-entered", (2,), "0", 5),
    "gloo-torch2.13-w4-sleep-rank2": ("never-entered", (2,), "0", 5),
    "gloo-torch2.13-w4-op-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-size-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-dtype-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-stop-rank2": ("silent", (2,), "0", 5),
    "gloo-torch2.13-w4-kill-rank2": ("gone", (2,), "0", 5),
    "gloo-torch2.13-w4-subgroup-rank1": ("never-entered", (1,), "1", 4),
    "gloo-torch2.13-w4-cascade-rank1": ("never-entered", (1,), "1", 3),
    "gloo-torch2.13-w3-op-pickle-rank1": ("mismatch", (1,), "0", 5),
}


def _hpnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HPNET, *args], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_every_planted_hang_is_named_with_its_rank_kind_and_collective(name: str) -> None:
    evidence = collect([str(FR / name)])
    report = judge(evidence.dumps, evidence.errors)
    kind, ranks, pg, seq = PLANTED[name]
    first = report.causes[0]
    assert (report.status, first.kind, first.ranks, first.pg, first.seq) == (
        "hang", kind, ranks, pg, seq,
    )  # fmt: skip
    assert first.consequence_of is None
    # every other cause follows from the first: one root per job
    assert all(c.consequence_of for c in report.causes[1:]), report.causes
    assert report.exit_code == 1


def test_a_subgroup_hang_leaves_the_world_group_out_of_the_verdict() -> None:
    evidence = collect([str(FR / "gloo-torch2.13-w4-subgroup-rank1")])
    report = judge(evidence.dumps, evidence.errors)
    assert [c.pg for c in report.causes] == ["1"]
    world = next(g for g in report.groups if g.pg == "0")
    assert set(world.last.values()) == {8}  # every rank finished the world group's 8


def test_the_cascade_names_the_subgroup_first_and_the_world_group_as_its_consequence() -> None:
    evidence = collect([str(FR / "gloo-torch2.13-w4-cascade-rank1")])
    report = judge(evidence.dumps, evidence.errors)
    root, then = report.causes
    assert (then.pg, then.seq, then.ranks, then.waiting) == ("0", 7, (0, 1), (2, 3))
    assert then.consequence_of == root.label() == "all_reduce #3 of group 1 (undefined)"


def test_a_clean_job_names_no_one_and_exits_0() -> None:
    done = _hpnet("hang", str(FR / "gloo-torch2.13-w4-clean"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hpnet hang: NO HANG — every rank of every group reached")


def test_the_command_prints_the_verdict_first_and_json_with_its_schema() -> None:
    path = str(FR / "gloo-torch2.13-w4-kill-rank2")
    text = _hpnet("hang", path)
    assert text.returncode == 1
    assert text.stdout.splitlines()[0] == (
        "hpnet hang: STUCK — rank 2 died: no dump, peers lost the connection, at all_reduce #5 "
        "of group 0 (default_pg); ranks 0, 1, 3 wait in it"
    )
    assert "Connection closed by peer" in text.stdout  # the peers' own line, quoted
    data = json.loads(_hpnet("hang", "--json", path).stdout)
    assert list(data)[:2] == ["schema_version", "status"] and data["exit_code"] == 1
    assert data["causes"][0]["kind"] == "gone" and data["without_dump"] == [2]


def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (Path.touch, (str(marker),))

    raw = pickle.dumps({"version": "2.10", "entries": [Payload()], "pg_config": {}})
    with pytest.raises(InputError) as info:
        load_dump(str(tmp_path / "nccl_trace_rank_0"), raw)
    assert info.value.code == "hang-dump" and "refused" in str(info.value)
    assert not marker.exists()


def test_nothing_to_read_is_an_input_error_naming_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the job was slow\n")
    done = _hpnet("hang", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error[hang-no-evidence]")
    assert "TORCH_FR_DUMP_TEMP_FILE" in done.stderr


def test_watchdog_lines_alone_say_who_timed_out_and_who_entered() -> None:
    """A real post (BasicSR #737, torch 2.5-era prefixes): three ranks time out in
    ALLREDUCE #808 of the default group; ranks 0 and 1 had enqueued to #811, so they
    entered it and wait. No rank's line shows which rank is behind: unknown, exit 1."""
    path = DATA / "hang" / "torch-pgid0-default_pg-allreduce-seq808-enqueued811-3ranks-EXCERPT.txt"
    errors = read_errors(str(path), path.read_bytes())
    by_rank = {(e.rank, e.seq, e.op, e.pg, e.last_enqueued, e.last_completed) for e in errors}
    assert (1, 808, "allreduce", None, None, None) in by_rank
    assert (0, 808, None, "0", 811, 807) in by_rank
    report = judge([], errors)
    assert report.status == "unknown" and report.exit_code == 1
    assert report.headline.startswith(
        "ranks 0, 1, 2 timed out in allreduce #808 of group 0; ranks 0, 1 had enqueued up to #811"
    )


def test_a_live_planted_mismatch_is_named(tmp_path: Path) -> None:
    """One planted job run here, with this machine's torch: the harness and torch's
    Flight Recorder format still meet."""
    planted = subprocess.run(
        [sys.executable, "-m", "tests.hang_plant", "run", "--plant", "op", "--world", "3",
         "--culprit", "1", "--at", "1", "--steps", "2", "--timeout", "2", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert planted.returncode == 0, planted.stderr[-2000:]
    assert json.loads((tmp_path / "plant.json").read_text())["exit"] != [0, 0, 0]
    done = _hpnet("hang", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.startswith(
        "hpnet hang: STUCK — rank 1 called another collective than the group at all_reduce #3"
    )


def test_a_truncated_dump_is_listed_and_the_other_ranks_are_still_judged(tmp_path: Path) -> None:
    """On the 64-core machine the harness killed a rank while it wrote its dump; the
    whole folder was refused for that one file. The others are evidence: judged, and
    the file is named with why it could not be read."""
    import shutil

    job = tmp_path / "job"
    shutil.copytree(FR / "gloo-torch2.13-w4-skip-rank2", job)
    whole = (job / "nccl_trace_rank_3").read_bytes()
    (job / "nccl_trace_rank_3").write_bytes(whole[: len(whole) // 2])
    evidence = collect([str(job)])
    report = judge(evidence.dumps, evidence.errors, unreadable=evidence.unreadable)
    assert [d.rank for d in sorted(evidence.dumps, key=lambda d: d.rank)] == [0, 1, 2]
    assert report.unreadable and report.unreadable[0].startswith(f"{job / 'nccl_trace_rank_3'}: ")
    assert (report.causes[0].kind, report.causes[0].ranks) == ("never-entered", (2,))
