"""docs/verify-schema.md documents exactly the keys of `hpnet verify --json`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA

DOC = (Path(__file__).parents[2] / "docs" / "verify-schema.md").read_text()


def keys(section: str) -> set[str]:
    return set(re.findall(r"^\| `([a-z_]+)`", section, re.MULTILINE))


def test_doc_and_output_agree(capsys: pytest.CaptureFixture[str]) -> None:
    main(
        [
            "verify",
            "--json",
            "--expect",
            "net=ib",
            str(DATA / "nccl-logs" / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    top, rest = DOC.split("## A process", 1)
    process, rest = rest.split("## A host", 1)
    host, rest = rest.split("## A communicator", 1)
    comm, finding = rest.split("## A finding", 1)
    finding = finding.split("## An input other than an NCCL log", 1)[0]
    assert keys(top) == set(data)
    assert keys(process) == set(data["ranks"][0])
    assert keys(host) == set(data["hosts"][0])
    assert keys(comm) == set(data["communicators"][0])
    assert keys(finding) == set(data["findings"][0])
    assert set(data["expectations"][0]) == {"expectation", "met", "detail"}
    assert set(data["transports"]) == {"intra_node", "inter_node"}


def test_artefacts_doc_and_output_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """An ncclras report's entry in ``artefacts`` has the documented keys."""
    main(
        [
            "verify",
            "--json",
            str(DATA / "artefacts" / "ras-text-mismatch-allgather-30-lag-2-ahead-nccl2.26.2.txt"),
        ]
    )
    data = json.loads(capsys.readouterr().out)
    artefact = DOC.split("## An input other than an NCCL log", 1)[1]
    artefact = artefact.split("## NCCL's own diagnostics", 1)[0]
    assert keys(artefact) == set(data["artefacts"][0])


def test_diagnostics_doc_and_output_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """NCCL 2.31's ``NCCL DIAG`` results: an entry per communicator and its checks."""
    log = "h200-fake-hosts-one-gpu-diagnostics-ras-hostid-differs-socket-nccl2.31.2.log"
    main(["verify", "--json", str(DATA / "nccl-logs" / log)])
    data = json.loads(capsys.readouterr().out)
    entry, check = DOC.split("## NCCL's own diagnostics", 1)[1].split("### A result", 1)
    assert keys(entry) == set(data["diagnostics"][0])
    assert keys(check) == set(data["diagnostics"][0]["checks"][0])
