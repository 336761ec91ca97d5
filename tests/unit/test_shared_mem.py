"""NCCL's kernels asking more shared memory than the GPU has (``shared-mem-exceeds-gpu``)."""

from __future__ import annotations

from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

RTX5090 = DATA / (
    "nccl-logs/dual-rtx5090-sm120-p2p-disabled-ncclmaxsharedmem-82240-exceeds-79856-init-"
    "only-nccl2.25.1-EXCERPT.log"
)


def test_2_25_1s_info_line_names_the_release_not_the_transport() -> None:
    """nccl#1637: two RTX 5090s, NCCL 2.25.1. Its INFO line clamps the attribute and
    goes on (enqueue.cc @v2.25.1-1): a warning that names the upgrade, not P2P."""
    report = analyse(parse_nccl_log(RTX5090.read_text().splitlines()))
    found = next(f for f in report.findings if f.id == "shared-mem-exceeds-gpu")
    assert found.severity == "warning" and not report.fatal
    assert found.evidence[0].endswith(
        ":7: localhost:11344:11344 [1] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn "
        "maxSharedMem 79856"
    )
    assert "2.26.2" in found.fix and "NCCL_P2P_DISABLE does not help" in found.fix


def test_the_2_26_warn_and_its_trail_fail_init() -> None:
    """2.26.2 on: WARN "cudaArch %d ncclMaxSharedMem %d exceeds ..." and ncclSystemError
    (enqueue.cc @v2.26.2-1): the same lines, as that release prints them, are fatal."""
    lines = [
        *RTX5090.read_text().splitlines()[:6],
        "localhost:11344:11344 [1] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem "
        "82240 exceeds device/fn maxSharedMem 79856",
        "localhost:11344:11344 [1] NCCL INFO init.cc:1600 -> 2",
    ]
    report = analyse(parse_nccl_log(lines))
    found = next(f for f in report.findings if f.id == "shared-mem-exceeds-gpu")
    assert found.severity == "error" and report.fatal
