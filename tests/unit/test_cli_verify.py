"""`hpnet verify` on the command line: verdict, JSON, inputs, exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"
GOOD = LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log"
SOCKETS = LOGS / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["verify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_verdict_first_then_hosts_and_findings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(GOOD)], capsys)
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith(
        "hpnet verify: PASS — inter-node traffic used NET/IB with GPUDirect RDMA"
    )
    assert "on all 8 processes; intra-node P2P/IPC" in first
    assert "Hosts (1)" in out and "tpgds-aihub0008" in out


def test_socket_fallback_fails_and_explains(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(SOCKETS)], capsys)
    assert code == 1
    assert out.startswith("hpnet verify: FAIL — inter-node traffic went over TCP sockets")
    assert "[socket-fallback]" in out and "fix:" in out and "[fake-hosts]" in out


def test_json_has_the_documented_keys(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([str(SOCKETS), "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["schema_version"] == 1
    for key in ("nccl_versions", "network", "nics", "transports", "ranks", "hosts", "findings"):
        assert key in data
    assert data["transports"] == {"intra_node": ["P2P/CUMEM"], "inter_node": ["NET/Socket"]}
    finding = data["findings"][0]
    assert {"id", "severity", "evidence", "cause", "fix"} <= set(finding)
    assert data["nccl_versions"] == ["2.28.9"]


def test_expectations_gate(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(GOOD), "--expect", "net=ib,gdr"], capsys)[0] == 0
    code, out, _ = run([str(GOOD), "--expect", "net=socket"], capsys)
    assert code == 1 and "expect net=socket: NOT MET" in out
    code, out, _ = run([str(SOCKETS), "--expect", "net=socket"], capsys)
    assert code == 0 and "expect net=socket: met" in out
    code, _, err = run([str(GOOD), "--expect", "fast"], capsys)
    assert code == 2 and err.startswith("error[bad-expect]")


def test_stdin_and_several_files(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.read_bytes())))
    code, out, _ = run(["-"], capsys)
    assert code == 0 and "<stdin>" in out
    files = sorted(str(p) for p in SOCKETS.iterdir())
    code, out, _ = run(files, capsys)
    assert code == 1 and "inter-node traffic went over TCP" in out


@pytest.mark.parametrize(
    ("content", "code_name"),
    [(b"", "no-nccl-lines"), (b"hello\nworld\n", "no-nccl-lines"), (b"\x00\x01" * 99, "no-log")],
)
def test_inputs_that_cannot_be_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, code_name: str
) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(content)
    code, out, err = run([str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error[{code_name}]") and "NCCL_DEBUG=INFO" in err
    assert "Traceback" not in err


def test_bad_paths_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(tmp_path / "missing.log")], capsys)
    assert code == 2 and err.startswith("error[log-unreadable]")
    code, _, err = run([], capsys)
    assert code == 2 and "no log given" in err
    code, _, err = run([str(GOOD), "--jobs", "0"], capsys)
    assert code == 2
    (tmp_path / "empty").mkdir()
    code, _, err = run([str(tmp_path / "empty")], capsys)
    assert code == 2 and err.startswith("error[log-dir-empty]")


def test_run_without_gpus_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--run"], capsys)
    assert code == 2 and err.startswith("error[no-gpu]") and "hpnet bench --device cpu" in err


def test_nccl_tests_output_without_debug_lines_is_sent_to_bench_import(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = DATA / "nccl-tests" / "sendrecv-1node-8xa100-g8-inplace-NA-EXCERPT-ncclTests2.13.txt"
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "error[no-nccl-lines]" in err
    assert f"this is nccl-tests output: `hpnet bench import {path}` reads its results" in err


def test_the_first_nccl_tests_failure_line_fails_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # nccl-tests before "Test NCCL failure": "NCCL failure all_reduce.cu:95 '...'"
    path = (
        DATA
        / "nccl-tests"
        / (
            "all_reduce-1node-8xp100-nccl1.0-NCCL-failure-at-table-header-no-rows-ncclTests1.0.0.txt"
        )
    )
    assert main(["verify", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["fatal"] and {"nccl-tests-failure", "cuda-failure"} <= {
        f["id"] for f in report["findings"]
    }
