"""The parts of `hpnet isolate` around the decision: the node's facts for round 0 (on
recorded sysfs trees), what each rank's NCCL log shows (real logs), the scheduler's
drain commands, the text report and the command's refusals."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, detect
from hpnet.isolate.drain import drain_commands, scheduler_of, shown
from hpnet.isolate.facts import node_facts
from hpnet.isolate.observe import config_issues, observe_log
from tests.conftest import DATA
from tests.unit.test_launch_run import Together

HPNET = [sys.executable, "-m", "hpnet"]
LOGS = DATA / "nccl-logs"
IB_GDR = LOGS / "azure-ib-gdr-recv-only-ring-long-busid-nccl2.5.log"
SOCKET = LOGS / "aws-ens3-socket-many-hosts-no-ib-init-nccl2.4.7.log"


def facts_of(sysfs_tree: Callable[[str], Path], name: str, env: dict[str, str]) -> dict[str, str]:
    inventory = detect(DetectOptions(sysfs_root=str(sysfs_tree(name))), env=env, python_path=[])
    return node_facts(inventory, env)


def test_facts_of_a_recorded_ib_node(sysfs_tree: Callable[[str], Path]) -> None:
    facts = facts_of(sysfs_tree, "cx6-ib-dgx", {"NCCL_IB_HCA": "mlx5", "HF_TOKEN": "hf_x"})
    # the tree's four ports, as sysfs gives them; the down port is a fact like the others
    assert facts["nic.mlx5_0:1.state"] == "ACTIVE" and facts["nic.mlx5_3:1.state"] == "DOWN"
    assert facts["nic.mlx5_0:1.rate"] == "200" and facts["nic.mlx5_3:1.rate"] == "10"
    assert facts["nic.mlx5_0:1.link-layer"] == "InfiniBand"
    assert facts["gpus.count"] == "4"
    # a GPU with one closest NIC names its rail; one with two equally close names none
    rails = {k: v for k, v in facts.items() if k.startswith("gpu.")}
    assert rails and all(v.startswith("mlx5_") for v in rails.values())
    assert facts["env.NCCL_IB_HCA"] == "mlx5"
    assert not any("HF_TOKEN" in k for k in facts)  # only NCCL_* variables
    # no GID index on InfiniBand (NCCL uses LIDs there), and nothing not read is made up
    assert not any(k.endswith(".gid-index") for k in facts)
    assert not any(k.startswith(("versions.", "limits.")) for k in facts)


def test_facts_of_a_recorded_roce_node_name_the_gid_index(
    sysfs_tree: Callable[[str], Path],
) -> None:
    auto = facts_of(sysfs_tree, "cx-roce-mixed-gids", {})
    fixed = facts_of(sysfs_tree, "cx-roce-mixed-gids", {"NCCL_IB_GID_INDEX": "1"})
    assert auto["nic.mlx5_0:1.gid-index"] == "3"  # NCCL's own pick: the RoCE v2 IPv4 GID
    assert fixed["nic.mlx5_0:1.gid-index"] == "1"  # the variable wins, as in NCCL
    assert auto["nic.mlx5_0:1.link-layer"] == "Ethernet"


def test_a_secret_nccl_value_is_redacted(sysfs_tree: Callable[[str], Path]) -> None:
    facts = facts_of(sysfs_tree, "h100-vm", {"NCCL_RAS_TOKEN": "s3cret", "NCCL_DEBUG": "INFO"})
    assert facts["env.NCCL_RAS_TOKEN"] == "<redacted>" and facts["env.NCCL_DEBUG"] == "INFO"


def test_observations_of_real_logs() -> None:
    ib = observe_log(str(IB_GDR), rank=0, node="n0", rail=0)
    sock = observe_log(str(SOCKET), rank=2, node="n2", rail=0)
    assert ib.network == ("IB",) and ib.seen and ib.gdr == "receive only"
    assert sock.network == ("Socket",)
    nothing = observe_log("/nonexistent/rank9.log", rank=9, node="n9", rail=0)
    assert not nothing.seen and nothing.network == ()


def test_a_rank_on_sockets_among_ib_ranks_is_a_configuration_fault() -> None:
    ib = observe_log(str(IB_GDR), rank=0, node="n0", rail=0)
    # the socket log's first process shows its choice but no connection lines: take one
    # that did connect, as a rank of an IB job that fell back would
    sock = observe_log(str(SOCKET), rank=2, node="n2", rail=0)
    sock = dataclasses.replace(sock, inter_node=("NET/Socket",))
    others = [dataclasses.replace(ib, rank=1, node="n1")]
    (issue,) = config_issues([ib, *others, sock])
    assert issue.code == "socket-fallback" and issue.node == "n2" and issue.rail == 0
    # the evidence is the socket log's own lines, with their file and line number
    assert issue.evidence and all(line.startswith(f"{SOCKET}:") for line in issue.evidence)
    text = SOCKET.read_text().splitlines()
    for line in issue.evidence:
        number, quoted = line[len(str(SOCKET)) + 1 :].split(": ", 1)
        assert text[int(number) - 1] == quoted
    assert "hpnet doctor" in issue.fix


def test_no_majority_no_blame_and_gdr_and_nic_rules() -> None:
    ib = observe_log(str(IB_GDR), rank=0, node="n0", rail=0)
    sock = dataclasses.replace(ib, rank=1, node="n1", network=("Socket",))
    assert config_issues([ib, sock]) == ()  # one against one: nobody is the odd one out
    full = dataclasses.replace(ib, gdr="yes")
    nogdr = dataclasses.replace(ib, rank=2, node="n2", gdr="no", inter_node=("NET/IB",))
    (issue,) = config_issues([full, dataclasses.replace(full, rank=1, node="n1"), nogdr])
    assert issue.code == "no-gdr" and issue.node == "n2"
    other_nic = dataclasses.replace(full, rank=2, node="n2", nics=("NIC 7",))
    (issue,) = config_issues([full, dataclasses.replace(full, rank=1, node="n1"), other_nic])
    assert issue.code == "unexpected-nic" and "NIC 7" in issue.what
    named = dataclasses.replace(full, nics=("mlx5_0:1",))
    other_name = dataclasses.replace(named, rank=2, node="n2", nics=("mlx5_7:1",))
    (issue,) = config_issues([named, dataclasses.replace(named, rank=1, node="n1"), other_name])
    assert issue.code == "unexpected-nic" and "mlx5_7" in issue.what


def test_a_nic_named_is_not_compared_with_a_nic_indexed() -> None:
    """NCCL names its NICs once per process: the odd node out of round 1, whose first
    communicator is in round 2, logs ``NET/Socket : Using [0]eth0`` there, the others
    only ``via NET/Socket/0``. Seen on an H200 with 7 fake hosts: the healthy odd node
    was a configuration fault ("used eth0 where GPU 0 of the other nodes used NIC 0")."""
    ib = observe_log(str(IB_GDR), rank=0, node="n0", rail=0)
    others = [dataclasses.replace(ib, rank=r, node=f"n{r}") for r in range(3)]
    first = dataclasses.replace(ib, rank=3, node="n3", nics=("eth0",))
    assert config_issues([*others, first]) == ()


def test_drain_commands_only_for_names_the_scheduler_accepts() -> None:
    assert scheduler_of({"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "gpu-3"}) == ("slurm", "gpu-3")
    assert scheduler_of({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "NODE_NAME": "n-1"}) == (
        "kubernetes",
        "n-1",
    )
    assert scheduler_of({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}) is None  # a pod's name is no node
    (slurm,) = drain_commands("slurm", "gpu-3", "slow\nrail 2; rm -rf /", "hardware")
    assert slurm[-1] == "Reason=hpnet isolate: slow rail 2; rm -rf /"  # one line, in argv
    assert shown(slurm).endswith("'Reason=hpnet isolate: slow rail 2; rm -rf /'")
    for bad in ("gpu 3", "-gpu", "gpu$(id)", "", "a" * 300):
        assert drain_commands("slurm", bad, "x", "hardware") == []
        assert drain_commands("kubernetes", bad, "x", "hardware") == []
    assert drain_commands("kubernetes", "Upper", "x", "hardware") == []


def run_hpnet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE"))}
    return subprocess.run(
        [*HPNET, "isolate", *args], capture_output=True, text=True, timeout=120,
        env={**clean, **(env or {})}, check=False,
    )  # fmt: skip


#: rank 0 of a 2-rank job as a launcher starts it: the files are read before the job
#: forms (and by rank 0 only)
RANK0 = {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1"}


def test_other_ranks_do_not_read_the_files_only_rank_0_uses(tmp_path: Path) -> None:
    import argparse

    from hpnet.cli.isolate import _options, add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    ns = parser.parse_args(["--baseline", str(tmp_path / "absent.json"), "--groups", "/absent"])
    options = _options(ns, rank0=False)  # rank 1: neither file is opened
    assert options.baseline is None and options.groups is None


def test_a_baseline_of_another_size_or_backend_is_refused() -> None:
    from hpnet.errors import InputError
    from hpnet.isolate.run import check_baseline_shape

    check_baseline_shape({"bytes": 1 << 20, "backend": "gloo"}, 1 << 20, "gloo")
    check_baseline_shape({}, 1 << 20, "gloo")  # an older file that does not say
    with pytest.raises(InputError, match="bytes 67108864, this run uses 8388608"):
        check_baseline_shape({"bytes": 64 << 20, "backend": "nccl"}, 8 << 20, "nccl")
    with pytest.raises(InputError, match="backend nccl"):
        check_baseline_shape({"bytes": 1 << 20, "backend": "nccl"}, 1 << 20, "gloo")


def test_outside_a_job_it_says_how_to_start_one() -> None:
    done = run_hpnet()
    assert done.returncode == 2 and "hpnet launch" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        ("not json", "error[parse]"),
        ('{"pairs": []}', "cluster_median_gbps"),
        ('{"cluster_median_gbps": -1}', "not a positive number"),
    ],
)
def test_a_bad_baseline_is_refused_before_the_job(
    tmp_path: Path, content: str, expect: str
) -> None:
    path = tmp_path / "base.json"
    path.write_text(content)
    done = run_hpnet("--baseline", str(path), env=RANK0)
    assert done.returncode == 2 and expect in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_groups_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "groups"
    path.write_text("# node rack\nn1 rack1\nn2\n")
    done = run_hpnet("--groups", str(path), env=RANK0)
    assert done.returncode == 2 and f"{path}:3" in done.stderr, done.stderr


def test_the_text_report_escapes_names_and_puts_evidence_before_the_fix() -> None:
    from hpnet.render.isolate import render_isolate

    outlier = {
        "kind": "rail", "fault": "hardware", "node": "n\x1b[31m1", "rail": 3,
        "nic": "mlx5_3:1", "evidence": ["round 1: n1 + n2: 5.0 GB/s, z -9.1"],
        "fix": "reseat the cable", "drain": ["scontrol update NodeName=n1 State=DRAIN"],
    }  # fmt: skip
    data = {
        "nodes": ["n1", "n2"], "rails": 8, "backend": "nccl", "bytes": 64 << 20, "iters": 20,
        "outliers": [outlier], "drift": [], "cluster_median_gbps": 48.0,
        "baseline_median_gbps": None, "collectives": 9,
        "rounds": [{"number": n, "name": name, "num_tests": k, "num_errors": 0, "findings": []}
                   for n, name, k in ((1, "pairs", 1), (3, "rails", 8))],
    }  # fmt: skip
    text = render_isolate(data)
    assert "  1 pairs: 1 test\n" in text and "  3 rails: 8 tests\n" in text
    assert "\x1b" not in text and "n\\x1b[31m1 rail 3 (mlx5_3:1)" in text
    assert text.index("5.0 GB/s") < text.index("fix: reseat") < text.index("drain: scontrol")
    assert text.startswith("hpnet isolate: 1 OUTLIER among 2 nodes x 8 rails, nccl")
    assert json.dumps(data)  # the data is JSON as it is


def test_rank_zero_builds_measurements_from_what_ranks_sent_as_json() -> None:
    """What each rank sends (times, error, observation) travels as JSON: rank 0 turns it
    back into measurements, the config issues of the round's majority attached."""
    from hpnet.isolate.model import Round, Test
    from hpnet.isolate.worker import Job, _measurements

    every = [{"node": f"n{i}", "rail": 0, "facts": {}, "scheduler": None} for i in range(4)]
    job = Job(every)
    ib = observe_log(str(IB_GDR), rank=0, node="n0", rail=0)
    sent = []
    for rank in range(4):
        seen = dataclasses.replace(ib, rank=rank, node=f"n{rank}")
        if rank == 3:
            seen = dataclasses.replace(seen, network=("Socket",), inter_node=("NET/Socket",))
        sent.append({"times": [0.01, 0.02], "error": None, "observation": seen.to_data()})
    results = json.loads(json.dumps(sent))
    tests = (Test(round=1, a="n0", b="n1"), Test(round=1, a="n2", b="n3"))
    found = _measurements(
        job, Round(number=1, name="pairs", purpose="", tests=tests), results, 1 << 20
    )
    assert found[0].issues == ()
    (issue,) = found[1].issues
    assert issue.code == "socket-fallback" and issue.node == "n3"
    # 2 ranks: busbw = bytes * 2(n-1)/n / time, the slowest member's time per sample
    assert found[0].samples_gbps == pytest.approx(((1 << 20) / 0.01 / 1e9, (1 << 20) / 0.02 / 1e9))


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Together]:
    """The real jobs of the tests below (under mpirun, an earlier job's logs, a job of
    one node), started together at the first one's request: each leaves a core of a
    2-core machine idle much of its time (its launcher starting alone, ranks waiting on
    each other, the job's end), side by side they keep both busy. Each has its own
    rendezvous port and folders; none asserts a timing, and a slow rank of a busy
    machine changes none of what they check (the mpirun job's exit 1, an outlier, is
    accepted as before)."""
    from tests.unit.test_launch_run import distinct_ports, environment

    started = Together()
    mpirun, earlier, one_node = distinct_ports(3)
    try:
        if shutil.which("mpirun") is None:
            started.skip("mpirun", "Open MPI's mpirun is not installed")
        else:
            rank = f"NCCL_HOSTID=host$OMPI_COMM_WORLD_RANK exec {sys.executable} -m hpnet "
            rank += "isolate --device cpu --json --bytes 64K --iters 5"
            started.start("mpirun", [*HPNET, "launch", "--engine", "mpirun", "--nproc-per-node",
                                     "4", "--master-port", str(mpirun), "--", "sh", "-c", rank],
                          cwd=tmp_path_factory.mktemp("mpirun"), env=environment(),
                          timeout=300)  # fmt: skip
        where = tmp_path_factory.mktemp("earlier")
        _plant_an_earlier_job(where / "logs" / f"isolate-127.0.0.1-{earlier}")
        start_fake_hosts(started, "earlier", where, 4, "--json", "--logs", str(where / "logs"),
                         port=earlier)  # fmt: skip
        where = tmp_path_factory.mktemp("one-node")
        start_fake_hosts(started, "one-node", where, 2, hosts=False, port=one_node)
        yield started
    finally:
        started.close()


@pytest.mark.host_load  # bandwidth on CPU ranks: run alone (README's test command)
def test_isolate_runs_under_mpirun_through_hpnet_launch(jobs: Together) -> None:
    """Open MPI's ranks (OMPI_COMM_WORLD_*) meet where hpnet launch's mpirun command
    says (-x MASTER_ADDR / MASTER_PORT); each rank its own NCCL host."""
    # hpnet launch --engine mpirun --nproc-per-node 4 -- sh -c 'NCCL_HOSTID=host$R ...'
    done, _ = jobs.result("mpirun")
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 1: an outlier on a busy VM
    data = json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])
    assert data["nodes"] == ["host0", "host1", "host2", "host3"]
    assert data["backend"] == "gloo" and data["rails"] == 1
    pairs = data["rounds"][1]
    assert pairs["name"] == "pairs" and pairs["num_tests"] == 2 and pairs["num_errors"] == 0


def _fake_hosts_command(
    tmp_path: Path, nproc: int, args: tuple[str, ...], *, hosts: bool, port: int
) -> tuple[list[str], dict[str, str]] | None:
    """torchrun's command line and environment for :func:`torchrun_fake_hosts`, or None
    where torchrun is not installed."""
    from tests.unit.test_launch_run import environment

    torchrun = Path(sys.executable).parent / "torchrun"
    if not torchrun.exists():
        return None
    host = "export NCCL_HOSTID=host$LOCAL_RANK; " if hosts else ""
    script = tmp_path / "rank.sh"
    # the arguments in the script: torchrun reads options after the script as its own
    words = " ".join(shlex.quote(a) for a in args)
    script.write_text(
        f"#!/bin/sh\n{host}exec {sys.executable} -m hpnet isolate --device cpu "
        f"--bytes 64K --iters 5 {words}\n"
    )
    script.chmod(0o755)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    argv = [str(torchrun), "--nproc-per-node", str(nproc), "--master-port", str(port),
            "--no-python", str(script)]  # fmt: skip
    return argv, {**environment(), "TMPDIR": str(tmp_path / "tmp")}


def torchrun_fake_hosts(
    tmp_path: Path, nproc: int, *args: str, hosts: bool = True
) -> subprocess.CompletedProcess[str]:
    """torchrun with ``nproc`` ranks on this machine, each its own NCCL host (or, with
    ``hosts=False``, all one node), running ``hpnet isolate --device cpu`` with ``args``;
    temporary files under ``tmp_path/tmp``."""
    from tests.unit.test_launch_run import _port

    command = _fake_hosts_command(tmp_path, nproc, args, hosts=hosts, port=_port())
    if command is None:
        pytest.skip("torchrun is not installed")
    argv, env = command
    return subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def start_fake_hosts(
    started: Together, key: str, tmp_path: Path, nproc: int, *args: str, port: int,
    hosts: bool = True,
) -> None:  # fmt: skip
    """:func:`torchrun_fake_hosts`, started among others (``key``'s result)."""
    command = _fake_hosts_command(tmp_path, nproc, args, hosts=hosts, port=port)
    if command is None:
        started.skip(key, "torchrun is not installed")
        return
    argv, env = command
    started.start(key, argv, cwd=tmp_path, env=env, timeout=300)


def _plant_an_earlier_job(job: Path) -> None:
    """An earlier job's files in the job folder this job will use (same rendezvous, same
    --logs): NCCL logs of three ranks on IB and one on sockets, a round's log, a result."""
    job.mkdir(parents=True)
    for rank in range(3):
        (job / f"nccl.rank{rank}.log").write_bytes(IB_GDR.read_bytes())
    (job / "nccl.rank3.log").write_bytes(SOCKET.read_bytes())
    (job / "round1").mkdir()
    (job / "round1" / "rank3.log").write_bytes(SOCKET.read_bytes())
    (job / "result.json").write_text('{"stale": true}')


def test_an_earlier_jobs_logs_in_the_logs_folder_are_not_read_as_this_ones(
    jobs: Together,
) -> None:
    """Same rendezvous, same --logs folder: each rank first removes its own files of
    the earlier job. Planted: an earlier job's NCCL logs, three on IB, one on sockets,
    which read as this job's would make a configuration fault of rank 3."""
    # torchrun_fake_hosts(..., 4, "--json", "--logs", LOGS) on the planted job's port
    done, _ = jobs.result("earlier")
    (job,) = (jobs.cwd["earlier"] / "logs").iterdir()  # the planted job's folder, alone
    assert done.returncode in (0, 1), done.stderr[-3000:]
    data = json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])
    assert not [o for o in data["outliers"] if o["fault"] == "configuration"], data
    assert data["files"] == str(job)
    assert not (job / "nccl.rank3.log").exists()  # gloo: NCCL never wrote one
    assert (job / "round1" / "rank3.log").read_bytes() == b""  # this job's round: nothing


def test_a_job_of_one_node_is_an_error_and_leaves_no_files(jobs: Together) -> None:
    done, _ = jobs.result("one-node")  # torchrun_fake_hosts(..., 2, hosts=False)
    tmp_path = jobs.cwd["one-node"]
    assert "error[isolate-nodes]: isolate needs at least 2 distinct nodes" in done.stderr
    # which rank's error[isolate-failed] comes out first is a race (the launcher ends
    # the others when one exits); rank 0's cause is always shown
    assert "error[isolate-failed]: rank " in done.stderr and done.returncode != 0
    assert "Traceback (most recent call last)" not in done.stderr.split("error[isolate")[0]
    assert list((tmp_path / "tmp").glob("hpnet-isolate-*")) == []  # each rank's job folder is gone


def test_a_variable_one_rank_of_a_node_got_otherwise_is_drift_of_that_node() -> None:
    """Round 0 judges what every rank received: node n1's second rank lacks
    NCCL_IB_HCA (a launcher that set it for some local ranks only)."""
    from hpnet.isolate.engine import Isolation
    from hpnet.isolate.worker import Job

    env = {"env.NCCL_IB_HCA": "mlx5", "env.NCCL_DEBUG": "WARN"}
    every = [
        {"node": f"n{n}", "rail": r, "facts": dict(env), "scheduler": None}
        for n in range(3)
        for r in range(2)
    ]
    every[3]["facts"] = {"env.NCCL_DEBUG": "WARN"}  # n1, rail 1
    job = Job(every)
    assert job.facts["n1"]["env.NCCL_IB_HCA"] == "<unset> | mlx5 (differs between its ranks)"
    assert job.facts["n0"] == env and job.facts["n2"] == env
    (drift,) = Isolation(job.nodes, job.rails).drift(job.facts)
    assert (drift.node, drift.key, drift.majority_value) == ("n1", "env.NCCL_IB_HCA", "mlx5")
