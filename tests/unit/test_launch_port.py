"""The rendezvous port of `hpnet launch` (issue 23): a port another process listens on
is named with the way out (--master-port), not "node 0 exited with 1"; a launch whose
nodes are all this machine gets a free port of its own, so that two jobs on one
machine do not collide on 29500; a --master-port the user gives is used as given.

The launches are real (torchrun and torch's env:// with gloo on this machine); the
port is held by a listening socket of the test's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpnet.launch.plan import LaunchPlan, LaunchRequest
from hpnet.launch.prepare import LaunchOptions, prepare
from tests.unit.test_launch_run import Together

HPNET = [sys.executable, "-m", "hpnet"]

#: a rank that meets the others (gloo), records its rendezvous, and lingers: a number
#: of seconds, or until the file named (a path) exists, at most 120 s
RANK = """
import json, os, sys, time
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
assert t.item() == dist.get_world_size()
with open(os.path.join(sys.argv[1], f"rank{dist.get_rank()}.json"), "w") as handle:
    json.dump({"port": os.environ["MASTER_PORT"], "world": dist.get_world_size()}, handle)
if os.sep in sys.argv[2]:
    deadline = time.monotonic() + 120
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.05)
else:
    time.sleep(float(sys.argv[2]))
dist.destroy_process_group()
"""


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "SLURM_", "OMPI_"))}
    env.pop("MASTER_PORT", None)
    return env


def hpnet_launch(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*HPNET, "launch", *args], cwd=cwd, env=environment(), text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


#: what holds the rendezvous port when it is taken: hpnet launch's ... -- the program
TAKEN_BY_LAUNCH = [
    ["--hosts", "127.0.0.1", "--nproc-per-node", "2"],  # torchrun's agent listens
    ["--engine", "env"],  # rank 0 of the program listens (torch env://)
]
#: ... and a rank a launcher started (its variables), rank 0 of the job
TAKEN_IN_RANK = [["bench", "--device", "cpu", "-e", "1K"], ["isolate"]]


def _start_taken(runs: Together, key: str, args: list[str], port: int, where: Path) -> None:
    if args in TAKEN_BY_LAUNCH:
        (where / "rank.py").write_text(RANK)
        argv = [*HPNET, "launch", *args, "--master-port", str(port), "--", sys.executable,
                "rank.py", str(where), "0"]  # fmt: skip
        runs.start(key, argv, cwd=where, env=environment())
        return
    clean = {k: v for k, v in environment().items() if "RANK" not in k and "SIZE" not in k}
    env = {**clean, "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "NCCL_HOSTID": "h0"}  # fmt: skip
    runs.start(key, [*HPNET, *args], cwd=where, env=env, timeout=120)


@pytest.fixture(scope="module")
def taken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Together, dict[str, int]]]:
    """The runs of the taken-port tests, each against a port of its own that this
    process listens on (on every IPv4 address) until the module ends. Each run is one
    process at a time that gives up at once: they start together, at the first test's
    request, and each test reads its own."""
    runs, ports = Together(), {}
    with contextlib.ExitStack() as held:
        try:
            for args in TAKEN_BY_LAUNCH + TAKEN_IN_RANK:
                key = " ".join(args)
                sock = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                sock.bind(("", 0))
                sock.listen()
                ports[key] = sock.getsockname()[1]
                _start_taken(runs, key, args, ports[key], tmp_path_factory.mktemp("taken"))
            yield runs, ports
        finally:
            runs.close()


def plan_for(
    hosts: str | None, environ: dict[str, str] | None = None, **request: object
) -> LaunchPlan:
    options = LaunchOptions(
        request=LaunchRequest(command=("python", "train.py"), **request),  # type: ignore[arg-type]
        hosts=hosts,
    )
    return prepare(
        options, environ or {}, names=frozenset({"here"}), as_root=False,
        resolver=lambda _p, _e: {}, find_port=lambda: 41234,
    )  # fmt: skip


# ------------------------------------------------------------------ the plan


@pytest.mark.parametrize("hosts", [None, "127.0.0.1", "here,127.0.0.2", "localhost:2"])
@pytest.mark.parametrize("engine", ["torchrun", "env", "mpirun"])
def test_a_launch_all_on_this_machine_gets_a_free_port(hosts: str | None, engine: str) -> None:
    plan = plan_for(hosts, engine=engine, nproc_per_node=1)
    assert plan.master_port == 41234 and plan.port_chosen
    words = " ".join(w for c in plan.commands for w in (*c.argv, *c.env.values()))
    assert "41234" in words and "29500" not in words
    assert any("rendezvous port 41234" in note for note in plan.notes)


@pytest.mark.parametrize(
    ("hosts", "environ", "request_", "port"),
    [
        ("here,n2", {}, {}, 29500),  # a node elsewhere: its ports are not known here
        ("n1", {}, {}, 29500),
        ("127.0.0.1", {}, {"master_port": 29600}, 29600),  # the user's, as given
        ("127.0.0.1", {}, {"master_addr": "10.9.9.9"}, 29500),  # met elsewhere
        (None, {"MASTER_ADDR": "w0", "MASTER_PORT": "23456", "WORLD_SIZE": "2",
                "PET_NNODES": "2", "PET_NODE_RANK": "0"}, {}, 23456),  # a PyTorchJob pod
    ],
)  # fmt: skip
def test_a_given_or_remote_port_is_kept(
    hosts: str | None, environ: dict[str, str], request_: dict[str, object], port: int
) -> None:
    plan = plan_for(hosts, environ, **request_)
    assert plan.master_port == port and not plan.port_chosen
    assert not any("rendezvous port" in note for note in plan.notes)


def test_dry_run_prints_the_port_chosen(tmp_path: Path) -> None:
    args = ["--hosts", "127.0.0.1", "--nproc-per-node", "2", "--dry-run", "--", "hpnet", "bench"]
    done = hpnet_launch(args, tmp_path)
    out, err = done.communicate(timeout=60)
    assert done.returncode == 0, err
    port = re.search(r"--master-port (\d+)", out)
    assert port and port.group(1) != "29500"
    assert f"# note: rendezvous port {port.group(1)}: free on this machine" in out
    done = hpnet_launch([*args[:-3], "--master-port", "29777", *args[-3:]], tmp_path)
    out, _ = done.communicate(timeout=60)
    assert "--master-port 29777" in out and "rendezvous port" not in out


# ------------------------------------------------------------------ real launches


@pytest.mark.parametrize("args", TAKEN_BY_LAUNCH)
def test_a_taken_port_is_named_with_the_fix(
    args: list[str], taken: tuple[Together, dict[str, int]]
) -> None:
    """hpnet launch ARGS --master-port HELD -- python rank.py DIR 0"""
    runs, ports = taken
    key = " ".join(args)
    done, _ = runs.result(key)
    err, held_port = done.stderr, ports[key]
    assert done.returncode == 2, err  # port-taken: docs/errors.md
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error[port-taken]: the rendezvous port {held_port} is taken"), err
    assert "pass another --master-port" in line and f"sport = :{held_port}" in line
    assert "exited with 1" not in err
    assert not list(runs.cwd[key].glob("rank*.json"))


def test_two_jobs_on_one_machine_do_not_collide(tmp_path: Path) -> None:
    """Both without --master-port, the second started while the first still runs: each
    gets its own port (they both took 29500: the second failed, or met the first). The
    first job's ranks linger until the second's have met (a file the test writes then),
    so the first holds its port for the whole of the second's rendezvous however slow
    the machine; the second's end at once."""
    dirs = [tmp_path / "a", tmp_path / "b"]
    release = tmp_path / "release"
    procs = []
    for directory, linger in zip(dirs, [str(release), "0"], strict=True):
        directory.mkdir()
        (directory / "rank.py").write_text(RANK)
        args = ["--hosts", "127.0.0.1", "--nproc-per-node", "2", "--",
                sys.executable, "rank.py", str(directory), linger]  # fmt: skip
        procs.append(hpnet_launch(args, directory))
        deadline = time.monotonic() + 120
        while len(list(directory.glob("rank*.json"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)  # the first job's ranks have met: it holds its port now
    first_ran_throughout = procs[0].poll() is None
    release.touch()
    outcomes = [p.communicate(timeout=180) for p in procs]
    for proc, (_, err) in zip(procs, outcomes, strict=True):
        assert proc.returncode == 0, err
    assert first_ran_throughout, "the first job ended before the second's ranks met"
    ports = []
    for directory in dirs:
        ranks = [json.loads(p.read_text()) for p in sorted(directory.glob("rank*.json"))]
        assert [r["world"] for r in ranks] == [2, 2]  # each job met its own ranks only
        ports.append({r["port"] for r in ranks})
    assert len(ports[0]) == len(ports[1]) == 1 and ports[0] != ports[1]


@pytest.mark.parametrize("command", TAKEN_IN_RANK)
def test_a_rank_whose_rendezvous_port_is_taken_names_it(
    command: list[str], taken: tuple[Together, dict[str, int]]
) -> None:
    """A rank started by a launcher (here: its variables), rank 0 of the job, cannot
    listen on MASTER_PORT: error[port-taken] with the port, exit 2, not torch's
    DistNetworkError as an internal error (exit 3)."""
    runs, ports = taken
    key = " ".join(command)
    done, _ = runs.result(key)  # python -m hpnet COMMAND, RANK=0 of 2, MASTER_PORT held
    port = ports[key]
    assert done.returncode == 2, done.stderr[-2000:]
    assert f"error[port-taken]: the rendezvous port {port} (MASTER_PORT) is taken" in done.stderr
    assert "error[internal]" not in done.stderr
