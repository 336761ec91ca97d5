"""Issue 15: what ``hpnet launch`` generates (batch scripts, hostfiles, tune files,
manifests, ssh command lines) is executed by clusters. Every test drives the CLI as
a user would and runs what it generated through stand-ins that execute what they
receive (``sbatch`` runs the script with its ``#!`` interpreter, ``ssh`` runs the
remote command with ``sh -c`` in a login's bare environment, feeding its stdin
through, ``srun`` and ``torchrun`` exec the command), then proves that no payload ran
(``touch MARKER`` never creates the marker) and that every value reached the rank
unchanged (the rank writes its argv, environment and working directory to a file).

To see these fail on the code before issue 15 (an untouched checkout at OLD)::

    PYTHONPATH=OLD/src python -m pytest -p no:cacheprovider tests/unit/test_launch_security.py
"""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import hpnet
from hpnet.errors import InputError
from hpnet.launch.hosts import check_host, expand_nodelist

#: the hpnet under test (PYTHONPATH decides: the subprocesses run the same one)
SRC = Path(hpnet.__file__).resolve().parents[1]
PY = sys.executable

#: the rank: its argv, environment and working directory, and every process whose
#: command line holds one of NEEDLES (a secret must never be in one) while it runs
RANK = """\
import json, os, sys
needles = [n.encode() for n in {needles!r}]
found = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{{pid}}/cmdline", "rb") as handle:
            line = handle.read()
    except OSError:
        continue
    found += [line.decode(errors="replace") for n in needles if n in line]
record = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "cmdlines": found}}
with open(os.path.join({out!r}, f"rank-{{os.getpid()}}.json"), "w") as handle:
    json.dump(record, handle)
"""

LOG = """\
import json, os, sys
with open({log!r}, "a") as handle:
    handle.write(json.dumps([os.path.basename(sys.argv[0]), *sys.argv[1:]]) + "\\n")
args = sys.argv[1:]
"""

STANDINS = {
    # sshd gives the remote command a login's environment and home directory, and the
    # remote command is its words joined by spaces, run by the login shell
    "ssh": """
i = 0
while args[i].startswith("-"):
    i += 2 if args[i] in ("-o", "-p", "-l", "-i") else 1
rest = args[i + 1 :]
rest = rest[1:] if rest[:1] == ["--"] else rest
info = os.fstat(0)  # what ssh would carry to the node on its stdin
with open({log!r} + ".stdin", "a") as handle:
    handle.write(json.dumps([info.st_mode, info.st_nlink]) + "\\n")
os.chdir({home!r})
os.execve("/bin/sh", ["sh", "-c", " ".join(rest)], {{"PATH": {path!r}, "HOME": {home!r}}})
""",
    # Slurm runs the batch script with the interpreter of its #! line, in the
    # environment sbatch had (--export=ALL, sbatch's default)
    "sbatch": """
with open(args[-1]) as handle:
    first = handle.readline()
shell = first[2:].split() if first.startswith("#!") else ["/bin/sh"]
os.execv(shell[0], [*shell, args[-1]])
""",
    "srun": """
while args[0].startswith("--"):
    args.pop(0)
tasks = {{"SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NTASKS": "1",
         "SLURM_NTASKS_PER_NODE": "1"}}
os.execvpe(args[0], args, {{**os.environ, **tasks}})
""",
    "scontrol": "print('node1')",
    # torchrun's workers: the target after "--", with this Python unless --no-python
    "torchrun": """
cut = args.index("--")
flags, target = args[:cut], args[cut + 1 :]
python = [sys.executable, *(["-m"] if "-m" in flags else [])]
program = target if "--no-python" in flags else [*python, *target]
os.execvp(program[0], program)
""",
}


class World:
    """A tmp directory with the stand-ins on PATH, a home, and the ranks' records."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.home = tmp / "home"
        self.ranks_dir = tmp / "ranks"
        self.marker = tmp / "MARKER"
        self.log = tmp / "argv.jsonl"
        for directory in (self.bin, self.home, self.ranks_dir, tmp / "tmp"):
            directory.mkdir()
        self.path = f"{self.bin}:{Path(PY).parent}:/usr/bin:/bin"
        for name, body in STANDINS.items():
            self.standin(name, body)

    def standin(self, name: str, body: str, directory: Path | None = None) -> Path:
        script = (directory or self.bin) / name
        fields = {"log": str(self.log), "home": str(self.home), "path": self.path}
        code = LOG.format(**fields) + body.format(**fields)
        script.write_text(f"#!{PY}\n{code}")
        script.chmod(0o755)
        return script

    def rank(self, *needles: str) -> str:
        """The rank program (a file: nothing of the needles goes in an argv)."""
        path = self.tmp / "rank.py"
        path.write_text(RANK.format(needles=list(needles), out=str(self.ranks_dir)))
        return str(path)

    def environ(self, **extra: str) -> dict[str, str]:
        return {"PATH": self.path, "HOME": str(self.home), "PYTHONPATH": str(SRC),
                "TMPDIR": str(self.tmp / "tmp"), "LANG": "C.UTF-8", **extra}  # fmt: skip

    def launch(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, "-m", "hpnet", "launch", *args], cwd=self.tmp, env=env or self.environ(),
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def ranks(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.ranks_dir.glob("*.json"))]

    def argvs(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def refused(done: subprocess.CompletedProcess[str], *names: str) -> None:
    """Exit 2 with one ``error[code]: what — where — fix`` line naming ``names``."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("error[") and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count(" — ") >= 1, done.stderr  # the input and the fix named
    for name in names:
        assert name in done.stderr, (name, done.stderr)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def payload(world: World) -> str:
    """A value holding every shell construct that would run ``touch MARKER``."""
    m = world.marker
    return f" $(touch {m}) `touch {m}`; touch {m} | 'q' \"dq\" \\ \t{{x}} * # end "


# ------------------------------------------------------------ 1. --job-name


@pytest.mark.parametrize("name", ["x\ntouch MARKER", "x\n"])
def test_job_name_cannot_add_a_line_to_the_batch_script(world: World, name: str) -> None:
    rank = world.rank()
    job = name.replace("MARKER", str(world.marker))
    done = world.launch("--engine", "slurm", "--nnodes", "1", "--cpu", "--output-dir", "out",
                        "--job-name", job, "--", PY, rank)  # fmt: skip
    assert not world.marker.exists(), "a line of the job name ran in the batch script"
    refused(done, "--job-name")
    assert not (world.tmp / "out").exists() or not list((world.tmp / "out").iterdir())


def test_a_variable_name_cannot_end_a_script_line(world: World) -> None:
    done = world.launch("--engine", "slurm", "--nnodes", "1", "--cpu", "--output-dir", "out",
                        "--env", "NCCL_X\n=1", "--", "true")  # fmt: skip
    refused(done, "not a variable name")
    assert not (world.tmp / "out").exists()


@pytest.mark.parametrize("name", ["../../escaped", "ABS"])
def test_job_name_cannot_leave_the_output_dir(world: World, name: str) -> None:
    outside = world.tmp / "escaped"
    job = str(outside) if name == "ABS" else name
    done = world.launch("--engine", "slurm", "--nnodes", "1", "--cpu", "--output-dir",
                        "a/b/out", "--job-name", job, "--", "true")  # fmt: skip
    written = [p for p in world.tmp.rglob("*.sbatch")]
    assert all((world.tmp / "a/b/out") in p.parents for p in written), written
    refused(done, "--job-name")


def test_batch_script_is_private_and_carries_values_unchanged(world: World) -> None:
    token = f"tok-{secrets.token_hex(8)}"
    value, secret = payload(world), f"{token} {payload(world)}"
    rank = world.rank(token)
    env = world.environ(MY_TOKEN=secret, HF_TOKEN="hf-unnamed", MY_V=value)
    done = world.launch("--engine", "slurm", "--nnodes", "1", "--cpu", "--output-dir", "out",
                        "--job-name", "train-1.v2", "--env", "MY_TOKEN", "--env", "MY_V",
                        "--", PY, rank, value, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not world.marker.exists()
    (got,) = world.ranks()
    assert got["env"]["MY_V"] == value and got["argv"] == [value]
    assert got["env"]["MY_TOKEN"] == secret and "HF_TOKEN" not in got["env"]
    assert got["cmdlines"] == []
    script = world.tmp / "out" / "train-1.v2.sbatch"
    assert mode(script) == 0o700  # the user's alone
    assert token not in script.read_text()  # the secret came in sbatch's environment
    assert all(token not in word for argv in world.argvs() for word in argv)


# ------------------------------------------------------------ 2. IPv6 zones


def read_hostfile(text: str) -> list[tuple[str, dict[str, str]]]:
    """An Open MPI hostfile as orte/util/hostfile/hostfile_lex.l reads it: a line
    feed ends an entry, blanks are [ \\t\\f\\v], ``#`` starts a comment, the first
    word is the host and the others are key=value."""
    hosts = []
    for line in text.split("\n"):
        words = line.split("#", 1)[0].replace("\t", " ").replace("\f", " ").split(" ")
        words = [w for w in (w.replace("\v", "") for w in words) if w]
        if words:
            hosts.append((words[0], dict(w.partition("=")[::2] for w in words[1:])))
    return hosts


#: zones Python's ipaddress takes (it takes any text after the "%")
ZONES = ["$(id)", ";id", "`id`", "\nattacker.example slots=64", "#x\tslots=64"]


@pytest.mark.parametrize("zone", ZONES)
def test_ipv6_zone_cannot_inject_into_the_hostfile(world: World, zone: str) -> None:
    world.standin("mpirun", "")  # records its argv, runs nothing
    host = f"fe80::1%{zone}"
    done = world.launch("--engine", "mpirun", "--hosts", f"{host},n2", "--nproc-per-node", "2",
                        "--output-dir", "out", "--", "true")  # fmt: skip
    for hostfile in (world.tmp / "out").glob("*.hostfile"):
        names = [name for name, _ in read_hostfile(hostfile.read_text())]
        assert names == [host, "n2"], f"the hostfile names {names}"
    assert world.argvs() == [], "mpirun ran"
    refused(done, "zone")


def test_ipv6_zone_names_an_interface_and_the_hostfile_reads_back(world: World) -> None:
    world.standin("mpirun", "")
    done = world.launch("--engine", "mpirun", "--hosts", "fe80::1%eth0,n2", "--nproc-per-node",
                        "2", "--output-dir", "out", "--", "true")  # fmt: skip
    assert done.returncode == 0, done.stderr
    hostfile = world.tmp / "out" / "hpnet.hostfile"
    assert read_hostfile(hostfile.read_text()) == [
        ("fe80::1%eth0", {"slots": "2"}),
        ("n2", {"slots": "2"}),
    ]
    assert mode(hostfile) == 0o600


@pytest.mark.parametrize("name", ["fe80::1%eth0\n", "gpu1\n", "fe80::1%a b", "fe80::1%$(id)"])
def test_a_host_name_is_one_word_to_the_end(name: str) -> None:
    """A final line feed is not the end of a name ("$" in a regex would let it pass)."""
    with pytest.raises(InputError):
        check_host(name)


@pytest.mark.parametrize("where", ["--master-addr", "MASTER_ADDR", "--hostfile"])
def test_ipv6_zone_is_checked_wherever_a_host_comes_from(world: World, where: str) -> None:
    host = "fe80::1%$(id)"
    env, args = world.environ(), ["--dry-run", "--", "true"]
    if where == "--master-addr":
        args = ["--hosts", "n1,n2", "--master-addr", host, *args]
    elif where == "MASTER_ADDR":  # a PyTorchJob / PAI-DLC pod
        env.update(MASTER_ADDR=host, MASTER_PORT="29500", WORLD_SIZE="2", RANK="0")
    else:
        (world.tmp / "hosts").write_text(f"n1 slots=1\n{host} slots=1\n")
        args = ["--hostfile", "hosts", *args]
    refused(world.launch(*args, env=env), "zone")


# ------------------------------------------------------------ 3 and 6. secrets


@pytest.mark.parametrize("engine", ["env", "torchrun"])
def test_a_named_secret_travels_on_ssh_stdin_never_in_an_argv(world: World, engine: str) -> None:
    token, password = f"tok-{secrets.token_hex(8)}", f"pw-{secrets.token_hex(8)}"
    secret, plain = f"  {token} {payload(world)}", payload(world)
    proxy = f"http://alice:{password}@proxy.corp:3128"
    rank = world.rank(token, password)
    env = world.environ(MY_TOKEN=secret, HTTPS_PROXY=proxy, HF_TOKEN="hf-unnamed", MY_V=plain)
    args = ["--engine", engine, "--hosts", "n1,n2", "--nproc-per-node", "1", "--env", "MY_TOKEN",
            "--env", "HTTPS_PROXY", "--env", "MY_V", "--", PY, rank, plain]  # fmt: skip
    dry = world.launch("--dry-run", *args, env=env)
    assert dry.returncode == 0 and token not in dry.stdout and password not in dry.stdout
    done = world.launch(*args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    for argv in world.argvs():  # ssh's and torchrun's
        assert not any(token in w or password in w for w in argv), argv
    ranks = world.ranks()
    assert len(ranks) == 2 and not world.marker.exists()
    for got in ranks:
        assert got["cmdlines"] == [], "a process had a secret in its command line"
        assert got["env"]["MY_TOKEN"] == secret and got["env"]["HTTPS_PROXY"] == proxy
        assert got["env"]["MY_V"] == plain and got["argv"] == [plain]
        assert "HF_TOKEN" not in got["env"]
    # each node's secrets came from a file only the user could read, removed once open
    stdins = [json.loads(line) for line in Path(f"{world.log}.stdin").read_text().splitlines()]
    assert stdins == [[stat.S_IFREG | 0o600, 0]] * 2
    assert list((world.tmp / "tmp").iterdir()) == []


def test_url_credentials_are_secrets_in_values_and_plans(world: World) -> None:
    password, other = f"pw-{secrets.token_hex(8)}", f"pw-{secrets.token_hex(8)}"
    rank = world.rank(password)
    env = world.environ(NCCL_PROXY_URL=f"https://bob:{password}@mirror.corp/x")
    url = f"https://carol:{other}@data.corp/set"
    args = ["--engine", "env", "--hosts", "n1", "--", PY, rank, url]
    for extra in ([], ["--json"]):
        dry = world.launch("--dry-run", *extra, *args, env=env)
        assert dry.returncode == 0, dry.stderr
        assert password not in dry.stdout and other not in dry.stdout, dry.stdout
        assert "https://carol:<redacted>@data.corp/set" in dry.stdout
    done = world.launch(*args, env=env)
    assert done.returncode == 0, done.stderr
    (got,) = world.ranks()
    assert "NCCL_PROXY_URL" not in got["env"]  # forwarded by prefix: withheld
    assert got["argv"] == [url] and got["cmdlines"] == []


# ------------------------------------------------------------ 4. ModelArts' tune file


def read_tune(text: str) -> list[dict[str, str]]:
    """The ``-x NAME=VALUE`` pairs of a tune file, as Open MPI 4 (keyval_lex.l: words
    end at [ \\t\\f\\v]) and Open MPI 5 (PRRTE schizo_ompi.c: words split on spaces,
    a quote stripped from either end) read them: one mapping each."""
    readings = []
    # (str.split() would also split at Unicode spaces such as U+00A0: flex reads bytes)
    for split in (lambda s: [w for w in re.split("[ \t\f\v]+", s) if w],
                  lambda s: [w.strip('"') for w in s.split(" ") if w]):  # fmt: skip
        pairs: dict[str, str] = {}
        for line in text.split("\n"):
            words = split(line)
            for flag, word in itertools.pairwise(words):
                if flag == "-x":
                    name, _, value = word.partition("=")
                    pairs[name] = value
        readings.append(pairs)
    return readings


def test_tune_file_values_cannot_inject_mpirun_options(world: World) -> None:
    values = {"MA_X": "a -x INJECTED=yes", "MA_SUB": f"$(touch {world.marker})",
              "MA_Q": '"quoted"', "MA_OK": "a=b,c#d", "MA_NUM_GPUS": "1"}  # fmt: skip
    env = world.environ(VC_WORKER_HOSTS="localhost", VC_TASK_INDEX="0", **values)
    rank = world.rank()
    args = ["--profile", "modelarts", "--output-dir", "out", "--", PY, rank]
    dry = world.launch("--dry-run", *args, env=env)
    assert dry.returncode == 0, dry.stderr
    if shutil.which("mpirun") is None:  # the file is still written and read back
        world.standin("mpirun", "")
    done = world.launch(*args, env={**env, "TMPDIR": "/tmp"})  # Open MPI's socket paths
    assert done.returncode == 0, done.stdout + done.stderr
    tune = world.tmp / "out" / "hpnet.tune"
    for reading in read_tune(tune.read_text()):
        assert {k: v for k, v in reading.items() if k.startswith(("MA_", "INJ"))} == {
            k: v for k, v in values.items() if k in reading
        }, reading
    assert mode(tune) == 0o600 and not world.marker.exists()
    if shutil.which("mpirun") is not None:
        (got,) = world.ranks()
        assert "INJECTED" not in got["env"]
        assert {k: got["env"].get(k) for k in values} == values


# ------------------------------------------------------------ 5 and 7. files


def test_generated_files_replace_a_planted_symlink(world: World) -> None:
    out = world.tmp / "out"
    out.mkdir()
    victim, outside = world.tmp / "victim", world.tmp / "outside.yaml"
    victim.write_text("the user's file\n")
    victim.chmod(0o644)
    (out / "hpnet.pytorchjob.yaml").symlink_to(victim)
    (out / "hpnet.secret.yaml").symlink_to(outside)  # dangling: would create it
    env = world.environ(MY_TOKEN="tok-x")
    done = world.launch("--engine", "k8s", "--image", "reg/img:1", "--output-dir", "out",
                        "--env", "MY_TOKEN", "--", "./prog", env=env)  # fmt: skip
    assert victim.read_text() == "the user's file\n" and mode(victim) == 0o644
    assert not outside.exists()
    assert done.returncode == 0, done.stderr
    for name in ("hpnet.pytorchjob.yaml", "hpnet.secret.yaml"):
        assert stat.S_ISREG((out / name).lstat().st_mode) and mode(out / name) == 0o600


def test_a_rank_log_is_never_written_through_a_planted_symlink(world: World) -> None:
    logs = world.tmp / "logs"
    logs.mkdir()
    victim = world.tmp / "victim"
    victim.write_text("the user's file\n")
    (logs / "node-0.log").symlink_to(victim)  # what a shared --logs folder can hold
    done = world.launch("--engine", "env", "--logs", "logs", "--", PY, "-c", "print('x' * 99)")
    assert victim.read_text() == "the user's file\n"
    refused(done, "node-0.log")
    assert "symlink" in done.stderr


@pytest.mark.parametrize("engine", ["k8s", "modelarts"])
def test_a_dry_run_piped_to_a_shell_runs_no_payload(world: World, engine: str) -> None:
    evil = f"$(touch {world.marker})"
    env = world.environ(MY_V=evil)
    if engine == "k8s":
        args = ["--engine", "k8s", "--image", "reg/img:1", "--env", "MY_V"]
    else:  # worker-0's variables, in the tune file
        env.update(VC_WORKER_HOSTS="localhost", VC_TASK_INDEX="0", MA_V=evil, MA_W="`touch M`")
        args = ["--profile", "modelarts"]
        world.standin("mpirun", "")
    done = world.launch("--dry-run", *args, "--", "./prog", evil, env=env)
    assert done.returncode == 0, done.stderr
    subprocess.run(["sh"], input=done.stdout, cwd=world.tmp, env=env, capture_output=True,
                   text=True, timeout=30, check=False)  # fmt: skip
    assert not world.marker.exists(), done.stdout


# ------------------------------------------------------------ 13. missing programs


@pytest.mark.parametrize("what", ["sbatch", "the program"])
def test_a_program_not_on_path_is_an_input_error(world: World, what: str) -> None:
    env = world.environ(PATH="/usr/bin:/bin")
    if what == "sbatch":
        done = world.launch("--engine", "slurm", "--nnodes", "1", "--cpu", "--", "true", env=env)
        refused(done, "sbatch", "not on PATH")
    else:
        done = world.launch("--engine", "env", "--", "hpnet-no-such-program", env=env)
        refused(done, "hpnet-no-such-program", "not on PATH")


def unactivated_venv(world: World, name: str) -> Path:
    """A venv's bin with its python (and nothing else), not on PATH."""
    bin_dir = world.tmp / name / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(os.path.realpath(PY))
    return bin_dir


def test_torchrun_beside_an_unactivated_venvs_python_is_used(world: World) -> None:
    bin_dir = unactivated_venv(world, "venv")
    world.standin("torchrun", STANDINS["torchrun"], directory=bin_dir)
    rank = world.rank()
    env = world.environ(PATH="/usr/bin:/bin", MY_V=payload(world))
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "hpnet", "launch", "--env", "MY_V", "--", "python", rank],
        cwd=world.tmp, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [argv[0] for argv in world.argvs()] == ["torchrun"]
    (got,) = world.ranks()
    assert got["env"]["MY_V"] == payload(world)


def test_torchrun_falls_back_to_python_m_torch_distributed_run(world: World) -> None:
    bin_dir = unactivated_venv(world, "venv")
    run = world.tmp / "site" / "torch" / "distributed"
    run.mkdir(parents=True)
    (run.parent / "__init__.py").write_text("")
    (run / "__init__.py").write_text("")
    (run / "run.py").write_text(LOG.format(log=str(world.log)) + STANDINS["torchrun"].format())
    rank = world.rank()
    env = world.environ(PATH="/usr/bin:/bin", PYTHONPATH=f"{SRC}:{run.parents[1]}")
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", "hpnet", "launch", "--", "python", rank],
        cwd=world.tmp, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(world.argvs()) == 1 and len(world.ranks()) == 1


@pytest.mark.parametrize("nodelist", ["", ",", "gpu[3-1]", "gpu[1-2", "gpu[]", "gpu[1-2]],x"])
def test_a_malformed_slurm_nodelist_is_an_input_error(world: World, nodelist: str) -> None:
    env = world.environ(SLURM_JOB_ID="7", SLURM_JOB_NODELIST=nodelist)
    refused(world.launch("--dry-run", "--", "true", env=env), "SLURM_JOB_NODELIST")


# ------------------------------------------------------------ 16. bounds


def test_a_huge_nodelist_is_refused_before_it_is_expanded(world: World) -> None:
    with pytest.raises(InputError, match="more than"):
        expand_nodelist("gpu[0-99999]")
    env = world.environ(SLURM_JOB_ID="7", SLURM_JOB_NODELIST="gpu[0-9999999]")
    started = time.monotonic()
    done = world.launch("--dry-run", "--", "true", env=env, timeout=15)
    assert time.monotonic() - started < 10
    refused(done, "SLURM_JOB_NODELIST")


BIG = "100000000000000000000"


@pytest.mark.parametrize(
    "args",
    [
        ["--hosts", f"n1:{BIG},n2"],
        ["--hostfile", "HOSTFILE"],
        ["--nproc-per-node", BIG],
        ["--engine", "slurm", "--nnodes", BIG],
        ["--master-port", "70000"],
        ["--master-port=-1"],
        ["--hosts", "n1,n2", "--ssh-port", "70000"],
        ["--hosts", "n1,n2", "--ssh-port", "0"],
        ["MASTER_PORT=70000"],
        ["PET_NPROC_PER_NODE=" + BIG],
    ],
)
def test_counts_and_ports_out_of_range_are_refused(world: World, args: list[str]) -> None:
    env = world.environ()
    if args == ["--hostfile", "HOSTFILE"]:
        (world.tmp / "hosts").write_text(f"n1 slots={BIG}\nn2 slots=8\n")
        args = ["--hostfile", "hosts"]
    elif "=" in args[0] and not args[0].startswith("-"):  # a PyTorchJob pod's variables
        env.update(MASTER_ADDR="10.0.0.1", MASTER_PORT="29500", WORLD_SIZE="2", RANK="0")
        env.update([args[0].split("=", 1)])
        args = []
    done = world.launch(*args, "--dry-run", "--", "true", env=env)
    refused(done)
    assert BIG not in done.stdout


def test_a_workdir_starting_with_a_dash_is_a_directory(world: World) -> None:
    (world.home / "-P").mkdir()
    rank = world.rank()
    done = world.launch("--engine", "env", "--hosts", "n1", "--workdir=-P", "--", PY, rank)
    assert done.returncode == 0, done.stderr
    (got,) = world.ranks()
    assert got["cwd"] == str(world.home / "-P")


def test_a_secret_in_the_resolved_nccl_settings_is_withheld(world: World) -> None:
    # the profile's resolution carries the caller's NCCL_* values: a secret among them
    # was listed as "not forwarded" and forwarded all the same
    env = world.environ(NCCL_IB_SECRET_TOKEN="tok-resolved", NCCL_PROXY="https://u:pw@proxy")
    done = world.launch("--profile", "roce", "--hosts", "a,b", "--dry-run", "--json", "--",
                        "true", env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    text = json.dumps(plan)
    for name in ("NCCL_IB_SECRET_TOKEN", "NCCL_PROXY"):
        assert name in text  # named as withheld
        assert all(name not in command["env"] for command in plan["commands"]), plan
    named = world.launch("--profile", "roce", "--hosts", "a,b", "--env", "NCCL_PROXY",
                         "--dry-run", "--json", "--", "true", env=env)  # fmt: skip
    assert all("NCCL_PROXY" in c["env"] for c in json.loads(named.stdout)["commands"])
