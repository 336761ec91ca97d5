"""Issue 16, deliverable 5: one test per bug that no other test caught when planted.

Each test passes on correct code and fails with its bug planted (the bug is named in
the test's docstring). To see one fail, plant it in a scratch copy of the tree::

    git worktree add --detach /tmp/plant HEAD   # edit /tmp/plant/src/hpnet/...
    PYTHONPATH=/tmp/plant/src python -m pytest -p no:cacheprovider tests/unit/test_planted_bugs.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA

Tree = Callable[[str], Path]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own NCCL_* variables would be a layer of their own."""
    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    out, _ = capsys.readouterr()
    return code, out


# ---------------------------------------------------- 1. the user's --set beats detection


def test_a_users_ib_disable_is_not_overridden_by_what_the_node_calls_for(
    sysfs_tree: Tree, capsys: pytest.CaptureFixture[str]
) -> None:
    """Planted bug: the detected layer (``NCCL_IB_DISABLE=0``: the node has active
    InfiniBand ports) wins over the user's ``--set NCCL_IB_DISABLE=1`` under profile
    ``auto``, so the job the user meant to keep off IB silently runs on it."""
    from hpnet.detect import DetectOptions, detect
    from hpnet.nccl.env import Origin, resolve_env
    from hpnet.profiles import get_profile
    from hpnet.runner import RecordedRunner

    root = str(sysfs_tree("cx6-ib-dgx"))  # mlx5_0..2 ACTIVE InfiniBand
    env = ["env", "--profile", "auto", "--sysfs-root", root]
    # the node alone says 0: the layers below the user's really disagree with it
    code, out = cli([*env, "--json"], capsys)
    assert code == 0 and json.loads(out)["variables"]["NCCL_IB_DISABLE"]["value"] == "0"

    code, out = cli([*env, "--set", "NCCL_IB_DISABLE=1"], capsys)
    assert code == 0 and "export NCCL_IB_DISABLE='1'\n" in out
    code, out = cli([*env, "--set", "NCCL_IB_DISABLE=1", "--json"], capsys)
    var = json.loads(out)["variables"]["NCCL_IB_DISABLE"]
    assert (var["value"], var["origin"], var["source"]) == ("1", "user", "--set")
    assert [(layer["origin"], layer["value"]) for layer in var["layers"]] == [
        ("nccl-default", "0"),
        ("detected", "0"),
        ("user", "1"),
    ]

    inventory = detect(
        DetectOptions(sysfs_root=root), runner=RecordedRunner({}), env={}, python_path=[]
    )
    resolution = resolve_env(get_profile("auto"), inventory, user={"NCCL_IB_DISABLE": "1"})
    assert resolution.transport == "ib"
    assert dict(resolution.exported)["NCCL_IB_DISABLE"] == "1"
    got = resolution.get("NCCL_IB_DISABLE")
    assert got is not None and (got.value, got.origin) == ("1", Origin.USER)


# ------------------------------------------------ 2. an imported #wrong column is counted

NT = DATA / "nccl-tests"


def with_cells(line: str, replacements: dict[int, str]) -> str:
    """``line`` with its whitespace-separated cells at the given indices replaced,
    right-aligned in the same width, as nccl-tests prints them."""
    spans = [m.span() for m in re.finditer(r"\S+", line)]
    out = line
    for index in sorted(replacements, reverse=True):
        start, end = spans[index]
        out = out[:start] + replacements[index].rjust(end - start) + out[end:]
    return out


def test_an_imported_wrong_column_is_read_and_fails_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Planted bug: nccl-tests' ``#wrong`` cells are read as 0, so corrupted results
    import as a clean run."""
    # a real failed run: hypercube on 8x B200, every row wrong in both placements
    failed = NT / "hypercube-1node-8xb200-16-FAILED-ompi-abort-EXCERPT-ncclTests2.13.4-2.14.0.txt"
    code, out = cli(["bench", "import", str(failed), "--json"], capsys)
    data = json.loads(out)
    rows = data["runs"][0]["rows"]
    first = rows[0]
    assert (first["size_bytes"], first["out_of_place"]["wrong"], first["in_place"]["wrong"]) == (
        1048576,
        1038820,  # "1.03882e+06"
        1012130,  # "1.01213e+06"
    )
    assert rows[-1]["out_of_place"]["wrong"] == 2985720000  # "2.98572e+09"
    assert all(r[p]["wrong"] > 0 for r in rows for p in ("out_of_place", "in_place"))
    assert code == 1 and data["status"] == "FAIL"
    assert data["verdict"].startswith("wrong results at hypercube 1048576 B")

    # a real clean run (footer "0 OK") with the 1 MiB row's #wrong cells made 3 and 5:
    # only the cells tell, so the verdict rests on reading them
    clean = NT / "h200x4-all_reduce-g4-ncclTests2.19.6.txt"
    lines = clean.read_text().splitlines(keepends=True)
    [at] = [i for i, line in enumerate(lines) if line.split()[:2] == ["1048576", "262144"]]
    assert lines[at].split()[8] == lines[at].split()[12] == "0"
    lines[at] = with_cells(lines[at], {8: "3", 12: "5"})
    edited = tmp_path / "all_reduce-1MiB-wrong.txt"
    edited.write_text("".join(lines))
    code, out = cli(["bench", "import", str(clean), "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "PASS"
    code, out = cli(["bench", "import", str(edited), "--json"], capsys)
    data = json.loads(out)
    [row] = [r for r in data["runs"][0]["rows"] if r["size_bytes"] == 1048576]
    assert (row["out_of_place"]["wrong"], row["in_place"]["wrong"]) == (3, 5)
    assert code == 1 and data["status"] == "FAIL"
    assert data["verdict"] == "wrong results at all_reduce 1048576 B"
    code, out = cli(["bench", "import", str(edited)], capsys)
    assert code == 1 and "# FAIL: wrong results at all_reduce 1048576 B" in out


# ------------------------------------------ 3. a socket fallback keeps a node NOT READY

SOCKET_LOGS = DATA / "nccl-logs" / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"


def test_a_socket_fallback_is_impact_1_and_makes_the_node_not_ready(
    sysfs_tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Planted bug: the ``socket-fallback`` finding of a check's network stage is
    demoted from impact 1, so it is no longer the headline (or no longer blocks at
    all), although the job's traffic between nodes would go over TCP.

    The benchmark is the one seam replaced: each stage "runs" and leaves NCCL's real
    rank logs of a 4x H200 run whose two fake hosts talked over NET/Socket. The node
    is the recorded DGX with active InfiniBand ports and a network plugin set, so
    that no --expect names the network: the finding alone says traffic fell back.
    """
    import hpnet.bench.run
    from hpnet.bench.model import BenchReport
    from hpnet.check.run import CheckOptions, bench_launcher, run_check

    def recorded_run(plan: object, *, keep_dir: str, **_: object) -> BenchReport:
        if "hosts" in Path(keep_dir).name:  # the stage across NCCL hosts
            for log in SOCKET_LOGS.iterdir():
                shutil.copy(log, keep_dir)
        return BenchReport(source="hpnet bench", runs=())

    monkeypatch.setattr(hpnet.bench.run, "local_defaults", lambda nproc, device: (4, "cuda"))
    monkeypatch.setattr(hpnet.bench.run, "run_plan", recorded_run)
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NCCL_")},
        "NCCL_NET_PLUGIN": "libnccl-net.so",
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1,mlx5_2:1",  # the ACTIVE ports
    }
    root = str(sysfs_tree("cx6-ib-dgx"))
    # the launcher named: its (replayed) stages stand for the recorded node's ranks;
    # left out, a recorded node's check runs no benchmark (issue 26)
    report = run_check(
        CheckOptions(sysfs_root=root, device="cuda", keep_dir=str(tmp_path)), environ,
        launcher=bench_launcher,
    )  # fmt: skip

    assert report.transport == "ib"
    [fallback] = [p for p in report.problems if p.code == "verify:socket-fallback"]
    assert fallback.impact == 1
    assert "inter-node traffic went over TCP sockets (NET/Socket)" in fallback.what
    assert fallback.fix is not None and "--device=/dev/infiniband" in fallback.fix
    assert report.problems[0] is fallback and report.headline == fallback.what
    assert [p.code for p in report.problems if p.impact < 4] == ["verify:socket-fallback"]
    assert report.verdict == "NOT READY" and report.exit_code == 1


# -------------------------------------------- 4. /Shared alone is not GPUDirect RDMA

LOGS = DATA / "nccl-logs"


def test_a_shared_buffer_flag_without_gdrdma_is_not_gpudirect_rdma(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Planted bug: any flag after the NIC (``/Shared`` among them) read as GPUDirect
    RDMA. NCCL prints ``via NET/%s/%d%s%s%s`` with ``useGdr ? "/GDRDMA" : ""``, then
    ``(PCI)``, then ``shared ? "/Shared" : ""`` (src/transport/net.cc, sendSetup), so
    ``NET/IB/0/Shared`` is shared buffers over IB without GPUDirect RDMA."""
    from hpnet.ncclog.facts import parse_nccl_text

    # real lines: two p2p connections on shared buffers, with GPUDirect RDMA
    real = (
        LOGS / "ib-2nic-gdrdma-shared-p2p-channels-same-host-nccl2.18.3-or-later.log"
    ).read_text()
    assert real.count("/GDRDMA/Shared\n") == 2

    def gdr_by_via(text: str) -> dict[str, set[bool]]:
        seen: dict[str, set[bool]] = {}
        for process in parse_nccl_text(text.encode()).processes:
            for c in process.connections:
                seen.setdefault(c.transport.raw, set()).add(c.transport.gdr)
        return seen

    assert gdr_by_via(real) == {
        "NET/IB/0/GDRDMA": {True},
        "NET/IB/1/GDRDMA": {True},
        "NET/IB/0/GDRDMA/Shared": {True},
        "NET/IB/1/GDRDMA/Shared": {True},
    }
    # the same connections as NCCL prints them when GPUDirect RDMA is off for them
    assert gdr_by_via(real.replace("/GDRDMA/Shared", "/Shared")) == {
        "NET/IB/0/GDRDMA": {True},
        "NET/IB/1/GDRDMA": {True},
        "NET/IB/0/Shared": {False},
        "NET/IB/1/Shared": {False},
    }

    # what the user sees: a real two-host IB log proves net=ib,gdr; with its network
    # connections on shared buffers, it still does; with /Shared alone, it does not
    two_hosts = (LOGS / "ib-4hca-plugin-load-returned-17-nccl2.11.4.log").read_text()
    assert two_hosts.count("via NET/IB/0/GDRDMA\n") == 4
    for flags, status, gdr in (
        ("/GDRDMA", 0, "yes"),
        ("/GDRDMA/Shared", 0, "yes"),
        ("/Shared", 1, "no"),
    ):
        log = tmp_path / f"two-hosts{flags.replace('/', '-')}.log"
        log.write_text(two_hosts.replace("via NET/IB/0/GDRDMA\n", f"via NET/IB/0{flags}\n"))
        code, out = cli(["verify", str(log), "--expect", "net=ib,gdr", "--json"], capsys)
        data = json.loads(out)
        assert code == status, flags
        assert {h["host"]: h["gdr"] for h in data["hosts"]} == {
            "cosmos-hpc-100a45": gdr,
            "cosmos-hpc-100a55": gdr,
        }, flags


# ------------------------------------------------------- 5. lower-case secret names

LOWER_SECRETS = ("hf_token", "aws_secret_access_key", "my_password")


def test_lower_case_secret_names_are_secrets_and_never_forwarded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Planted bug: secret names matched case-sensitively, so ``hf_token`` (how
    ``huggingface_hub`` spells it in many job scripts) is no secret and is forwarded
    to every rank by ``--forward-prefix hf_``, printed in the plan and inherited."""
    from hpnet.launch.envprop import propagate
    from hpnet.localrun import inheritable_env
    from hpnet.secrets import REDACTED, is_secret, looks_secret, redact

    for name in LOWER_SECRETS:
        assert looks_secret(name) and is_secret(name, "v"), name
        assert redact(name, "hf_abcdefgh") == REDACTED
    assert not looks_secret("hf_home")

    environ = {
        "PATH": "/usr/bin",
        "hf_home": "/data/hf",
        "hf_token": "hf_pLaNtEdToKeN0123",
        "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG",
        "my_password": "pw-correct-horse",
    }
    prefixes = ("NCCL_", "hf_", "aws_", "my_")
    propagation = propagate(environ, prefixes=prefixes)
    assert dict(propagation.env) == {"hf_home": "/data/hf"}
    assert set(propagation.withheld) == set(LOWER_SECRETS)
    assert inheritable_env(environ) == {"PATH": "/usr/bin", "hf_home": "/data/hf"}

    # the CLI: a dry run forwards hf_home, names the withheld secrets, prints no value
    for name in list(os.environ):
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["launch", "--dry-run", "--engine", "env", "--hosts", "n1,n2"]
    args += [a for p in prefixes for a in ("--forward-prefix", p)]
    code, out = cli([*args, "--", "true"], capsys)
    assert code == 0
    assert "export hf_home=/data/hf" in out
    assert (
        "# not forwarded (look like secrets; pass --env NAME to forward one): "
        "aws_secret_access_key, hf_token, my_password\n"
    ) in out
    for name in LOWER_SECRETS:
        assert environ[name] not in out, name
