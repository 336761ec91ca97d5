"""The CLI surface, the error funnel and exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hpnet import __version__
from hpnet.cli.main import COMMANDS, main
from tests.conftest import DATA


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_command_table_is_pinned() -> None:
    # Adding or renaming a command is a deliberate change: update this list with it.
    assert list(COMMANDS) == [
        "bench",
        "check",
        "detect",
        "doctor",
        "env",
        "hang",
        "image",
        "isolate",
        "launch",
        "profiles",
        "verify",
    ]


@pytest.mark.parametrize("sub", ["", "import", "compare", "plot", "train"])
def test_bench_help_loads_no_torch(sub: str) -> None:
    """`hpnet bench [sub] --help` answers without torch: only ranks import it."""
    args = ["bench", *([sub] if sub else []), "--help"]
    code = (
        "import sys\n"
        "from hpnet.cli.main import main\n"
        f"rc = main({args!r})\n"
        "print(rc, 'torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "0 False"
    assert f"usage: hpnet bench {sub}".strip() in done.stdout


def test_help_imports_no_command_module_and_no_torch() -> None:
    code = (
        "import sys\n"
        "from hpnet.cli.main import main\n"
        "rc = main(['--help'])\n"
        "loaded = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')"
        " or (m.startswith('hpnet.')"
        " and m not in {'hpnet.cli', 'hpnet.cli.main', 'hpnet.errors'}))\n"
        "print(rc, loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"
    assert "detect" in done.stdout


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"], capsys) == (0, f"hpnet {__version__}\n", "")


def test_no_command_prints_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([], capsys)
    assert code == 2 and "usage: hpnet" in err


def test_unknown_command_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["detekt"], capsys)
    assert code == 2
    assert err.startswith("error[unknown-command]: unknown command 'detekt' — hpnet — ")
    assert "did you mean `hpnet detect`?" in err


def test_bad_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["detect", "--nope"], capsys)
    assert code == 2
    assert err.startswith("error[usage]: unrecognized arguments: --nope — hpnet detect — ")


def test_command_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["detect", "--help"], capsys)
    assert code == 0
    for flag in ("--sysfs-root", "--from", "--json"):
        assert flag in out


def test_missing_sysfs_root(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["detect", "--sysfs-root", str(tmp_path / "nope")], capsys)
    assert code == 2
    assert err.startswith("error[sysfs-root-missing]: ")
    assert str(tmp_path / "nope") in err and "Traceback" not in err


def test_sysfs_root_without_sys(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["detect", "--sysfs-root", str(tmp_path)], capsys)
    assert code == 2 and err.startswith("error[sysfs-root-no-sys]: ")


@pytest.mark.parametrize(
    ("content", "code_name"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "listing-binary"),
        (b"Lorem ipsum dolor sit amet\n", "listing-unrecognised"),
        (b"", "listing-unrecognised"),
    ],
)
def test_bad_listing_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, code_name: str
) -> None:
    path = tmp_path / "listing.txt"
    path.write_bytes(content)
    code, out, err = run(["detect", "--from", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"error[{code_name}]: ") and str(path) in err


def test_listing_that_does_not_exist(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["detect", "--from", str(tmp_path / "gone.txt")], capsys)
    assert code == 2 and err.startswith("error[listing-not-found]: no such file — ")


def test_listing_that_is_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(["detect", "--from", str(tmp_path)], capsys)
    assert code == 2 and err.startswith("error[listing-not-a-file]: ")


def test_from_and_sysfs_root_together_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    listing = str(DATA / "listings" / "ibv_devinfo-erdma.txt")
    code, _, err = run(["detect", "--from", listing, "--sysfs-root", str(tmp_path)], capsys)
    assert code == 2 and err.startswith("error[usage]: ")


def test_internal_error_is_a_message_not_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(_: object) -> int:
        raise RuntimeError("boom")

    import hpnet.cli.detect as detect_cli

    monkeypatch.setattr(detect_cli, "run", explode)
    code, _, err = run(["detect"], capsys)
    assert code == 3
    assert err.startswith("error[internal]: RuntimeError: boom — hpnet ")
    assert "Traceback" not in err
    code, _, err = run(["--debug", "detect"], capsys)
    assert code == 3 and "Traceback" in err


def test_detect_live_node_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The live inventory agrees with what the kernel says through other interfaces."""
    import socket

    code, out, err = run(["detect", "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["schema_version"] == 1 and data["source"] == "live"
    assert {n["name"] for n in data["netdevs"]} == {name for _, name in socket.if_nameindex()}
    assert next(n for n in data["netdevs"] if n["name"] == "lo")["kind"] == "loopback"
    limits = Path("/proc/self/limits").read_text()
    memlock = data["limits"]["memlock_soft_bytes"]
    assert re.search(rf"^Max locked memory\s+{memlock}\s", limits, re.MULTILINE)
    assert data["hostname"] == socket.gethostname()
    assert data["not_collected"] == []


def test_detect_live_node_human(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["detect"], capsys)
    assert code == 0
    for section in ("Network interfaces", "Versions", "Limits and context"):
        assert section in out


def test_detect_from_listing_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["detect", "--json", "--from", str(DATA / "listings" / "ibv_devinfo-v-roce-cx6-eth.txt")],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    (device,) = data["rdma_devices"]
    assert device["name"] == "mlx5_0" and device["driver"] == "mlx5"
    port = device["ports"][0]
    assert (port["number"], port["state"], port["link_layer"]) == (1, "ACTIVE", "Ethernet")
    assert port["gids"][3] == {
        "index": 3,
        "gid": "0000:0000:0000:0000:0000:ffff:c0a8:010b",
        "type": "RoCE v2",
        "netdev": None,
        "kind": "ipv4-mapped",
        "ipv4": "192.168.1.11",
    }
    assert "versions" in data["not_collected"]


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hpnet", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (0, f"hpnet {__version__}")


def test_listing_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    text = (DATA / "listings" / "rdma_link-oci-bm-optimized3-mlx5-one-down.txt").read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(["detect", "--json", "--from", "-"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["source"] == "listing <stdin> (rdma link)"
    assert [d["ports"][0]["state"] for d in data["rdma_devices"]] == ["ACTIVE"] * 3 + ["DOWN"]


def test_a_roce_port_at_rate_2_5_is_said_to_be_1_gbe_or_unmapped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Broadcom RoCE port's ibstat "Rate: 2.5" (Boo-seon-woong/rdma_check): bnxt_re
    reports a 1 GbE link, or a speed it cannot map, as SDR 1X; said for the ACTIVE port
    only (a port that is down reports a rate it is not running at)."""
    listing = (
        DATA
        / "listings"
        / (
            "ibstat-indented-prompt-cx7-ib-ndr200-plus-2x-bnxt_re-roce-rate-2.5-one-down-disabled.txt"
        )
    )
    code, out, _ = run(["detect", "--from", str(listing)], capsys)
    assert code == 0
    said = [line.strip() for line in out.splitlines() if "'Rate 2.5'" in line]
    assert len(said) == 1 and said[0].startswith("roceo1:1: 'Rate 2.5' on an Ethernet port")
    assert "1 GbE link or a speed they cannot map (SDR 1X)" in said[0]
