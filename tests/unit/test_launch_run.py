"""`hpnet launch` running real jobs on this machine: torchrun with gloo over two
"nodes" (two agents, node ranks 0 and 1, both local), the env engine, Debian's Open
MPI, a rank killed mid-job, a timeout. Every rank records what it saw."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HPNET = [sys.executable, "-m", "hpnet"]

RANK = """
import json, os, sys, time
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
out = sys.argv[1]
seen = {k: v for k, v in os.environ.items()
        if k.startswith(("NCCL_", "MY_", "HF_", "AWS_", "WORLD_SIZE", "RANK"))}
with open(os.path.join(out, f"rank{rank}.json"), "w") as handle:
    json.dump({"env": seen, "world": dist.get_world_size(), "pid": os.getpid()}, handle)
import torch
t = torch.ones(1)
dist.all_reduce(t)
assert t.item() == dist.get_world_size()
print(f"rank {rank} reduced", flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))
dist.destroy_process_group()
"""


def ranks_of(directory: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(directory.glob("rank*.json"))]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def gone(pids: list[int], within: float) -> bool:
    """Whether every process of ``pids`` has ended, or ends within ``within`` seconds."""
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "SLURM_", "OMPI_"))}
    env.update(NCCL_DEBUG="WARN", MY_SETTING="forwarded", HF_TOKEN="hf_secret",
               AWS_SECRET_ACCESS_KEY="aws_secret", MY_NAMED_KEY="named")  # fmt: skip
    return env


def launch(
    args: list[str], tmp_path: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    return subprocess.run(
        [*HPNET, "launch", *args],
        cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip


@dataclasses.dataclass
class _Run:
    argv: list[str]
    proc: subprocess.Popen[str]
    timeout: float
    thread: threading.Thread | None = None
    out: tuple[str, str] = ("", "")
    seconds: float = 0.0
    timed_out: bool = False
    error: BaseException | None = None


class Together:
    """Launches started side by side, each read by its own test as if it had run alone.

    For launches that leave a core idle much of the time: one chain of processes
    (hpnet, the engine's agent, a rank that exits at once), or one that waits on a
    clock. Side by side they keep a 2-core machine's cores busy instead of one of them.
    (Not for runs that keep both cores busy already, such as hpnet bench's ranks: side
    by side they only take longer each.) Each launch's output, exit code and seconds
    from its start to its end are its own; a launch past its limit is killed and
    raises, as ``subprocess.run`` would."""

    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}
        self._skipped: dict[str, str] = {}
        self.cwd: dict[str, Path] = {}

    def start(self, key: str, argv: list[str], *, env: dict[str, str], cwd: Path,
              timeout: float = 180) -> None:  # fmt: skip
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        run = self._runs[key] = _Run(argv=argv, proc=proc, timeout=timeout)
        self.cwd[key] = cwd

        def wait() -> None:  # reads the pipes as the launch writes, until it ends
            try:
                run.out = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                run.out, run.timed_out = proc.communicate(), True
            except BaseException as exc:  # noqa: BLE001 - raised again by result()
                run.error = exc
            run.seconds = time.monotonic() - started

        run.thread = threading.Thread(target=wait, name=f"launch {key}", daemon=True)
        run.thread.start()

    def skip(self, key: str, reason: str) -> None:
        """``key`` cannot run here: its test is skipped with ``reason``."""
        self._skipped[key] = reason

    def result(self, key: str) -> tuple[subprocess.CompletedProcess[str], float]:
        """The launch's outcome, once it ended, and how long it ran."""
        if key in self._skipped:
            pytest.skip(self._skipped[key])
        run = self._runs[key]
        assert run.thread is not None
        run.thread.join()
        if run.error is not None:
            raise run.error
        if run.timed_out:
            raise subprocess.TimeoutExpired(run.argv, run.timeout, *run.out)
        out, err = run.out
        return subprocess.CompletedProcess(run.argv, run.proc.returncode, out, err), run.seconds

    def close(self) -> None:
        """Ends what still runs (a test not run, or one that failed before reading it)."""
        for run in self._runs.values():
            if run.proc.poll() is None:
                run.proc.kill()
            if run.thread is not None:
                run.thread.join()


def distinct_ports(count: int) -> list[int]:
    """``count`` different free ports, for launches that run at the same time."""
    ports: list[int] = []
    while len(ports) < count:
        port = _port()
        if port not in ports:
            ports.append(port)
    return ports


def test_torchrun_over_two_nodes_carries_the_environment(tmp_path: Path) -> None:
    done = launch(
        ["--hosts", "127.0.0.1,127.0.0.2", "--nproc-per-node", "1", "--master-port",
         str(_port()), "--env", "MY_SETTING", "--env", "MY_NAMED_KEY", "--",
         "python", "rank.py", str(tmp_path)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = ranks_of(tmp_path)
    assert len(ranks) == 2 and {r["world"] for r in ranks} == {2}
    for rank in ranks:
        env = rank["env"]
        assert isinstance(env, dict)
        assert env["NCCL_DEBUG"] == "WARN" and env["MY_SETTING"] == "forwarded"
        assert env["MY_NAMED_KEY"] == "named"  # a secret-looking name, named: forwarded
        assert "HF_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    # each node's output, prefixed by its node
    assert "[node 0 (127.0.0.1)] rank 0 reduced" in done.stdout
    assert "[node 1 (127.0.0.2)] rank 1 reduced" in done.stdout


def test_env_engine_one_process_per_node(tmp_path: Path) -> None:
    done = launch(
        ["--engine", "env", "--hosts", "127.0.0.1,127.0.0.2", "--master-port", str(_port()),
         "--", sys.executable, "rank.py", str(tmp_path)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = ranks_of(tmp_path)
    assert sorted(str(r["env"]["RANK"]) for r in ranks) == ["0", "1"]  # type: ignore[index]
    assert all(r["env"]["WORLD_SIZE"] == "2" for r in ranks)  # type: ignore[index]


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI's mpirun is not installed")
def test_mpirun_from_open_mpi(tmp_path: Path) -> None:
    code = (
        "import json, os, sys; r = os.environ['OMPI_COMM_WORLD_RANK']; "
        "json.dump({'env': {k: v for k, v in os.environ.items() if k.startswith(('NCCL_', 'MY_', "
        "'HF_'))}, 'size': os.environ['OMPI_COMM_WORLD_SIZE']}, "
        "open(os.path.join(sys.argv[1], 'rank' + r + '.json'), 'w'))"
    )
    done = launch(
        ["--engine", "mpirun", "--nproc-per-node", "2", "--env", "MY_SETTING", "--",
         sys.executable, "-c", code, str(tmp_path)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = ranks_of(tmp_path)
    assert len(ranks) == 2 and {r["size"] for r in ranks} == {"2"}
    for rank in ranks:
        env = rank["env"]
        assert isinstance(env, dict)
        assert env.get("NCCL_DEBUG") == "WARN" and env.get("MY_SETTING") == "forwarded"
        assert "HF_TOKEN" not in env


def test_killing_one_rank_ends_the_job(tmp_path: Path) -> None:
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    proc = subprocess.Popen(
        [*HPNET, "launch", "--nproc-per-node", "2", "--master-port", str(_port()), "--",
         "python", "rank.py", str(tmp_path), "120"],
        cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("rank*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    ranks = ranks_of(tmp_path)
    assert len(ranks) == 2, proc.communicate(timeout=60)
    pids = [int(str(r["pid"])) for r in ranks]
    os.kill(pids[1], signal.SIGKILL)
    started = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30  # promptly, not after the 120 s sleep
    # torchrun exits 1 for any failing rank: hpnet exits with the rank's status, and
    # names its signal
    assert proc.returncode == 128 + signal.SIGKILL, err
    assert "error[job-failed]: node 0 exited with 1: rank 1 (local rank 1) on host" in err
    assert "was killed by SIGKILL" in err and "hpnet exits with 137" in err
    assert gone(pids, within=0.5)


#: a rank's exit code, and hpnet's for it (test_a_ranks_code_never_reads_as_hpnets_own)
RANK_CODES = [(3, 4), (2, 4), (5, 5)]


@pytest.fixture(scope="module")
def exits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Together]:
    """The launches of the exit-code tests, started together at the first one's request:
    a job that waits on --timeout, then torchrun jobs whose ranks exit at once (each
    with its own rendezvous port)."""
    jobs = Together()
    dirs = {key: tmp_path_factory.mktemp(key) for key in ["timeout", "own"]}
    dirs |= {f"rank-{code}": tmp_path_factory.mktemp(f"rank-{code}") for code, _ in RANK_CODES}

    def start(key: str, *args: str) -> None:
        jobs.start(key, [*HPNET, "launch", *args], cwd=dirs[key], env=environment())

    try:
        pidfile = dirs["timeout"] / "pid"
        code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
        start("timeout", "--engine", "env", "--timeout", "3", "--", sys.executable, "-c",
              code + "time.sleep(120)")  # fmt: skip
        ports = distinct_ports(1 + len(RANK_CODES))
        own = "import os, sys; sys.exit(7 if os.environ['RANK'] == '1' else 0)"
        start("own", "--nproc-per-node", "2", "--master-port", str(ports[0]), "--",
              sys.executable, "-c", own)  # fmt: skip
        for (rank_code, _), port in zip(RANK_CODES, ports[1:], strict=True):
            start(f"rank-{rank_code}", "--nproc-per-node", "1", "--master-port", str(port),
                  "--", sys.executable, "-c", f"import sys; sys.exit({rank_code})")  # fmt: skip
        yield jobs
    finally:
        jobs.close()


def test_timeout_ends_the_job(exits: Together) -> None:
    done, seconds = exits.result("timeout")
    assert done.returncode == 124, done.stderr
    assert seconds < 30
    assert "ran past --timeout 3 s" in done.stderr
    assert not alive(int((exits.cwd["timeout"] / "pid").read_text()))


def test_dry_run_runs_nothing_and_json_is_redacted(tmp_path: Path) -> None:
    done = launch(
        ["--hosts", "n1,n2", "--env", "MY_NAMED_KEY", "--dry-run", "--json", "--",
         "python", "train.py"],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["env"]["MY_NAMED_KEY"] == "<redacted>"
    assert "named" not in done.stdout and "hf_secret" not in done.stdout
    assert [c["host"] for c in data["commands"]] == ["n1", "n2"]
    assert not list(tmp_path.glob("rank*.json"))


def test_json_outputs_and_schema_doc_agree(tmp_path: Path) -> None:
    from tests.unit.test_schema_doc import documented_paths, emitted_paths

    doc = (Path(__file__).parents[2] / "docs" / "launch-schema.md").read_text()
    plan_doc, outcome_doc = doc.split("## The outcome", 1)
    dry = launch(["--engine", "mpirun", "--hosts", "n1:2,n2:2", "--dry-run", "--json", "--",
                  "python", "t.py"], tmp_path)  # fmt: skip
    plan = json.loads(dry.stdout)
    dynamic = ("env.", "env_origins.", "commands[].env.")
    emitted = {p for p in emitted_paths(plan) if not p.startswith(dynamic)}
    assert emitted == documented_paths(plan_doc)
    done = launch(["--engine", "env", "--json", "--", sys.executable, "-c", "pass"], tmp_path)
    outcome = json.loads(done.stdout)
    assert set(outcome) == documented_paths(outcome_doc)


def _port() -> int:
    from hpnet.localrun import free_port

    return free_port()


def test_sigterm_to_hpnet_launch_ends_every_rank(tmp_path: Path) -> None:
    """`timeout`, scancel or a closed terminal send SIGTERM: no rank may survive it."""
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    proc = subprocess.Popen(
        [*HPNET, "launch", "--nproc-per-node", "2", "--master-port", str(_port()), "--",
         "python", "rank.py", str(tmp_path), "120"],
        cwd=tmp_path, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("rank*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    pids = [int(str(r["pid"])) for r in ranks_of(tmp_path)]
    assert len(pids) == 2, proc.communicate(timeout=60)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert gone(pids, within=0.5)


def test_a_command_killed_by_a_signal_is_named_and_its_status_kept(tmp_path: Path) -> None:
    # it was "failed with exit code 1"
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    done = launch(["--engine", "env", "--", sys.executable, "-c", code], tmp_path)
    assert done.returncode == 128 + signal.SIGKILL, done.stderr
    assert "was killed by SIGKILL" in done.stderr and "hpnet exits with 137" in done.stderr


def test_the_ranks_own_exit_code_is_hpnets(exits: Together) -> None:
    # torchrun exits 1 whatever the rank's code: hpnet exits with the rank's
    done, _ = exits.result("own")  # --nproc-per-node 2, rank 1 exits 7
    assert done.returncode == 7, done.stderr
    assert "rank 1 (local rank 1) on host" in done.stderr and "exited with 7" in done.stderr


@pytest.mark.host_load  # isolate: bandwidth on CPU ranks, run alone
@pytest.mark.parametrize(
    ("command", "verdict", "code"),
    [
        (["check", "--all"], "hpnet check: NOT READY", 1),  # no GPU here: not ready
        (["isolate"], "hpnet isolate", 0),  # two healthy fake hosts: no outlier
    ],
)
def test_a_cluster_verdict_through_launch_is_a_verdict_not_a_crash(
    command: list[str], verdict: str, code: int, tmp_path: Path
) -> None:
    """`hpnet launch --fake-hosts -- hpnet check --all` printed NOT READY, then ~130
    lines of torchrun stack traces ("--- Logging error ---", a TCPStore that went away)
    and error[job-failed] (issue 26, item 2): rank 0's exit 1 was a failed job to
    torchrun. Now rank 0 says its code as a line hpnet launch reads (launch/verdict.py):
    the verdict, the verdict's exit code, no trace, no error, and no "Failed to
    initialize NumPy" from every launcher."""
    done = launch(
        ["--hosts", "127.0.0.1,127.0.0.2", "--fake-hosts", "--nproc-per-node", "1",
         "--master-port", str(_port()), "--", *HPNET, *command],
        tmp_path,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == code, output
    assert verdict in done.stdout
    for noise in ("Traceback", "Logging error", "error[job-failed]", "NumPy", "hpnet-verdict"):
        assert noise not in output, output


def test_bench_under_a_launcher_on_a_cpu_node_runs_the_cpu_sweep(tmp_path: Path) -> None:
    """Under a launcher on a CPU node `hpnet bench` ran the GPU sweep (26 sizes, 72 s
    instead of 7 s, issue 26 item 3): the sweep is the device's the ranks run on."""
    from hpnet.cli.bench_args import DEFAULT_SWEEP

    out = tmp_path / "bench.json"
    done = launch(
        ["--nproc-per-node", "2", "--master-port", str(_port()), "--",
         *HPNET, "bench", "--save", str(out)],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    sizes = [row["size_bytes"] for row in json.loads(out.read_text())["runs"][0]["rows"]]
    assert sizes[0] == 8 and sizes[-1] == DEFAULT_SWEEP["cpu"][1] and len(sizes) == 10


@pytest.mark.parametrize(("rank_code", "hpnet_code"), RANK_CODES)
def test_a_ranks_code_never_reads_as_hpnets_own(
    rank_code: int, hpnet_code: int, exits: Together
) -> None:
    """A rank that exited 3 made hpnet exit 3, the code README keeps for hpnet's own
    internal errors (issue 26, item 4): a rank's 2 or 3 is 4, its other codes are kept,
    and error[job-failed] names the rank's own code either way."""
    done, _ = exits.result(f"rank-{rank_code}")  # torchrun, one rank: sys.exit(rank_code)
    assert done.returncode == hpnet_code, done.stderr
    assert f"exited with {rank_code}" in done.stderr and "error[job-failed]" in done.stderr
    assert f"hpnet exits with {hpnet_code}" in done.stderr
