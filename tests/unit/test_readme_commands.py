"""Every command in README.md's ``sh`` blocks is run, with the exit code it gives here
(issue 26, item 1: the README is an on-ramp whose every command a test runs).

The machine is this project's: no GPU (``CUDA_VISIBLE_DEVICES`` is emptied, so a GPU
machine gives the same answers), no RDMA device, rdma-core's libraries installed.
``COMMANDS`` holds each README command with its exit code here; a command added to the
README without an entry, or an entry whose command left the README, fails the test, and
so does a command whose exit code changes. A command that cannot run here as written (a
cluster of hosts n1 and n2, ``docker run``) runs in the closest real form, with the
reason in its entry. An output shown under ``<!-- output: COMMAND -->`` must be what
that command prints: ``...`` stands for lines left out, and without a leading ``...``
the block starts where the output starts.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
HPNET = [sys.executable, "-m", "hpnet"]

#: The two set-up commands, first in the README and not run here: CI runs the second
#: (.ci/run takes the line after "# 2. "), and tests/unit/test_check.py runs the first's
#: `hpnet check` (as `hpnet check --json`); the first's venv and pip install are the
#: second's too.
SETUP = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . torch==2.13.0"
    " && hpnet check",
    "(command -v mpirun >/dev/null && command -v chromium-headless-shell >/dev/null"
    " || apt-get install -y -q --no-install-recommends openmpi-bin chromium-headless-shell"
    " >/dev/null 2>&1 || true) && python3 -m venv .venv && . .venv/bin/activate"
    " && pip install -e '.[dev]' torch==2.13.0 && ruff check . && ruff format --check ."
    " && mypy && pytest -n 2 -m 'not host_load' && pytest -m host_load",
]

#: docker run's options that run-flags may print, and whether each takes a value
#: (`docker run --help`)
DOCKER_RUN_OPTIONS = {
    "--gpus": True,
    "--device": True,
    "--ulimit": True,
    "--net": True,
    "--network": True,
    "--ipc": True,
    "--shm-size": True,
    "--runtime": True,
    "--cap-add": True,
    "--security-opt": True,
    "--privileged": False,
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Run:
    """How a README command is run here and what it must give."""

    code: int
    #: the command run instead of the README's, where that cannot run here as written
    instead: str | None = None
    why: str = ""
    #: further checks on the finished run, in its working directory
    then: Callable[[subprocess.CompletedProcess[str], Path], None] | None = None


def docker_flags(done: subprocess.CompletedProcess[str], cwd: Path) -> None:
    """The output is one line of valid `docker run` options, and nothing else."""
    assert done.stdout.count("\n") == 1, done.stdout
    words = shlex.split(done.stdout)
    assert words, "no flags"
    index = 0
    while index < len(words):
        name, has_value, value = words[index].partition("=")
        assert name in DOCKER_RUN_OPTIONS, f"not a docker run option: {words[index]}"
        if DOCKER_RUN_OPTIONS[name] and not has_value:
            index += 1
            assert index < len(words) and not words[index].startswith("-"), name
            value = words[index]
        if name == "--device":
            assert value.startswith("/dev/infiniband/"), value
        index += 1
    assert {"--net", "--ipc", "--shm-size"} <= {w.partition("=")[0] for w in words}


def report_written(done: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert (cwd / "out" / "report.html").stat().st_size > 0
    assert (cwd / "out" / "report.json").stat().st_size > 0


def dockerfile_written(done: subprocess.CompletedProcess[str], cwd: Path) -> None:
    text = (cwd / "Dockerfile").read_text()
    assert "\nFROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n" in text


def plans_n1_and_n2(done: subprocess.CompletedProcess[str], cwd: Path) -> None:
    assert "# node 0 on n1" in done.stdout and "# node 1 on n2" in done.stdout


DRY_RUN = "a real cluster of hosts n1 and n2 is not here: its plan (--dry-run), which it runs"
TREE = "tests/data/sysfs"
FAKE_HOSTS = "hpnet launch --hosts 127.0.0.1,127.0.0.2 --fake-hosts --nproc-per-node 1 --"
ENGINES = "--nnodes 2 --nproc-per-node 8 --dry-run -- hpnet check --all"

COMMANDS: dict[str, Run] = {
    # on a laptop
    f"hpnet doctor --sysfs-root {TREE}/cx-roce-mixed-gids.tree": Run(code=1),
    f"hpnet env --sysfs-root {TREE}/cx-roce-mixed-gids.tree": Run(code=0),
    "hpnet verify tests/data/nccl-logs/h200x4-bad-socket-ifname-nccl2.28.9": Run(code=1),
    "hpnet hang tests/data/flight-recorder/nccl-torch2.11-w4-kill-rank2": Run(code=1),
    # on a GPU node (here: none, so not ready)
    "hpnet check": Run(code=1),
    "hpnet check --full --report out/": Run(code=1, then=report_written),
    # in a container
    "docker run $(hpnet image run-flags --format docker) IMAGE hpnet check": Run(
        code=0,
        instead="hpnet image run-flags --format docker",
        why="no docker here: the flags it is given, checked to be docker run options",
        then=docker_flags,
    ),
    f"hpnet image run-flags --sysfs-root {TREE}/cx6-ib-dgx.tree --format docker": Run(
        code=0, then=docker_flags
    ),
    "hpnet image dockerfile --profile pai-dlc-erdma"
    " --base nvidia/cuda:12.4.1-devel-ubuntu22.04 -o Dockerfile": Run(
        code=0, then=dockerfile_written
    ),
    # the build stage (no /dev/infiniband here): libraries there, no CUDA or NCCL: WARN
    "hpnet image check --profile pai-dlc-erdma": Run(code=0),
    # on a cluster
    "hpnet env --profile pai-dlc-erdma": Run(code=0),
    "hpnet launch --hosts n1,n2 --nproc-per-node 8 --dry-run -- hpnet check --all": Run(
        code=0, then=plans_n1_and_n2
    ),
    "hpnet launch --hosts n1,n2 --nproc-per-node 8 -- hpnet check --all": Run(
        code=0,
        instead="hpnet launch --hosts n1,n2 --nproc-per-node 8 --dry-run -- hpnet check --all",
        why=DRY_RUN,
        then=plans_n1_and_n2,
    ),
    "hpnet launch --hosts n1,n2 --nproc-per-node 8 -- hpnet isolate --report out/": Run(
        code=0,
        instead="hpnet launch --hosts n1,n2 --nproc-per-node 8 --dry-run"
        " -- hpnet isolate --report out/",
        why=DRY_RUN,
        then=plans_n1_and_n2,
    ),
    f"hpnet launch --engine slurm {ENGINES}": Run(code=0),
    f"hpnet launch --engine k8s --image IMAGE {ENGINES}": Run(code=0),
}

#: README commands that another test already runs as they are: the fake-host launches
#: take seconds each, so they are not run twice (see test_launch_run_runs_them)
RUN_ELSEWHERE = {
    f"{FAKE_HOSTS} hpnet check --all": 1,  # no GPU here: not ready
    f"{FAKE_HOSTS} hpnet isolate": 0,  # two healthy fake hosts: no outlier
}


def fenced_blocks(text: str) -> list[tuple[str, list[str], str]]:
    """Each fenced block: its info string, its lines, and the line before its fence."""
    blocks: list[tuple[str, list[str], str]] = []
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        if lines[index].startswith("```"):
            info, before = lines[index][3:].strip(), lines[index - 1] if index else ""
            end = lines.index("```", index + 1)
            blocks.append((info, lines[index + 1 : end], before))
            index = end
        index += 1
    return blocks


def readme_commands() -> list[str]:
    """The command lines of the README's sh blocks, their trailing comments dropped."""
    commands = []
    for info, lines, _ in fenced_blocks(README.read_text()):
        if info == "sh":
            for line in lines:
                if line.strip() and not line.startswith("#"):
                    commands.append(line.split(" # ", 1)[0].rstrip())
    return commands


def excerpts() -> dict[str, list[str]]:
    """The outputs the README shows, by the command the marker above them names."""
    shown = {}
    for _info, lines, before in fenced_blocks(README.read_text()):
        marker = re.fullmatch(r"<!-- output: (.+) -->", before)
        if marker:
            shown[marker.group(1)] = lines
    return shown


def test_the_set_up_commands_come_first_and_every_other_command_is_known() -> None:
    commands = readme_commands()
    assert README.read_text().startswith("# hpnet\n\n```sh\n# 1. ")
    assert commands[:2] == SETUP
    assert sorted(commands[2:]) == sorted([*COMMANDS, *RUN_ELSEWHERE]), (
        "a README command without an entry here, or an entry the README lost"
    )
    assert len(set(commands)) == len(commands)


def test_every_shown_output_belongs_to_a_command_run_here() -> None:
    assert set(excerpts()) <= set(COMMANDS)
    assert excerpts()  # the README shows some


def test_commands_in_the_prose_are_commands_of_the_sh_blocks() -> None:
    """A full command in the running text is one of the tested ones (or part of one);
    bare names (`hpnet check`, `hpnet image run-flags`) name a command, not a run."""
    prose = re.sub(r"```.*?```", "", README.read_text(), flags=re.DOTALL)
    commands = readme_commands()
    for span in re.findall(r"`(hpnet [^`]*)`", prose):
        if not re.fullmatch(r"hpnet [a-z-]+( [a-z-]+)?", span):
            assert any(span in command for command in commands), span


def environment() -> dict[str, str]:
    launcher = ("NCCL_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "TORCHELASTIC_", "PET_", "VC_")
    rank = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "KUBERNETES_PORT"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(launcher) and k not in rank}
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def matches(shown: list[str], output: str) -> bool:
    """``shown`` is ``output`` with runs of lines left out where it says ``...``."""
    chunks: list[list[str]] = [[]]
    for line in shown:
        if line == "...":
            chunks.append([])
        else:
            chunks[-1].append(line)
    lines = output.replace(f"node {socket.gethostname()}:", "node vm:").split("\n")
    if lines[: len(chunks[0])] != chunks[0]:
        return False
    position = len(chunks[0])
    for chunk in chunks[1:]:
        for start in range(position, len(lines) - len(chunk) + 1):
            if lines[start : start + len(chunk)] == chunk:
                position = start + len(chunk)
                break
        else:
            return False
    return True


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_readme_command_runs_with_its_exit_code(command: str, tmp_path: Path) -> None:
    run = COMMANDS[command]
    assert (run.instead is None) == (run.why == ""), "say why a command runs in another form"
    words = shlex.split(run.instead or command)
    assert words[0] == "hpnet"
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the README's paths are the repo's
    done = subprocess.run(
        [*HPNET, *words[1:]], cwd=tmp_path, env=environment(), capture_output=True, text=True,
        timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == run.code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    if run.then:
        run.then(done, tmp_path)
    shown = excerpts().get(command)
    if shown:
        assert matches(shown, done.stdout), f"README output of {command!r} is not what it prints"


def test_launch_run_runs_them() -> None:
    """The fake-host launches are test_launch_run's: the same flags and hpnet command
    after ``--``, which it runs with a free ``--master-port`` (the README's run picks a free
    one itself) and ``python -m hpnet`` for ``hpnet``, asserting the same exit code."""
    from tests.unit import test_launch_run

    test = test_launch_run.test_a_cluster_verdict_through_launch_is_a_verdict_not_a_crash
    [mark] = [m for m in test.pytestmark if m.name == "parametrize"]
    cases = {" ".join(command): code for command, _verdict, code in mark.args[1]}
    flags = shlex.split(FAKE_HOSTS)[2:-1]
    assert ", ".join(f'"{flag}"' for flag in flags) in inspect.getsource(test)
    for command, code in RUN_ELSEWHERE.items():
        assert command.startswith(FAKE_HOSTS + " hpnet ")
        assert cases[command.removeprefix(FAKE_HOSTS + " hpnet ")] == code, command


@pytest.mark.parametrize(
    ("shown", "output", "ok"),
    [
        (["a", "b"], "a\nb\nc", True),
        (["b"], "a\nb", False),  # no leading ...: the output's first lines
        (["...", "b"], "a\nb", True),
        (["a", "...", "c", "d"], "a\nb\nc\nd", True),
        (["a", "...", "d", "c"], "a\nb\nc\nd", False),  # in order
        (["a", "c"], "a\nb\nc", False),  # lines left out only where ... says
    ],
)
def test_an_excerpt_matches_only_what_was_printed(shown: list[str], output: str, ok: bool) -> None:
    assert matches(shown, output) is ok


def test_a_recorded_output_is_the_recorded_file() -> None:
    """Output that needs a machine this suite does not have (the 4x H200's `hpnet
    check`) is shown under ``<!-- recorded: FILE -->``: the lines of the file the device
    run saved (benchmarks/results), with ``...`` where lines are left out."""
    recorded = {}
    for _info, lines, before in fenced_blocks(README.read_text()):
        marker = re.fullmatch(r"<!-- recorded: (.+) -->", before)
        if marker:
            recorded[marker.group(1)] = lines
    assert recorded, "the README shows the 4-GPU check"
    for path, shown in recorded.items():
        assert path.startswith("benchmarks/results/"), path
        assert matches(shown, (ROOT / path).read_text()), f"README's {path} is not that file"
