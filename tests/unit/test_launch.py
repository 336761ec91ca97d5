"""`hpnet launch` plans: contexts, hosts, environment propagation, and each engine's
command against the guides' own (tests/data/guides)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.launch.context import detect_context
from hpnet.launch.envprop import looks_secret, propagate
from hpnet.launch.hosts import check_host, expand_nodelist, parse_hostfile, parse_hosts
from hpnet.launch.plan import LaunchPlan, LaunchRequest, render_plan
from hpnet.launch.prepare import LaunchOptions, prepare
from hpnet.profiles import get_profile
from tests.conftest import DATA

GUIDES = DATA / "guides"
GOLDEN = Path(__file__).parents[1] / "golden" / "launch"
#: the "free port" a launch whose nodes are all this machine gets in these plans
FREE_PORT = 41234


def profile_settings(profile: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The profile's values as the guide writes them (resolution is tested elsewhere)."""
    if profile is None:
        return {}
    return {s.name: s.value for s in get_profile(profile).settings}


def plan(
    command: str,
    environ: Mapping[str, str] | None = None,
    *,
    hosts: str | None = None,
    hostfile: str | None = None,
    env: tuple[str, ...] = (),
    num_nodes: int | None = None,
    **request: object,
) -> LaunchPlan:
    options = LaunchOptions(
        request=LaunchRequest(command=tuple(shlex.split(command)), **request),  # type: ignore[arg-type]
        hosts=hosts,
        hostfile=hostfile,
        env_args=env,
        num_nodes=num_nodes,
    )
    return prepare(
        options,
        environ or {},
        names=frozenset({"launchhost"}),
        as_root=False,
        resolver=profile_settings,
        find_port=lambda: FREE_PORT,
    )


# ------------------------------------------------------------------ hosts


@pytest.mark.parametrize(
    "bad",
    [
        "n1;reboot",
        "$(id)",
        "a b",
        "-oProxyCommand=x",
        "n1\nn2",
        "`x`",
        "n1'",
        "",
        "a..b",
        "x" * 300,
    ],
)
def test_host_names_that_could_inject_are_refused(bad: str) -> None:
    with pytest.raises(InputError) as caught:
        check_host(bad)
    assert caught.value.code == "bad-host"


def test_hostfiles_of_open_mpi_deepspeed_and_mpich() -> None:
    text = "# cluster\nnode1 slots=8 max_slots=8\nnode2 slots=8  # rack 2\nnode3:4\nnode1 slots=8\n"
    hosts = parse_hostfile(text)
    assert [(h.name, h.slots) for h in hosts] == [("node1", 16), ("node2", 8), ("node3", 4)]
    with pytest.raises(InputError) as caught:
        parse_hostfile("node1 slotz=8\n", source="hosts")
    assert caught.value.where == "hosts:1" and "slots=N" in caught.value.fix
    with pytest.raises(InputError):
        parse_hostfile("node1;id slots=8\n")
    assert [h.name for h in parse_hosts("a:8,b:8")] == ["a", "b"]
    with pytest.raises(InputError):
        parse_hosts("a,a")


def test_slurm_node_lists() -> None:
    assert expand_nodelist("gpu[001-003]") == ("gpu001", "gpu002", "gpu003")
    assert expand_nodelist("a[1,3],b2,c[9-10]") == ("a1", "a3", "b2", "c9", "c10")
    for bad in ("gpu[1-", "gpu[x-2]"):
        with pytest.raises(InputError):
            expand_nodelist(bad)


# ------------------------------------------------------------------ contexts


@pytest.mark.parametrize(
    ("environ", "kind", "nodes", "node_rank", "nproc", "inside"),
    [
        ({}, "local", 1, None, None, False),
        ({"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "n[1-4]", "SLURM_NODEID": "2",
          "SLURM_GPUS_ON_NODE": "8"}, "slurm", 4, 2, 8, False),
        ({"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "n1", "SLURM_STEP_ID": "0"},
         "slurm", 1, None, None, True),
        ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "16",
          "OMPI_COMM_WORLD_LOCAL_SIZE": "8"}, "openmpi", 1, None, 8, True),
        # a PyTorchJob pod (training-operator envvar.go): RANK is the replica's index
        ({"MASTER_ADDR": "job-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": "16", "RANK": "1",
          "PET_NNODES": "2", "PET_NODE_RANK": "1", "PET_NPROC_PER_NODE": "8"},
         "kubeflow", 2, 1, 8, False),
        # PAI-DLC: WORLD_SIZE counts nodes
        ({"MASTER_ADDR": "dlc-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": "4", "RANK": "3"},
         "kubeflow", 4, 3, None, False),
        ({"VC_WORKER_HOSTS": "w0.svc,w1.svc", "VC_TASK_INDEX": "0", "MA_NUM_GPUS": "8"},
         "modelarts", 2, 0, 8, False),
        ({"TORCHELASTIC_RUN_ID": "x", "RANK": "3", "WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4",
          "GROUP_RANK": "0"}, "torchrun", 1, 0, 4, True),
    ],
)  # fmt: skip
def test_contexts(  # noqa: PLR0917 - one parameter per column of the table above
    environ: dict[str, str],
    kind: str,
    nodes: int,
    node_rank: int | None,
    nproc: int | None,
    inside: bool,
) -> None:
    context = detect_context(environ)
    assert (context.kind, context.num_nodes, context.node_rank) == (kind, nodes, node_rank)
    assert (context.nproc_per_node, context.inside_job) == (nproc, inside)


def test_mpi_operator_hostfile_and_explicit_hosts_win() -> None:
    hostfile = "job-worker-0.job.default.svc slots=8\njob-worker-1.job.default.svc slots=8\n"
    context = detect_context({}, mpi_hostfile=hostfile)
    assert context.kind == "mpi-operator" and context.num_nodes == 2
    slurm = {"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "n[1-4]"}
    assert detect_context(slurm, hosts="a,b").kind == "hosts"


# ------------------------------------------------------------------ environment


def test_secrets_are_withheld_unless_named() -> None:
    environ = {"NCCL_DEBUG": "INFO", "NCCL_IB_PKEY": "0x8001", "HF_TOKEN": "hf_x",
               "NCCL_SECRET_SAUCE": "s", "AWS_SECRET_ACCESS_KEY": "k", "HOME": "/root"}  # fmt: skip
    prop = propagate(environ, named={"HF_TOKEN": "hf_x"})
    assert dict(prop.env) == {"NCCL_DEBUG": "INFO", "NCCL_IB_PKEY": "0x8001", "HF_TOKEN": "hf_x"}
    assert prop.withheld == ("AWS_SECRET_ACCESS_KEY", "NCCL_SECRET_SAUCE")
    assert prop.display()["HF_TOKEN"] == "<redacted>"
    assert not looks_secret("NCCL_IB_PKEY") and looks_secret("WANDB_API_KEY")


def test_values_that_cannot_travel_are_refused() -> None:
    with pytest.raises(InputError) as caught:
        propagate({"NCCL_DEBUG": "INFO\nrm -rf /"})
    assert caught.value.code == "bad-env"
    with pytest.raises(InputError):
        plan("python t.py", env=("1BAD=x",))
    with pytest.raises(InputError) as missing:
        plan("python t.py", env=("NOT_SET_HERE",))
    assert "export NOT_SET_HERE first" in missing.value.fix


def test_a_secret_named_with_env_is_redacted_in_the_dry_run() -> None:
    text = render_plan(plan("python t.py", {"HF_TOKEN": "hf_abcdef"}, env=("HF_TOKEN",),
                            hosts="n1,n2"))  # fmt: skip
    assert "hf_abcdef" not in text and "HF_TOKEN=<redacted>" in text


# ------------------------------------------------------------------ the guides' commands


def test_ecs_nccl_tests_mpirun_is_the_guides_command(tmp_path: Path) -> None:
    """seed 002: `NP=16 NPER=8 HOSTFILE=hostfile.txt ... mpirun ...`, one line."""
    line = (GUIDES / "ecs-erdma-nccl-tests-mpirun.txt").read_text()
    guide = line[line.index("mpirun") :].replace("\\ ", "")
    for name, value in (("$NPER", "8"), ("$NP", "16"), ("$HOSTFILE", "hostfile.txt")):
        guide = guide.replace(name, value)
    hostfile = tmp_path / "hostfile.txt"
    hostfile.write_text("node1 slots=8\nnode2 slots=8\n")
    got = plan(
        "./build/all_reduce_perf -b 1B -e 512M -f 2 -g 1 -n 1000 -w 1000 -c 0 -z 0 -o sum",
        {"PATH": "/usr/bin", "LD_LIBRARY_PATH": "/usr/local/lib"},
        hostfile=str(hostfile),
        engine="mpirun",
        profile="ecs-erdma",
        iface="eth0",
        nproc_per_node=8,
        hostfile_path="hostfile.txt",
    )
    argv, meet = without_rendezvous(got.commands[0].argv)
    assert argv == tuple(shlex.split(guide))
    # the one addition to the guide's command: where a torch program's ranks meet
    # (nccl-tests bootstraps through MPI and ignores it), rank 0's host
    first = hostfile.read_text().split()[0]
    assert meet == {"MASTER_ADDR": first, "MASTER_PORT": "29500"}
    assert (got.num_nodes, got.world_size) == (2, 16)


def without_rendezvous(argv: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, str]]:
    """An mpirun command line without its ``-x MASTER_ADDR=.. -x MASTER_PORT=..``, and
    those values."""
    kept: list[str] = []
    meet: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        if word == "-x":
            value = next(words)
            if value.startswith(("MASTER_ADDR=", "MASTER_PORT=")):
                name, _, got = value.partition("=")
                meet[name] = got
                continue
            kept += [word, value]
        else:
            kept.append(word)
    return tuple(kept), meet


def test_modelarts_mpirun_is_the_guides_command() -> None:
    """seed 003: the start command with its default OPENMPI_*_ARGS filled in."""
    text = (GUIDES / "modelarts-mpirun.txt").read_text()
    start = text[text.index("mpirun") : text.index("python <Relative")]
    defaults = dict(re.findall(r'(OPENMPI_\w+_ARGS)="([^"]*)"', text))
    values = {"OPENMPI_NP": "16", "OPENMPI_HOST_FILE_PATH": "./hpnet.hostfile",
              "SSHD_PORT": "2222", "TUNE_ENV_FILE": "./hpnet.tune", "OPENMPI_EXTRA_ARGS": "",
              **defaults}  # fmt: skip
    guide = re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], start.replace("\\", ""))
    environ = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/bin", "MA_JOB": "j1",
               "VC_WORKER_HOSTS": "w0.svc,w1.svc", "VC_TASK_INDEX": "0", "MA_NUM_GPUS": "8",
               "CRED_SECRET": "s3cr3t", "S3_ENDPOINT": "obs.example"}  # fmt: skip
    got = plan("python train.py --lr 1", environ, profile="modelarts", ssh_port=2222)
    argv, meet = without_rendezvous(got.commands[0].argv)
    assert argv == (*shlex.split(guide), "python", "train.py", "--lr", "1")
    assert meet == {"MASTER_ADDR": "w0.svc", "MASTER_PORT": "29500"}
    tune = next(f for f in got.files if f.path.endswith(".tune")).content
    assert "-x MA_JOB=j1\n" in tune and "-x S3_ENDPOINT=obs.example\n" in tune
    assert "-x PATH=/usr/bin\n" in tune and "CRED" not in tune  # a secret: withheld
    assert "CRED_SECRET" in got.propagation.withheld
    hostfile = next(f for f in got.files if f.path.endswith(".hostfile")).content
    assert hostfile == "w0.svc slots=8\nw1.svc slots=8\n"


def test_scnet_env_launch_is_the_guides_script() -> None:
    """seed 001: each node exports MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and the
    NCCL settings, then runs the script."""
    text = (GUIDES / "scnet-two-node-launch.txt").read_text()
    blocks = [
        dict(re.findall(r"^export (\w+)=(\S+)", block, re.MULTILINE))
        for block in text.split("python nccl_rdma_example.py")[:2]
    ]
    got = plan(
        "python nccl_rdma_example.py",
        hosts="172.20.170.60,172.20.0.195",
        engine="env",
        profile="scnet",
        master_addr="172.20.170.63",
        env=("NCCL_SOCKET_IFNAME=ib0",),
    )
    assert [c.host for c in got.commands] == ["172.20.170.60", "172.20.0.195"]
    for guide, command in zip(blocks, got.commands, strict=True):
        assert guide and all(command.env[k] == v for k, v in guide.items()), (guide, command.env)
        assert command.argv == ("python", "nccl_rdma_example.py")


def test_remote_commands_round_trip_through_the_remote_shell() -> None:
    tricky = "a b'c\"$(id);`x`"
    got = plan("python t.py --msg " + shlex.quote(tricky), {"MY_X": tricky}, env=("MY_X",),
               hosts="n1,n2", ssh_port=2200, workdir="/work dir")  # fmt: skip
    ssh = got.commands[1].local_argv()
    assert ssh[:6] == ("ssh", "-o", "BatchMode=yes", "-p", "2200", "n2") and ssh[6] == "--"
    cd, _, remote = ssh[7].partition(" && ")
    assert shlex.split(cd) == ["cd", "/work dir"]
    words = shlex.split(remote)
    assert words[0] == "env" and f"MY_X={tricky}" in words
    assert words[-2:] == ["--msg", tricky]


def test_torchrun_plans() -> None:
    local = plan("python train.py", nproc_per_node=2)
    assert local.commands[0].argv == (
        "torchrun", "--nnodes", "1", "--nproc-per-node", "2", "--node-rank", "0",
        "--master-addr", "127.0.0.1", "--master-port", str(FREE_PORT), "--", "train.py",
    )  # fmt: skip
    two = plan("hpnet bench", hosts="launchhost:4,n2:4")
    assert [c.host for c in two.commands] == [None, "n2"]  # this machine needs no ssh
    assert two.commands[1].argv[-4:] == ("--no-python", "--", "hpnet", "bench")
    assert two.nproc_per_node == 4 and two.world_size == 8
    slurm = plan("python t.py", {"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "g[1-2]",
                                 "SLURM_GPUS_ON_NODE": "8"}, engine="torchrun")  # fmt: skip
    argv = slurm.commands[0].argv
    assert argv[:5] == ("srun", "--nodes=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1",
                        "--export=ALL")  # fmt: skip
    assert "--rdzv-endpoint" in argv and "g1:29500" in argv


def test_nested_launch_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        plan("python t.py", {"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"})
    assert caught.value.code == "nested-launch"


def test_slurm_batch_script_is_golden() -> None:
    got = plan("python train.py --epochs 2", {"NCCL_DEBUG": "INFO"}, engine="slurm",
               num_nodes=2, nproc_per_node=8, profile="roce", output_dir="out")  # fmt: skip
    script = got.files[0]
    assert script.path == "out/hpnet.sbatch" and script.mode == 0o700  # the user's alone
    assert script.content == (GOLDEN / "slurm-2x8.sbatch").read_text()
    assert got.commands[0].argv == ("sbatch", "--wait", "out/hpnet.sbatch")
    inside = plan("python t.py", {"SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "g[1-2]",
                                  "SLURM_GPUS_ON_NODE": "4"}, engine="slurm")  # fmt: skip
    srun = inside.commands[0]
    assert srun.argv[0] == "srun" and srun.argv[-3:] == ("hpnet-rank", "python", "t.py")
    assert srun.env["MASTER_ADDR"] == "g1" and "--ntasks-per-node=4" in srun.argv


def test_local_ranks_lose_the_secrets_but_ssh_keeps_its_agent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A local rank inherits the caller's environment without what the plan withholds;
    the ssh client to a remote node keeps everything it needs to log in."""
    from hpnet.launch import execute
    from hpnet.localrun import RankResult, RankSpec

    environ = {"PATH": "/usr/bin", "SSH_AUTH_SOCK": "/tmp/agent", "HF_TOKEN": "hf_x",
               "SSL_CERT_FILE": "/etc/ssl/cert.pem"}  # fmt: skip
    got = plan("python t.py", environ, hosts="launchhost,n2")
    seen: list[RankSpec] = []

    def fake_run(specs: list[RankSpec], **_: object) -> list[RankResult]:
        seen.extend(specs)
        return [RankResult(rank=s.rank, returncode=0, log_path=s.log_path) for s in specs]

    monkeypatch.setattr("hpnet.localrun.run_ranks", fake_run)
    outcome = execute.execute(got, environ=environ, timeout_seconds=10, log_dir=str(tmp_path))
    assert outcome.exit_code == 0
    local, remote = seen
    assert "HF_TOKEN" not in local.env and "SSH_AUTH_SOCK" not in local.env
    assert local.env["SSL_CERT_FILE"] == "/etc/ssl/cert.pem"  # a path, not a secret
    assert remote.argv[0] == "ssh" and remote.env["SSH_AUTH_SOCK"] == "/tmp/agent"
    assert "hf_x" not in " ".join(remote.argv)


def test_a_secret_in_the_dry_run_is_never_a_runnable_line() -> None:
    """`--dry-run` printed `export MY_TOKEN='<redacted>'`: running the plan set the
    placeholder (issue 26, item 4). A secret is a comment naming where it comes from;
    every line that is not a comment stays a command."""
    text = render_plan(plan("python t.py", {"MY_TOKEN": "abc123"}, env=("MY_TOKEN",)))
    assert "abc123" not in text
    assert "export MY_TOKEN" not in text
    lines = [line for line in text.splitlines() if "MY_TOKEN" in line]
    assert lines and all(line.startswith("#") for line in lines)
    assert "# MY_TOKEN: a secret, passed from this shell's environment" in text


def test_the_slurm_engine_runs_on_the_hosts_named() -> None:
    """`--engine slurm --hosts n1,n2` dropped the hosts (issue 26, item 4): the batch
    script now asks Slurm for those nodes; without --hosts Slurm chooses, as before."""
    named = plan("python t.py", engine="slurm", hosts="n1,n2", nproc_per_node=8)
    script = named.files[0].content
    assert "#SBATCH --nodelist=n1,n2\n" in script and "#SBATCH --nodes=2\n" in script
    chosen = plan("python t.py", engine="slurm", num_nodes=2, nproc_per_node=8)
    assert "--nodelist" not in chosen.files[0].content
