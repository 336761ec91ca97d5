"""What `hpnet bench`, `hpnet check` and `hpnet verify --run` must withstand with the
ranks they start on this node (issue 15): no secret reaches a local rank; Ctrl-C and
SIGTERM keep (print and save) every row measured; an output path that cannot be
written is refused before any rank starts, and a result whose file fails is still
printed; concurrent checks sharing --logs keep apart; the rank that died is the one
blamed; --nproc is bounded; check prints no secret value."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import hpnet
from hpnet.bench.model import BenchReport, BenchRun, BenchSpec, Measurement, Row
from hpnet.cli.main import main

HPNET = [sys.executable, "-m", "hpnet"]
SECRETS = {
    "KUBECONFIG": "/home/u/.kube/config",
    "https_proxy": "http://alice:s3cret@proxy.corp:3128",
    "PIP_INDEX_URL": "https://bob:hunter2@pypi.corp/simple",
    "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=a;"
    "AccountKey=abc==",
    "HF_TOKEN": "hf_abcdef",
}
NEEDED = {"PATH", "HOME", "CUDA_VISIBLE_DEVICES", "NCCL_IB_HCA", "NCCL_DEBUG", "PYTHONPATH"}


def environment(**extra: str) -> dict[str, str]:
    """This process's environment with hpnet importable, NCCL_* and secrets cleared."""
    from hpnet.secrets import is_secret

    source = str(Path(hpnet.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_") and not is_secret(k, v)}
    env.update(PYTHONPATH=path, CUDA_VISIBLE_DEVICES="", HOME=env.get("HOME", "/root"))
    env.update(extra)
    return env


def alive(pid: int) -> bool:
    """Running, not a zombie (as tests/unit/test_localrun.py checks)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def rank_of(pid: int) -> int | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for item in raw.split(b"\0"):
        if item.startswith(b"RANK="):
            return int(item[5:])
    return None


#: 8 B .. 64 MiB by 2: 24 sizes, of which a fast machine measures the small ones in a
#: second; the test stops the sweep after its first row, long before the last
SWEEP = ["-b", "8", "-e", "64M", "-f", "2", "-n", "200"]
NUM_SIZES = 24


def start_bench(
    tmp_path: Path, *flags: str, command: tuple[str, ...] = (*HPNET, "bench"), **env: str
) -> subprocess.Popen[bytes]:
    """`hpnet bench` on 2 gloo ranks, long enough to be stopped part-way; Ctrl-C is
    SIGINT's default again in it (a test runner may have it ignored). The output files
    are the child's; this process keeps no handle on them."""
    with (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        return subprocess.Popen(
            [*command, "--device", "cpu", "--nproc", "2", *flags],
            stdout=out, stderr=err, env=environment(**env),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )  # fmt: skip


def stop(runner: subprocess.Popen[bytes]) -> None:
    """Whatever the test met: no hpnet, and none of its ranks, left running."""
    if runner.poll() is None:
        ranks = children(runner.pid)
        runner.kill()
        runner.wait()
        for pid in ranks:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def wait_for_rows(runner: subprocess.Popen[bytes], tmp_path: Path) -> list[int]:
    """Wait until rank 0 reported a measured row (its progress line); the ranks' pids."""
    deadline = time.monotonic() + 90
    while "hpnet bench: " not in (tmp_path / "err").read_text():
        assert runner.poll() is None, (tmp_path / "err").read_text()
        assert time.monotonic() < deadline, "no row was measured"
        time.sleep(0.05)
    ranks = children(runner.pid)
    assert len(ranks) == 2
    return ranks


# ---------------------------------------------------------------- 6: no secret in a local rank


def test_local_ranks_inherit_no_secret(tmp_path: Path) -> None:
    """bench and check start their ranks through hpnet.bench.run: a proxy or index URL
    with a password, a kubeconfig, an Azure connection string or a token stays out;
    what the ranks need (PATH, HOME, CUDA_*, NCCL_*, MASTER_*) goes in."""
    from hpnet.bench import run as bench

    dump = tmp_path / "env"
    fake = tmp_path / "worker.py"
    fake.write_text(
        "import json, os, sys\n"
        f"json.dump(dict(os.environ), open({str(dump)!r} + os.environ['RANK'], 'w'))\n"
        "json.dump({'runs': [], 'metadata': {}, 'complete': True}, open(sys.argv[2], 'w'))\n"
    )
    plan = bench.plan_local(BenchSpec(sizes=(8,)), nproc=2, device="cpu", port=1,
                            python=sys.executable)  # fmt: skip
    plan = dataclasses.replace(plan, argv=(sys.executable, str(fake)))
    caller = environment(NCCL_IB_HCA="mlx5_0", NCCL_DEBUG="WARN", **SECRETS)
    outcome = bench.execute(plan, environ=caller, progress=False)
    assert outcome.failure is None
    for rank in (0, 1):
        got = json.loads(Path(f"{dump}{rank}").read_text())
        assert not set(SECRETS) & set(got), rank
        assert not [v for v in got.values() if "s3cret" in v or "hunter2" in v]
        assert set(got) >= NEEDED
        assert got["MASTER_ADDR"] == "127.0.0.1" and got["RANK"] == str(rank)


def test_verify_run_ranks_inherit_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from hpnet import localrun
    from hpnet.verify import probe

    seen: list[dict[str, str]] = []

    class Stop(Exception):
        pass

    def capture(specs: list[localrun.RankSpec], **_kwargs: object) -> None:
        seen.extend(dict(s.env) for s in specs)
        raise Stop

    monkeypatch.setattr(probe, "_gpu_count", lambda _environ: 2)
    monkeypatch.setattr(localrun, "run_ranks", capture)
    with pytest.raises(Stop):
        probe.run_probe(
            nproc=None, fake_hosts=1, environ=environment(NCCL_IB_HCA="mlx5", **SECRETS)
        )
    assert len(seen) == 2
    for env in seen:
        assert not set(SECRETS) & set(env)
        assert env["NCCL_IB_HCA"] == "mlx5" and "PATH" in env


# ------------------------------------------------------- 8: Ctrl-C and SIGTERM keep the rows


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_bench_prints_and_saves_what_it_measured(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    """Real gloo ranks, a real signal to hpnet after the first row: the rows are
    printed and saved marked incomplete, the exit says which signal, no rank is left."""
    saved = tmp_path / "run.json"
    runner = start_bench(tmp_path, *SWEEP, "--save", str(saved))
    try:
        ranks = wait_for_rows(runner, tmp_path)
        runner.send_signal(sig)
        assert runner.wait(timeout=60) == code
    finally:
        stop(runner)
    out, err = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert not [pid for pid in ranks if alive(pid)], "a rank was left running"
    assert "Traceback" not in err
    assert err.rstrip().endswith(f"stopped by {'the user' if code == 130 else sig.name}"), err
    assert f"stopped by {sig.name}" in out and "# FAIL: " in out
    assert re.search(r"^\s+8\s+2\s+float\s+sum", out, re.MULTILINE), out  # the first row
    data = json.loads(saved.read_text())
    assert data["status"] == "FAIL"
    assert data["incomplete"].startswith(f"stopped by {sig.name}")
    assert data["runs"][0]["rows"] and data["runs"][0]["rows"][0]["size_bytes"] == 8
    assert len(data["runs"][0]["rows"]) < NUM_SIZES  # stopped part-way
    # the rank logs are named, not lost in an unnamed temporary directory
    logs = Path(data["incomplete"].rsplit("(rank logs: ", 1)[1].rstrip(")"))
    assert (logs / "rank0.log").is_file() and (logs / "rank1.log").is_file()


#: ranks that ignore SIGTERM (as a rank stuck in a collective may): only SIGKILL, after
#: the grace period, ends them
STUBBORN = """
import json, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.environ["RANK"] == "0":
    cell = {"time_us": 10.0, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "wrong": 0}
    row = {"size_bytes": 8, "count": 2, "dtype": "float", "redop": "sum", "root": -1,
           "out_of_place": None, "in_place": cell}
    data = {"runs": [{"op": "all_reduce", "nranks": 2, "rows": [row]}],
            "metadata": {"backend": "gloo"}, "complete": False}
    json.dump(data, open(sys.argv[2] + ".tmp", "w"))
    os.replace(sys.argv[2] + ".tmp", sys.argv[2])
    print("hpnet bench: 1/2 all_reduce 8 B", file=sys.stderr, flush=True)
while True:
    time.sleep(1)
"""
#: `hpnet bench` whose ranks are STUBBORN, with a 2 s grace period
DRIVER = """
import sys
from hpnet import localrun
from hpnet.bench import run as bench
from hpnet.cli.main import main

localrun.GRACE_SECONDS = 2.0
plan_local = bench.plan_local
bench.plan_local = lambda *a, **k: plan_local(*a, **{**k, "worker": "stubborn_rank"})
sys.exit(main(["bench", *sys.argv[1:]]))
"""


def test_a_second_ctrl_c_leaves_no_rank_running(tmp_path: Path) -> None:
    """An impatient user presses Ctrl-C again while hpnet waits for the ranks to end:
    that must not cut the ending short (ranks that ignore SIGTERM still get SIGKILL),
    and the rows are still saved."""
    (tmp_path / "stubborn_rank.py").write_text(STUBBORN)
    (tmp_path / "driver.py").write_text(DRIVER)
    saved = tmp_path / "run.json"
    source = environment()["PYTHONPATH"]
    runner = start_bench(
        tmp_path, "--save", str(saved), command=(sys.executable, str(tmp_path / "driver.py")),
        PYTHONPATH=os.pathsep.join((str(tmp_path), source)),
    )  # fmt: skip
    try:
        ranks = wait_for_rows(runner, tmp_path)
        runner.send_signal(signal.SIGINT)
        time.sleep(0.5)  # hpnet is in its 2 s grace period now: the ranks ignore SIGTERM
        assert all(alive(pid) for pid in ranks)
        runner.send_signal(signal.SIGINT)
        assert runner.wait(timeout=60) == 130
    finally:
        stop(runner)
        leftover = [pid for pid in ranks if alive(pid)]
        for pid in leftover:
            os.kill(pid, signal.SIGKILL)
    assert not leftover, "a rank was left running"
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err, err
    data = json.loads(saved.read_text())
    assert data["incomplete"].startswith("stopped by SIGINT") and data["runs"][0]["rows"]


# ---------------------------------------------------------------- 9: outputs checked up front


@pytest.fixture
def no_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any rank or check would start."""
    from hpnet import localrun
    from hpnet.check import run as check_run

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the work started before the output path was checked")

    monkeypatch.setattr(localrun, "run_ranks", refuse)
    monkeypatch.setattr(check_run, "run_check", refuse)


@pytest.mark.usefixtures("no_ranks")
@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["bench", "--save", "{tmp}/missing/run.json"], "does not exist"),
        (["bench", "--save", "{tmp}"], "is a directory"),
        (["bench", "--save", "{tmp}/file/run.json"], "is not a directory"),
        (["bench", "--plot", "{tmp}/missing/run.svg"], "does not exist"),
        (["bench", "--plot", "{tmp}/run.pdf"], "unknown figure type"),
        (["bench", "--logs", "{tmp}/file"], "is a file"),
        (["check", "--report", "{tmp}/file"], "is a file"),
        (["check", "--report", "{tmp}/file/out"], "is not a directory"),
        (["check", "--logs", "{tmp}/file/logs"], "is not a directory"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], said: str
) -> None:
    (tmp_path / "file").write_text("x")
    argv = [f.format(tmp=tmp_path) for f in flags]
    started = time.monotonic()
    assert main([*argv[:1], "--device", "cpu", *argv[1:]]) == 2
    assert time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert said in err and err.startswith("error["), err
    assert str(tmp_path) in err


def _report() -> BenchReport:
    cell = Measurement(time_us=10.0, algbw_gbps=1.0, busbw_gbps=1.0, wrong=0)
    row = Row(size_bytes=8, count=2, dtype="float", redop="sum", root=-1, out_of_place=None,
              in_place=cell)  # fmt: skip
    run = BenchRun(op="all_reduce", nranks=2, rows=(row,), avg_busbw_gbps=1.0)
    return BenchReport(source="hpnet bench", runs=(run,), metadata={"backend": "gloo"})


def test_a_bench_result_is_printed_when_its_file_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The directory goes away during the run: the table is printed all the same, and
    the error names the file that could not be written."""
    from hpnet.bench import run as bench

    out = tmp_path / "out"
    out.mkdir()

    def run_plan(*_args: object, **_kwargs: object) -> BenchReport:
        out.rmdir()
        return _report()

    monkeypatch.setattr(bench, "run_plan", run_plan)
    saved = out / "run.json"
    assert main(["bench", "--device", "cpu", "--save", str(saved)]) == 2
    printed = capsys.readouterr()
    assert "# PASS: all_reduce" in printed.out and "   10.00 " in printed.out
    assert "error[unwritable]" in printed.err and str(saved) in printed.err


def test_a_check_report_is_printed_when_its_directory_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpnet.check import run as check_run

    parent = tmp_path / "a"
    parent.mkdir()

    def run_check(*_args: object, **_kwargs: object) -> Any:
        parent.rmdir()
        parent.write_text("now a file")
        return _check_report()

    monkeypatch.setattr(check_run, "run_check", run_check)
    assert main(["check", "--report", str(parent / "out")]) == 2
    printed = capsys.readouterr()
    assert printed.out.startswith("hpnet check: NOT READY")
    assert "error[unwritable]" in printed.err and str(parent / "out") in printed.err


# ---------------------------------------------------------------- 10: concurrent checks, own logs


def test_concurrent_checks_sharing_logs_keep_apart(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    runs = [
        subprocess.Popen(
            [*HPNET, "check", "--device", "cpu", "--json", "--logs", str(logs)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=240) for run in runs]
    dirs = []
    for (out, err), run in zip(outputs, runs, strict=True):
        assert run.returncode in (0, 1), err
        notes = [n for n in json.loads(out)["notes"] if "rank logs" in n]
        dirs.append(Path(notes[0].rsplit(" are in ", 1)[1]))
    assert dirs[0] != dirs[1]
    for directory in dirs:
        assert directory.parent == logs
        assert {p.name for p in (directory / "cpu").glob("rank*.log")} == {
            "rank0.log",
            "rank1.log",
        }


def test_a_bench_logs_directory_in_use_is_refused(tmp_path: Path) -> None:
    """Two `hpnet bench --logs DIR` at once would read each other's result file."""
    import fcntl

    from hpnet.bench import run as bench
    from hpnet.errors import InputError

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "result.json").write_text(json.dumps({"runs": [], "complete": True}))
    with (logs / ".hpnet-bench.lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        plan = bench.plan_local(BenchSpec(sizes=(8,)), nproc=1, device="cpu", port=1,
                                python=sys.executable)  # fmt: skip
        with pytest.raises(InputError) as caught:
            bench.execute(plan, environ=environment(), keep_dir=str(logs), progress=False)
    assert caught.value.code == "logs-in-use"
    # and a result an earlier run left there is not taken for this run's
    plan = dataclasses.replace(
        bench.plan_local(BenchSpec(sizes=(8,)), nproc=1, device="cpu", port=1,
                         python=sys.executable),
        argv=(sys.executable, "-c", "import sys; sys.exit(2)"),
    )  # fmt: skip
    outcome = bench.execute(plan, environ=environment(), keep_dir=str(logs), progress=False)
    assert outcome.data is None and outcome.failure is not None


# ---------------------------------------------------------------- 15: the rank that died is blamed


def test_the_rank_that_died_is_blamed_not_the_one_hpnet_ended(tmp_path: Path) -> None:
    from hpnet.bench import run as bench

    fake = tmp_path / "worker.py"
    fake.write_text(
        "import json, os, signal, sys, time\n"
        "if os.environ['RANK'] == '0':\n"
        "    row = {'size_bytes': 8, 'count': 2, 'dtype': 'float', 'redop': 'sum', 'root': -1,\n"
        "           'out_of_place': None, 'in_place': {'time_us': 10.0, 'algbw_gbps': 0.0,\n"
        "           'busbw_gbps': 0.0, 'wrong': 0, 'rank_times_us': [10.0, 9.0]}}\n"
        "    data = {'runs': [{'op': 'all_reduce', 'nranks': 2, 'rows': [row]}],\n"
        "            'metadata': {'backend': 'gloo'}, 'complete': False}\n"
        "    json.dump(data, open(sys.argv[2] + '.tmp', 'w'))\n"
        "    os.replace(sys.argv[2] + '.tmp', sys.argv[2])\n"
        "    time.sleep(60)\n"
        "while not os.path.exists(sys.argv[2]):\n"
        "    time.sleep(0.01)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    plan = bench.plan_local(BenchSpec(sizes=(8, 16)), nproc=2, device="cpu", port=1,
                            python=sys.executable)  # fmt: skip
    plan = dataclasses.replace(plan, argv=(sys.executable, str(fake)))
    report = bench.run_plan(plan, environ=environment(), metadata={}, progress=False)
    assert report.incomplete is not None
    assert report.incomplete.startswith("rank 1 was killed by SIGKILL"), report.incomplete
    assert "rank 0" not in report.incomplete


def test_a_real_rank_killed_mid_sweep_is_named_with_its_signal(tmp_path: Path) -> None:
    runner = start_bench(tmp_path, *SWEEP, "--json")
    try:
        ranks = wait_for_rows(runner, tmp_path)
        victim = next(pid for pid in ranks if rank_of(pid) == 1)
        os.kill(victim, signal.SIGKILL)
        assert runner.wait(timeout=60) == 1
    finally:
        stop(runner)
    data = json.loads((tmp_path / "out").read_text())
    assert data["incomplete"].startswith("rank 1 was killed by SIGKILL"), data["incomplete"]
    assert data["runs"][0]["rows"]
    assert not [pid for pid in ranks if alive(pid)]


def test_a_taken_rendezvous_port_is_named_with_the_fix() -> None:
    from hpnet.bench import run as bench
    from hpnet.errors import HpnetError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        plan = bench.plan_local(BenchSpec(sizes=(8,), device="cpu"), nproc=2, device="cpu",
                                port=port, python=sys.executable)  # fmt: skip
        with pytest.raises(HpnetError) as caught:
            bench.run_plan(plan, environ=environment(), metadata={}, progress=False)
    assert caught.value.code == "port-taken"
    assert f"the rendezvous port {port} on 127.0.0.1 is taken" in caught.value.what
    assert "EADDRINUSE" in caught.value.what and "ss -ltnp" in caught.value.fix


def test_how_a_rank_ended_in_words() -> None:
    from hpnet.localrun import RankResult, describe_exit, first_failure

    def result(rank: int, code: int, **kwargs: Any) -> RankResult:
        return RankResult(rank=rank, returncode=code, log_path="/nonexistent", **kwargs)

    assert describe_exit(result(0, 3)) == "exited with 3"
    assert describe_exit(result(0, -6)) == "was killed by SIGABRT"
    assert "after another rank failed" in describe_exit(result(0, -15, ended_by="peer-failed"))
    # seen in the same poll: the one a signal killed went first
    both = [result(0, 1, exited_after_seconds=1.0), result(1, -9, exited_after_seconds=1.0)]
    assert first_failure(both) == both[1]
    later = [result(0, 1, exited_after_seconds=0.5), result(1, -9, exited_after_seconds=1.0)]
    assert first_failure(later) == later[0]


# ---------------------------------------------------------------- 16: --nproc is bounded


@pytest.mark.usefixtures("no_ranks")
@pytest.mark.parametrize("command", ["bench", "check"])
def test_nproc_is_bounded_by_the_cpus(capsys: pytest.CaptureFixture[str], command: str) -> None:
    # 4 gloo ranks per core this process may use, 128 in all
    most = min(4 * len(os.sched_getaffinity(0)), 128)
    assert main([command, "--device", "cpu", "--nproc", "1000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error[too-many-ranks]") and "--nproc 1000" in err
    assert f"--nproc {most} or fewer" in err


# ---------------------------------------------------------------- check prints no secret


def _check_report(**environment: str) -> Any:
    from hpnet.check.model import CheckReport
    from hpnet.result import Problem, Verdict

    return CheckReport(
        verdict=Verdict.NOT_READY, headline="no RDMA network", node="n", profile="auto",
        transport="socket", gpus=0, gpu_name=None, rdma_ports=(),
        problems=(Problem(impact=1, what="no RDMA network", code="hardware:rdma",
                          evidence=("plugin from https://carol:pa55word@repo.corp/x",)),),
        stages=(), doctor={"PASS": 1}, doctor_checks=(), environment=dict(environment),
    )  # fmt: skip


def test_check_redacts_secret_values_in_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text, --json, report.json and report.html: no secret NCCL_* value, also where
    a doctor's message, a problem or a stage's error quotes it."""
    from hpnet.check import run as check_run
    from hpnet.check.model import DoctorFinding, Stage
    from hpnet.result import Problem, Status

    report = _check_report(
        NCCL_SOCKET_IFNAME="=eth0",
        NCCL_NET_TOKEN="tok-123456",
        NCCL_NET_PLUGIN="https://dave:letmein@plugins.corp/net.so",
    )
    report = dataclasses.replace(
        report,
        problems=(
            *report.problems,
            Problem(impact=5, what="NCCL_NET_TOKEN=tok-123456 is not NCCL's", code="doctor:x",
                    evidence=("NCCL INFO NCCL_NET_TOKEN set by environment to tok-123456",)),
        ),
        stages=(Stage(name="cpu", backend="gloo", nranks=2, bench=None, judgement=None,
                      error="rank 0 exited with 1: token tok-123456 refused"),),
        doctor_checks=(DoctorFinding(id="env", status=Status.WARN,
                                     summary="NCCL_NET_TOKEN=tok-123456",
                                     fix="unset NCCL_NET_TOKEN (was tok-123456)"),),
    )  # fmt: skip
    monkeypatch.setattr(check_run, "run_check", lambda *_args, **_kwargs: report)
    outputs = []
    for flags in ([], ["--json", "--report", str(tmp_path / "report")]):
        assert main(["check", "--device", "cpu", *flags]) == 1
        outputs.append(capsys.readouterr().out)
    outputs += [(tmp_path / "report" / name).read_text() for name in ("report.json", "report.html")]
    for text in outputs:
        for secret in ("tok-123456", "letmein", "pa55word"):
            assert secret not in text
        assert "=eth0" in text and "<redacted>" in text.replace("&lt;redacted&gt;", "<redacted>")


def test_bench_metadata_redacts_secret_nccl_values() -> None:
    from hpnet.bench.run import metadata

    meta = metadata(
        ["hpnet", "bench"], {"NCCL_NET_TOKEN": "tok-1", "NCCL_IB_HCA": "mlx5", "PATH": "/bin"}
    )
    assert meta["nccl_env"] == {"NCCL_IB_HCA": "mlx5", "NCCL_NET_TOKEN": "<redacted>"}


def test_check_all_child_gets_no_secret_and_its_signal_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hpnet check --all`: each rank's benchmark child inherits no secret, its facts
    (shared with rank 0 and kept in --logs) hold no secret value, and a child killed by
    a signal is said to be."""
    from hpnet.check import cluster
    from hpnet.check.run import CheckOptions
    from hpnet.cluster import spawn
    from hpnet.errors import HpnetError

    seen: dict[str, Any] = {}

    def child(argv: list[str], env: dict[str, str], **kwargs: Any) -> spawn.WorkerExit:
        seen["env"] = env
        seen["facts"] = json.loads(Path(argv[-2]).read_text())
        return spawn.WorkerExit(part=kwargs["part"], returncode=-9, tail=())

    monkeypatch.setattr(spawn, "run_worker", child)
    ranks = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1",
             "MASTER_PORT": "29511"}  # fmt: skip
    environ = environment(NCCL_IB_HCA="mlx5", NCCL_NET_TOKEN="tok-123456", **SECRETS)
    options = CheckOptions(device="cpu", keep_dir=str(tmp_path))
    with pytest.raises(HpnetError) as caught:
        cluster.run_cluster_check(options, environ, ranks)
    assert not (set(SECRETS) | {"NCCL_NET_TOKEN"}) & set(seen["env"])
    assert seen["env"]["NCCL_IB_HCA"] == "mlx5" and seen["env"]["RANK"] == "1"
    assert seen["facts"]["nccl_env"]["NCCL_NET_TOKEN"] == "<redacted>"
    assert "tok-123456" not in "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    assert "cluster benchmark was killed by SIGKILL" in caught.value.what
