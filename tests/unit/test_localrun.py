"""Local rank processes run as one job: one fails, all end; nothing is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hpnet
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


def test_no_orphans_even_in_sessions_of_their_own(tmp_path: Path) -> None:
    """A grandchild in a session of its own (torchrun starts its workers so) outlives
    its parent's session kill; hpnet, its subreaper while the job runs, ends it."""
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],\n"
        "                         start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "sys.exit(1)\n"
    )
    started = time.monotonic()
    run_ranks([spec(tmp_path, 0, code)], timeout_seconds=60)
    child = int(pidfile.read_text())
    assert not alive(child), "the grandchild in its own session was left running"
    assert time.monotonic() - started < 20


def test_free_port_is_a_port() -> None:
    assert 1024 <= free_port() <= 65535


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_runner_ends_every_rank(tmp_path: Path, sig: signal.Signals) -> None:
    """`timeout -s TERM`, scancel (SIGTERM) or a closed terminal (SIGHUP) stop the process
    that runs the ranks. The ranks live in sessions of their own and get nothing: without
    a handler they were orphaned. Now they are ended first, and the runner exits with
    128 + the signal."""
    pids = tmp_path / "pids"
    pids.mkdir()
    rank = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
    driver = (
        "import os, sys\n"
        "from hpnet.errors import Terminated\n"
        "from hpnet.localrun import RankSpec, run_ranks\n"
        f"specs = [RankSpec(rank=r, argv=(sys.executable, '-c', {rank!r}, f'{pids}/{{r}}'),\n"
        f"                  env=dict(os.environ), log_path=f'{tmp_path}/rank{{r}}.log')\n"
        "         for r in range(3)]\n"
        "try:\n"
        "    run_ranks(specs, timeout_seconds=120)\n"
        "except Terminated as exc:\n"
        "    sys.exit(128 + exc.signum)\n"
    )
    source = str(Path(hpnet.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    runner = subprocess.Popen(
        [sys.executable, "-c", driver], env={**os.environ, "PYTHONPATH": path}
    )
    deadline = time.monotonic() + 30
    while sum(1 for p in pids.iterdir() if p.read_text()) < 3:
        assert time.monotonic() < deadline and runner.poll() is None, "the ranks did not start"
        time.sleep(0.05)
    ranks = [int(p.read_text()) for p in pids.iterdir()]
    runner.send_signal(sig)
    assert runner.wait(timeout=30) == 128 + sig
    assert not [pid for pid in ranks if alive(pid)]


def test_verify_run_removes_its_directory_when_terminated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpnet import localrun
    from hpnet.cli.main import main
    from hpnet.errors import Terminated
    from hpnet.verify import probe

    made: list[str] = []

    def mkdtemp(prefix: str) -> str:
        made.append(str(tmp_path / f"{prefix}x"))
        os.makedirs(made[-1])
        return made[-1]

    def terminated(*_args: object, **_kwargs: object) -> None:
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(probe, "_gpu_count", lambda _environ: 2)
    monkeypatch.setattr(probe.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(localrun, "run_ranks", terminated)
    assert main(["verify", "--run"]) == 128 + signal.SIGTERM
    assert made and not os.path.exists(made[0])
    assert "error[terminated]: stopped by SIGTERM" in capsys.readouterr().err


def test_the_callers_signal_handlers_come_back(tmp_path: Path) -> None:
    """Handlers are the caller's again afterwards; a SIGHUP it ignores (nohup) stays so."""
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        term = signal.getsignal(signal.SIGTERM)
        run_ranks([spec(tmp_path, 0, "pass")], timeout_seconds=60)
        assert signal.getsignal(signal.SIGTERM) is term
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
