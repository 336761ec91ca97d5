"""`hpnet env --from LISTING` with terminal escape sequences in a device name (issue 23).

A saved listing is someone else's text: a device name holding ``ESC [ 2 J`` (clear the
screen), ``ESC ] 0 ; ... BEL`` (set the title), a C1 CSI (U+009B) or a bidi override
must not reach the terminal raw in any output of env. Where the format can carry the
same value with escapes it does (the shell reads it back exactly); where it cannot
(dotenv, deepspeed read values raw) it is an error, as a newline is.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from hpnet.cli.main import main
from tests.conftest import DATA

LISTINGS = DATA / "listings"
#: what a terminal acts on: C0 but the newline, DEL, C1, bidi embeddings/overrides/isolates
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = "mlx5_\x1b[2J\x1b]0;PWNED\x07\x9b31m\u202e0"
SHOWN = "mlx5_\\x1b[2J\\x1b]0;PWNED\\x07\\x9b31m\\u202e0"
HCA = f"={HOSTILE}:1"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


@pytest.fixture
def listing(tmp_path: Path) -> str:
    """A real ibv_devinfo -v listing (one RoCE port, mlx5_0) with a hostile name."""
    text = (LISTINGS / "ibv_devinfo-v-roce-cx6-eth.txt").read_text()
    assert text.count("mlx5_0") == 1
    path = tmp_path / "devinfo.txt"
    path.write_text(text.replace("mlx5_0", HOSTILE))
    return str(path)


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def bash(script: str, cwd: Path) -> bytes:
    run = ["bash", "-c", script]
    done = subprocess.run(run, capture_output=True, cwd=cwd, timeout=20, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_shell_format_escapes_and_reads_back_the_same_value(
    listing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["env", "--from", listing], capsys)
    assert code == 0
    assert not RAW.search(out + err), out
    assert "export NCCL_IB_HCA=$'" in out  # ANSI-C quoting: one shell word, the same value
    value = bash(f'{out}printf "%s" "$NCCL_IB_HCA"', tmp_path).decode()
    assert value == HCA
    assert list(tmp_path.iterdir()) == [Path(listing)]  # nothing ran


def test_mpirun_format_is_shell_words_with_the_same_value(
    listing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["env", "--from", listing, "--format", "mpirun"], capsys)
    assert code == 0 and not RAW.search(out)
    words = bash(f"printf '%s\\0' {out}", tmp_path).decode().split("\0")[:-1]
    assert words[-2:] == ["-x", f"NCCL_IB_HCA={HCA}"]


def test_slurm_format_passes_the_value_through_the_environment(
    listing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["env", "--from", listing, "--format", "slurm"], capsys)
    assert code == 0 and not RAW.search(out)
    *exports, flag = out.splitlines()
    assert flag.endswith(",NCCL_IB_HCA")  # the bare name: srun takes it from the env
    value = bash("\n".join(exports) + '\nprintf "%s" "$NCCL_IB_HCA"', tmp_path).decode()
    assert value == HCA


def test_k8s_and_json_write_escapes_of_the_same_value(
    listing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(["env", "--from", listing, "--format", "k8s"], capsys)
    assert code == 0 and not RAW.search(out)
    env = {e["name"]: e["value"] for e in yaml.safe_load(out)["env"]}
    assert env["NCCL_IB_HCA"].replace("$$", "$") == HCA
    code, out, _ = cli(["env", "--from", listing, "--json"], capsys)
    assert code == 0 and not RAW.search(out)
    assert json.loads(out)["variables"]["NCCL_IB_HCA"]["value"] == HCA


@pytest.mark.parametrize("fmt", ["dotenv", "deepspeed"])
def test_a_format_without_escapes_refuses_the_value(
    fmt: str, listing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["env", "--from", listing, "--format", fmt], capsys)
    assert code == 2 and out == ""
    assert not RAW.search(err)
    assert err.startswith("error[bad-value]: the value of NCCL_IB_HCA (=" + SHOWN)


def test_explain_and_findings_show_the_name_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--explain and the findings on stderr (a profile's HCA that matches no port here
    names the node's devices and the node's answer) show the name as \\x1b, never raw."""
    text = (LISTINGS / "ibv_devinfo-v-roce-cx5-mixed-gids.txt").read_text()
    path = tmp_path / "devinfo.txt"
    path.write_text(text.replace("rocep0s6", "roce_" + HOSTILE))  # not mlx5*: no match
    args = ["env", "--profile", "pai-lingjun", "--from", str(path)]
    code, out, err = cli([*args, "--explain"], capsys)
    assert code == 0 and not RAW.search(out + err)
    assert f"NCCL_IB_HCA==roce_{SHOWN}:1    [detected]" in out
    code, out, err = cli(args, capsys)
    assert code == 0 and not RAW.search(out + err)
    assert f"(RDMA devices on this node: roce_{SHOWN})" in err
    assert f"the node's answer: NCCL_IB_HCA==roce_{SHOWN}:1\n" in err
