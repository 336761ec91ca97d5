"""A host whose GPUs meet only through host memory (``intra-node-shm-only``), on real
logs."""

from __future__ import annotations

from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"
NVSWITCH = (
    LOGS / "nvswitch-node-all-intranode-rings-via-shm-no-p2p-two-channels-nccl2.14-2.18-EXCERPT.log"
)


def _ids(lines: list[str]) -> dict[str, object]:
    return {f.id: f for f in analyse(parse_nccl_log(lines)).findings}


def test_every_pair_through_shm_is_said() -> None:
    """nccl-tests#228: eight ranks of one host, every ring hop "via SHM/direct/direct" (a
    node the thread calls NVSwitch): a PASS before; the host is named, with the lines."""
    report = analyse(parse_nccl_log(NVSWITCH.read_text().splitlines()))
    found = next(f for f in report.findings if f.id == "intra-node-shm-only")
    assert report.status == "WARN" and found.severity == "warning"
    assert found.conclusions == (
        "user: every intra-node connection the log shows goes via SHM (7 process(es) show one)",
    )
    assert "via SHM/direct/direct" in found.evidence[0]
    assert "nvidia-fabricmanager" in found.fix


def test_one_p2p_pair_or_p2p_turned_off_says_nothing() -> None:
    lines = NVSWITCH.read_text().splitlines()
    # one pair over P2P (NCCL's own form): the host has P2P, SHM is NCCL's choice elsewhere
    p2p = "user:5186:5235 [7] NCCL INFO Channel 02/0 : 7[ca000] -> 6[c7000] via P2P/IPC"
    assert "intra-node-shm-only" not in _ids([*lines, p2p])
    # the environment turned P2P off: env-p2p-disabled says it, not this
    off = "user:5186:5186 [7] NCCL INFO NCCL_P2P_DISABLE set by environment to 1"
    assert "intra-node-shm-only" not in _ids([off, *lines])


def test_nccls_own_line_for_a_pair_without_p2p_is_not_said_twice() -> None:
    """aws 4x A10G: NCCL says per pair "P2P is disabled between connected GPUs" (the
    p2p-disabled-pcie signature): no second finding for the same thing."""
    log = LOGS / (
        "aws-4xa10g-nvml-p2p-disabled-pcie-gpus-ring-via-shm-direct-sglang-tp4-nccl2.20-EXCERPT.log"
    )
    found = _ids(log.read_text().splitlines())
    assert "p2p-disabled-pcie" in found and "intra-node-shm-only" not in found
