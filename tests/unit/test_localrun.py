"""Local rank processes run as one job: one fails, all end; nothing is left behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from hpnet.localrun import RankSpec, free_port, run_ranks


def spec(tmp_path: Path, rank: int, code: str) -> RankSpec:
    return RankSpec(
        rank=rank,
        argv=(sys.executable, "-c", code),
        env=dict(os.environ),
        log_path=str(tmp_path / f"rank{rank}.log"),
    )


def alive(pid: int) -> bool:
    """Running, not a zombie (a PID 1 that does not reap would keep those forever)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def test_all_ranks_succeed_and_their_output_is_kept(tmp_path: Path) -> None:
    results = run_ranks(
        [spec(tmp_path, r, f"print('hello from {r}')") for r in range(3)], timeout_seconds=60
    )
    assert [r.returncode for r in results] == [0, 0, 0]
    assert (tmp_path / "rank2.log").read_text() == "hello from 2\n"


def test_a_failing_rank_ends_the_others_promptly(tmp_path: Path) -> None:
    started = time.monotonic()
    results = run_ranks(
        [
            spec(tmp_path, 0, "import time; time.sleep(60)"),
            spec(tmp_path, 1, "import sys; sys.exit(3)"),
            spec(tmp_path, 2, "import time; time.sleep(60)"),
        ],
        timeout_seconds=120,
    )
    assert time.monotonic() - started < 20
    assert results[1].returncode == 3 and results[1].ended_by is None
    assert results[0].ended_by == results[2].ended_by == "peer-failed"
    assert results[0].returncode is not None and results[0].returncode < 0


def test_timeout_ends_a_hung_job(tmp_path: Path) -> None:
    results = run_ranks([spec(tmp_path, 0, "import time; time.sleep(60)")], timeout_seconds=1)
    assert results[0].ended_by == "timeout" and not results[0].ok


def test_no_orphans_even_of_grandchildren(tmp_path: Path) -> None:
    """A rank that started a child of its own takes it along."""
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "sys.exit(1)\n"
    )
    run_ranks([spec(tmp_path, 0, code)], timeout_seconds=60)
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_free_port_is_a_port() -> None:
    assert 1024 <= free_port() <= 65535
