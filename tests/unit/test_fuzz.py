"""Fuzzing: every reader with mutated real inputs, every generator with hostile values.

Readers (NCCL logs, RDMA listings, nccl-tests outputs, env files, configs, hostfiles,
Slurm node lists) get the real files of tests/data, mutated byte by byte, line by line
and with hostile pieces (escape sequences, NUL, CR, huge numbers, shell syntax, runs of
brackets). Each must answer with a result or one of hpnet's own errors (exit 2): never
another exception (exit 3), and never take longer than :data:`LIMIT_S` on one input (a
hang). Generators (the env formats) get hostile values, and each value must come out of
its consumer exactly as it went in (a shell's ``eval``, ``shlex``, JSON, the YAML the
kubelet reads and then expands ``$(VAR)`` in).

Bounded: a fixed seed (the same examples on every run, so CI does not flake) and
``HPNET_FUZZ_EXAMPLES`` examples per test (60 by default; set it higher to hunt).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpnet.errors import HpnetError
from tests.conftest import DATA

EXAMPLES = int(os.environ.get("HPNET_FUZZ_EXAMPLES", "60"))
#: one input may take this long at most: more is a hang
LIMIT_S = 10
FUZZ = settings(
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: pieces an attacker or an unlucky log puts into a file
HOSTILE = (
    b"\x1b[2J\x1b]0;PWNED\x07", b"\x00", b"\r", b"\r\n", b"\xff\xfe\xfd", b"\t" * 50,
    b"$(touch /tmp/hpnet-pwned)", b"`id`", b"'\"\\", b";rm -rf ~;", b"\n-x INJECTED=yes\n",
    b"9" * 40, b"1e999", b"-1", b"nan", b"0x7fffffffffffffff", b"[" * 200, b"{" * 200,
    b" NCCL INFO " * 50, b"NCCL WARN", b"\xe2\x80\xae", b"\n" * 100, b" " * 5000,
    b"GID[999999999999]:", b"mlx5_0:999999999", b"gpu[0-99999999]", b"fe80::1%$(id)",
)  # fmt: skip


def _files(folder: str, pattern: str = "*") -> list[Path]:
    return sorted(
        p
        for p in (DATA / folder).rglob(pattern)
        if p.is_file() and not p.name.endswith((".source.txt", ".md")) and p.name != "SOURCE.txt"
    )


LOGS = _files("nccl-logs")
LISTINGS = _files("listings")
NCCL_TESTS = _files("nccl-tests")


class Blob(bytes):
    """Input bytes, shown by their origin and size (a failing example's whole text is
    rebuilt from the seed, not read from the report)."""

    origin = ""

    def __repr__(self) -> str:
        return f"<{len(self)} bytes from {self.origin}>"


@st.composite
def mutated(draw: st.DrawFn, files: list[Path]) -> bytes:
    """A real file, changed by up to eight edits."""
    source = draw(st.sampled_from(files))
    data = bytearray(source.read_bytes()[:100_000])
    edits = draw(st.lists(st.integers(0, 5), max_size=8))
    for edit in edits:
        at = draw(st.integers(0, max(len(data), 1) - 1)) if data else 0
        if edit == 0:  # a hostile piece
            data[at:at] = draw(st.sampled_from(HOSTILE))
        elif edit == 1:  # random bytes
            data[at:at] = draw(st.binary(min_size=1, max_size=32))
        elif edit == 2:  # a cut
            del data[at : at + draw(st.integers(1, 2000))]
        elif edit == 3:  # a line repeated
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            line = bytes(data[start : end if end >= 0 else len(data)])
            data[start:start] = (line + b"\n") * draw(st.integers(1, 50))
        elif edit == 4:  # a flipped byte
            if data:
                data[at] ^= draw(st.integers(1, 255))
        else:  # the file cut short
            del data[at:]
    blob = Blob(data)
    blob.origin = f"{source.name} after edits {edits}"
    return blob


@contextlib.contextmanager
def time_limit(seconds: int = LIMIT_S) -> Iterator[None]:
    """Fail, instead of hanging the suite, when one input takes too long."""

    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"one input took more than {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def answers(call: Callable[[], object]) -> object | None:
    """The result of ``call``, or None for one of hpnet's own errors (exit 2)."""
    with time_limit():
        try:
            return call()
        except HpnetError:
            return None


# ---------------------------------------------------------------- readers


@FUZZ
@given(data=mutated(LOGS))
def test_the_log_reader_answers_every_mutated_log(
    data: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hpnet.jsonout import dumps
    from hpnet.ncclog.read import collect_inputs, read_logs
    from hpnet.ncclog.report import analyse
    from hpnet.render.verify import render_verify

    path = tmp_path_factory.mktemp("log") / "job.log"
    path.write_bytes(data)

    def verify() -> object:
        inputs, notes = collect_inputs([str(path)])
        report = analyse(read_logs(inputs, jobs=1, notes=notes))
        text = render_verify(report)
        assert "\x1b" not in text and "\x07" not in text  # escapes are shown escaped
        return dumps(report)

    answers(verify)


@FUZZ
@given(data=mutated(LISTINGS), profile=st.sampled_from(["auto", "ib", "roce", "erdma"]))
def test_the_listing_readers_answer_and_select_only_ports_shown_usable(
    data: bytes, profile: str
) -> None:
    from hpnet.detect import inventory_from_listings
    from hpnet.nccl.env import resolve_env
    from hpnet.profiles import get_profile
    from hpnet.rdma.model import PortState

    text = data.decode("utf-8", "replace")
    inventory = answers(lambda: inventory_from_listings([("fuzzed.txt", text)]))
    if inventory is None:
        return
    resolution = answers(
        lambda: resolve_env(get_profile(profile), inventory, environment={})  # type: ignore[arg-type]
    )
    if resolution is None:
        return
    chosen = dict(resolution.exported).get("NCCL_IB_HCA", "")  # type: ignore[attr-defined]
    active = {
        f"{d.name}:{p.number}"
        for d in inventory.rdma_devices  # type: ignore[attr-defined]
        for p in d.ports
        if p.state is PortState.ACTIVE
    }
    for item in chosen.lstrip("=^").split(","):
        if item and ":" in item and not chosen.startswith("^"):
            assert item in active, (chosen, sorted(active))


@FUZZ
@given(data=mutated(NCCL_TESTS))
def test_the_nccl_tests_reader_answers_every_mutated_output(data: bytes) -> None:
    from hpnet.bench.nccl_tests import parse_nccl_tests
    from hpnet.jsonout import dumps

    report = answers(lambda: parse_nccl_tests(data.decode("utf-8", "replace"), source="fuzz"))
    if report is not None:
        dumps(report)


@FUZZ
@given(text=st.text(max_size=300) | st.sampled_from([h.decode("latin-1") for h in HOSTILE]))
def test_env_files_and_configs_answer_hostile_text(text: str) -> None:
    from hpnet.doctor.gather import parse_env_file
    from hpnet.nccl.config import load_config

    answers(lambda: parse_env_file(text, source="fuzz.env"))
    answers(lambda: load_config(text, source="fuzz.toml"))


#: what a host name that reaches ssh, a hostfile or a manifest may hold
_SAFE_HOST = re.compile(r"^[A-Za-z0-9_.:%-]+$")


@FUZZ
@given(text=st.text(max_size=200) | st.sampled_from([h.decode("latin-1") for h in HOSTILE]))
def test_host_lists_refuse_or_give_names_that_are_safe_everywhere(text: str) -> None:
    from hpnet.launch.hosts import expand_nodelist, parse_hostfile, parse_hosts

    for hosts in (
        answers(lambda: parse_hosts(text)),
        answers(lambda: parse_hostfile(text, source="fuzz")),
    ):
        for host in hosts or ():  # type: ignore[attr-defined]
            assert _SAFE_HOST.match(host.name), host.name
            assert host.slots is None or 0 < host.slots < 1 << 20
    for name in answers(lambda: expand_nodelist(text)) or ():  # type: ignore[attr-defined]
        assert _SAFE_HOST.match(name), name


# ---------------------------------------------------------------- generators

#: values that pass NCCL's own checks for a free-text variable: no NUL, one line
VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\n"),
    max_size=60,
) | st.sampled_from(["$(touch pwned)", "$$(X)", "$$$(X)", "'\"`\\", "-x A=B", "a,b=c", "=x"])


def _resolution(value: str) -> object:
    from hpnet.detect import inventory_from_listings
    from hpnet.nccl.env import resolve_env
    from hpnet.profiles import get_profile

    listing = (DATA / "listings" / "ibv_devinfo-v-roce-cx5-mixed-gids.txt").read_text()
    inventory = inventory_from_listings([("node.txt", listing)])
    return resolve_env(
        get_profile("roce"), inventory, user={"NCCL_DEBUG_FILE": value}, environment={}
    )


def _kubelet(value: str, env: dict[str, str]) -> str:
    """What the kubelet makes of an env value: ``$$`` is ``$``, ``$(NAME)`` of a known
    variable is its value (k8s.io/kubernetes third_party/forked/golang/expansion)."""
    out, at = [], 0
    while at < len(value):
        if value.startswith("$$", at):
            out.append("$")
            at += 2
        elif value.startswith("$(", at) and ")" in value[at:]:
            end = value.index(")", at)
            name = value[at + 2 : end]
            out.append(env.get(name, value[at : end + 1]))
            at = end + 1
        else:
            out.append(value[at])
            at += 1
    return "".join(out)


@FUZZ
@given(value=VALUES)
def test_every_env_format_carries_a_hostile_value_unchanged(
    value: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hpnet.nccl.formats import render

    resolution = answers(lambda: _resolution(value))
    if resolution is None:
        return
    shell = answers(lambda: render(resolution, "shell"))  # type: ignore[arg-type]
    if shell is None:
        return
    work = tmp_path_factory.mktemp("shell")
    done = subprocess.run(
        ["bash", "-c", f'{shell}printf "%s" "$NCCL_DEBUG_FILE"'],
        capture_output=True,  # bytes: text mode would read a "\r" back as "\n"
        cwd=work,
        timeout=LIMIT_S,
        check=True,
    )
    assert done.stdout.decode() == value
    assert list(work.iterdir()) == []  # nothing ran
    # the words as the shell reads them (a value with a control is $'...', which
    # shlex does not read)
    mpirun = render(resolution, "mpirun")  # type: ignore[arg-type]
    done = subprocess.run(
        ["bash", "-c", f"printf '%s\\0' {mpirun}"],
        capture_output=True,
        cwd=work,
        timeout=LIMIT_S,
        check=True,
    )
    assert f"NCCL_DEBUG_FILE={value}" in done.stdout.decode().split("\0")
    assert json.loads(render(resolution, "json"))["variables"]["NCCL_DEBUG_FILE"]["value"] == value  # type: ignore[arg-type]
    manifest = yaml.safe_load(render(resolution, "k8s"))  # type: ignore[arg-type]
    entries = manifest if isinstance(manifest, list) else manifest["env"]
    seen = {e["name"]: e["value"] for e in entries}
    assert _kubelet(seen["NCCL_DEBUG_FILE"], {"X": "expanded", "HOSTNAME": "expanded"}) == value


COMMANDS = _files("commands") + _files("images")


@FUZZ
@given(data=mutated(COMMANDS))
def test_the_command_output_readers_answer_every_mutated_output(data: bytes) -> None:
    from hpnet.image.facts import cuda_toolkit_version
    from hpnet.node.gpudirect import parse_nvidia_proc_version
    from hpnet.node.gpus import parse_nvidia_smi_xml
    from hpnet.node.versions import parse_torch_probe, parse_torch_version_py

    text = data.decode("utf-8", "replace")
    for read in (
        lambda: parse_nvidia_smi_xml(text, source="fuzz.xml"),
        lambda: parse_nvidia_proc_version(text),
        lambda: parse_torch_probe(text),
        lambda: parse_torch_version_py(text),
        lambda: cuda_toolkit_version(text, "fuzz.json"),
    ):
        answers(read)


TREES = _files("sysfs", "*.tree")
#: what a sysfs attribute may be made to hold
ATTRIBUTES = st.sampled_from([h.decode("latin-1") for h in HOSTILE]) | st.text(max_size=40)


class Text(str):
    """A snapshot's text, shown by its origin and the edits made."""

    origin = ""

    def __repr__(self) -> str:
        return f"<{len(self)} characters from {self.origin}>"


@st.composite
def mutated_tree(draw: st.DrawFn) -> Text:
    """A real snapshot whose attribute values (``PATH = TEXT`` lines) are changed."""
    source = draw(st.sampled_from(TREES))
    lines = source.read_text().splitlines()
    values = [i for i, line in enumerate(lines) if " = " in line and not line.startswith("#")]
    edits = []
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.sampled_from(values))
        path = lines[at].split(" = ", 1)[0]
        value = draw(ATTRIBUTES)
        edits.append(f"{path} = {value!r}")
        lines[at] = f"{path} = " + value.replace("\\", "\\\\").replace("\n", "\\n")
    text = Text("\n".join(lines) + "\n")
    text.origin = f"{source.name} with {edits}"
    return text


#: a word of a ``docker run`` flag or a Kubernetes resource: nothing a shell or YAML
#: would read otherwise
_SAFE_WORD = re.compile(r"^[A-Za-z0-9_./:=,+@-]+$")


@FUZZ
@given(tree=mutated_tree(), profile=st.sampled_from(["auto", "ib", "roce", "erdma", "socket"]))
def test_sysfs_values_reach_detect_env_and_container_flags_safely(
    tree: Text, profile: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hpnet.detect import DetectOptions, detect
    from hpnet.image.runflags import plan_run_flags
    from hpnet.jsonout import dumps
    from hpnet.nccl.env import resolve_env
    from hpnet.nccl.formats import render
    from hpnet.node.snapshot import materialize
    from hpnet.profiles import get_profile
    from hpnet.render.detect import render_inventory

    root = tmp_path_factory.mktemp("tree")
    if answers(lambda: materialize(tree, root, source="fuzz.tree") or root) is None:
        return  # refused, as a snapshot it cannot rebuild should be
    options = DetectOptions(sysfs_root=str(root), gpus=True)
    inventory = answers(lambda: detect(options, env={}, python_path=[]))
    if inventory is None:
        return
    shown = render_inventory(inventory)  # type: ignore[arg-type]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", shown), "a control character printed raw"
    dumps(inventory)
    resolution = answers(
        lambda: resolve_env(get_profile(profile), inventory, environment={})  # type: ignore[arg-type]
    )
    if resolution is not None:
        for fmt in ("shell", "k8s", "json"):
            answers(lambda fmt=fmt: render(resolution, fmt))  # type: ignore[misc, arg-type]
    flags = answers(
        lambda: plan_run_flags(get_profile(profile), inventory)  # type: ignore[arg-type]
    )
    for word in flags.argv if flags is not None else ():  # type: ignore[attr-defined]
        assert _SAFE_WORD.match(word), word


# ---------------------------------------------------------------- launch generators

#: the rank: writes its argv, environment and directory where the test reads them
_DUMP = (
    "import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': dict(os.environ), "
    "'cwd': os.getcwd()}, open(os.environ['FUZZ_OUT'], 'w'))"
)
#: Slurm's programs as the batch script calls them: one task, this node
_SLURM_STANDINS = {
    "scontrol": "#!/bin/sh\necho node1\n",
    "srun": '#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\n'
    'SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NTASKS=1 exec "$@"\n',
}


@st.composite
def launch_values(draw: st.DrawFn) -> dict[str, str]:
    # the working directory stays under the test's home: relative, without ".."
    workdir = draw(VALUES).replace("..", "__").lstrip("/")
    return {"value": draw(VALUES), "word": draw(VALUES), "workdir": workdir}


def _plan(engine: str, values: dict[str, str], out: Path, hosts: str | None) -> object:
    from hpnet.launch.plan import LaunchRequest
    from hpnet.launch.prepare import LaunchOptions, prepare

    request = LaunchRequest(
        command=(sys.executable, "-c", _DUMP, values["word"]),
        engine=engine,  # type: ignore[arg-type]
        nproc_per_node=1,
        workdir=values["workdir"] or ".",
        output_dir=str(out),
        image="registry.example/train:1" if engine == "k8s" else None,
    )
    options = LaunchOptions(
        request=request, hosts=hosts, env_args=("FUZZ_V", "FUZZ_TOKEN"), gpus=False
    )
    environ = {"FUZZ_V": values["value"], "FUZZ_TOKEN": values["value"] + "-secret"}
    return prepare(
        options, environ, names=frozenset({"localhost"}), as_root=False, resolver=lambda *_: {}
    )


def _run_rank(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    out = cwd / "rank.json"
    subprocess.run(argv, input=stdin.encode(), cwd=cwd, env={**env, "FUZZ_OUT": str(out)},
                   capture_output=True, timeout=LIMIT_S, check=True)  # fmt: skip
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def _same_through(record: dict[str, object], values: dict[str, str]) -> None:
    assert record["argv"] == [values["word"]]
    env = record["env"]
    assert isinstance(env, dict)
    assert env["FUZZ_V"] == values["value"]
    assert env["FUZZ_TOKEN"] == values["value"] + "-secret"


@FUZZ
@given(values=launch_values())
def test_ssh_commands_carry_hostile_values_unchanged(
    values: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("ssh")
    plan = answers(lambda: _plan("env", values, work, "node1,node2"))
    if plan is None:
        return
    for command in plan.commands:  # type: ignore[attr-defined]
        argv = command.local_argv()
        assert values["value"] + "-secret" not in " ".join(argv)  # a secret: never in argv
        assert argv[-2] == "--"
        # sshd runs the remote words joined by spaces with the login shell, in $HOME
        home = tmp_path_factory.mktemp("home")
        workdir = home / values["workdir"] if values["workdir"] else home
        if values["workdir"] not in ("", "."):
            try:
                workdir.mkdir(parents=True, exist_ok=True)
            except OSError:
                return  # a directory this file system cannot hold
        record = _run_rank(["sh", "-c", argv[-1]], command.remote_stdin(), home,
                           {"PATH": os.environ["PATH"], "HOME": str(home)})  # fmt: skip
        _same_through(record, values)
        assert Path(str(record["cwd"])).resolve() == workdir.resolve()
        assert list(home.glob("pwned*")) == []


@FUZZ
@given(values=launch_values())
def test_batch_scripts_carry_hostile_values_unchanged(
    values: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp("slurm")
    values = {**values, "workdir": ""}
    plan = answers(lambda: _plan("slurm", values, work, None))
    if plan is None:
        return
    (script,) = plan.files  # type: ignore[attr-defined]
    assert values["value"] + "-secret" not in script.content
    bin_dir = work / "bin"
    bin_dir.mkdir()
    for name, body in _SLURM_STANDINS.items():
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    (command,) = plan.commands  # type: ignore[attr-defined]
    path = work / "job.sbatch"
    path.write_text(script.content)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", **command.env}  # sbatch's environment
    _same_through(_run_rank(["bash", str(path)], "", work, env), values)


@FUZZ
@given(values=launch_values(), kind=st.sampled_from(["pytorchjob", "mpijob"]))
def test_manifests_carry_hostile_values_unchanged(
    values: dict[str, str], kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hpnet.launch.plan import LaunchRequest

    work = tmp_path_factory.mktemp("k8s")
    values = {**values, "workdir": ""}
    plan = answers(lambda: _plan("k8s", values, work, None))
    if plan is None or kind == "mpijob":
        from hpnet.launch.prepare import LaunchOptions, prepare

        request = LaunchRequest(
            command=("train", values["word"]),
            engine="k8s",
            kind="mpijob",
            nproc_per_node=1,
            output_dir=str(work),
            image="r.example/t:1",
        )
        options = LaunchOptions(request=request, env_args=("FUZZ_V",), num_nodes=2, gpus=False)
        environ = {"FUZZ_V": values["value"]}
        plan = answers(
            lambda: prepare(
                options, environ, names=frozenset(), as_root=False, resolver=lambda *_: {}
            )
        )
        if plan is None:
            return
    for file in plan.files:  # type: ignore[attr-defined]
        for document in yaml.safe_load_all(file.content):
            words: list[str] = []
            for container in _containers(document):
                env = {e["name"]: e for e in container.get("env", [])}
                if "FUZZ_V" in env:
                    assert _kubelet(env["FUZZ_V"]["value"], {}) == values["value"]
                if "FUZZ_TOKEN" in env:
                    assert "value" not in env["FUZZ_TOKEN"]  # a secretKeyRef
                for word in [*container.get("command", []), *container.get("args", [])]:
                    words += [_kubelet(word, {}), *shlex_words(_kubelet(word, {}))]
            if words:  # the launcher's (MPIJob workers run sshd only)
                assert values["word"] in words, words
            if document.get("kind") == "Secret":
                assert document["stringData"]["FUZZ_TOKEN"] == values["value"] + "-secret"


def shlex_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _containers(document: object) -> list[dict[str, object]]:
    """Every ``containers[]`` entry anywhere in a manifest."""
    found: list[dict[str, object]] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "containers" and isinstance(value, list):
                found += [c for c in value if isinstance(c, dict)]
            else:
                found += _containers(value)
    elif isinstance(document, list):
        for item in document:
            found += _containers(item)
    return found


@FUZZ
@given(value=VALUES)
def test_the_tune_file_carries_or_passes_by_name_every_hostile_value(value: str) -> None:
    from hpnet.launch.plan import LaunchRequest
    from hpnet.launch.prepare import LaunchOptions, prepare
    from tests.unit.test_launch_security import read_tune

    request = LaunchRequest(command=("python", "train.py"), profile="modelarts", output_dir="out")
    environ = {"VC_WORKER_HOSTS": "localhost", "VC_TASK_INDEX": "0", "MA_NUM_GPUS": "1",
               "MA_X": value, "MA_Y": "after"}  # fmt: skip
    plan = answers(
        lambda: prepare(
            LaunchOptions(request=request, gpus=False),
            environ,
            names=frozenset({"localhost"}),
            as_root=False,
            resolver=lambda *_: {},
        )
    )
    if plan is None:
        return
    tune = next(f for f in plan.files if f.path.endswith(".tune"))  # type: ignore[attr-defined]
    (command,) = plan.commands  # type: ignore[attr-defined]
    for reading in read_tune(tune.content):
        assert set(reading) <= set(environ), reading  # nothing injected
        assert reading.get("MA_Y") == "after"
        if value:  # an empty value is not carried at all
            assert reading.get("MA_X") == value or "MA_X" in command.argv, reading


@FUZZ
@given(
    base=st.sampled_from(["nvidia/cuda:12.4.1-devel-ubuntu22.04", "ubuntu:22.04"]) | VALUES,
    line=st.text(max_size=80) | st.sampled_from(["x\nRUN touch /pwned", "x\r\nRUN id"]),
)
def test_a_dockerfile_runs_only_its_own_instructions(base: str, line: str) -> None:
    from hpnet.distros import get_distro
    from hpnet.image.dockerfile import check_image_ref, plan_dockerfile
    from hpnet.profiles import get_profile

    def render(base: str, line: str) -> str:
        profile, distro = get_profile("pai-dlc-erdma"), get_distro("ubuntu22.04")
        return plan_dockerfile(
            profile, distro, base=check_image_ref(base), command_line=line, version="0"
        ).render()

    text = answers(lambda: render(base, line))
    if text is None:
        return
    clean = render("ubuntu:22.04", "hpnet")
    # Docker reads a Dockerfile line by line at "\n" (bufio.ScanLines: a "\r" before it
    # is dropped, one elsewhere is text)
    instructions = [ln for ln in str(text).split("\n") if ln and not ln.startswith("#")]
    expected = [ln for ln in clean.split("\n") if ln and not ln.startswith("#")]
    assert instructions[0] == f"FROM {base}"
    assert instructions[1:] == expected[1:]  # the same steps, nothing added
