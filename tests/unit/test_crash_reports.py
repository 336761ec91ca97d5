"""A process a signal ended, as the shell and faulthandler report it (``process-crashed``)."""

from __future__ import annotations

import pytest

from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

BUS_ERROR = DATA / (
    "nccl-logs/container-16xa100-single-process-bus-error-after-init-p2p-direct-read-no-warn-"
    "nccl-version-not-shown.log"
)
#: two real NCCL lines of the recorded log before each report
NCCL = BUS_ERROR.read_text().splitlines()[:2]


def _crash(line: str) -> tuple[str, tuple[str, ...]] | None:
    report = analyse(parse_nccl_log([*NCCL, line]))
    found = next((f for f in report.findings if f.id == "process-crashed"), None)
    return (report.status, found.conclusions) if found else None


def test_the_shells_bus_error_after_init_is_a_crash_not_a_pass() -> None:
    """nccl-tests#143: init went through, then "Bus error (core dumped)" and nothing else:
    hpnet had said PASS. The bus error is named with what usually causes it."""
    report = analyse(parse_nccl_log(BUS_ERROR.read_text().splitlines()))
    assert report.status == "FAIL" and report.fatal
    crash = next(f for f in report.findings if f.id == "process-crashed")
    assert crash.evidence[0].endswith(":7: Bus error (core dumped)")
    assert any("/dev/shm out of room" in c and "2.19 on" in c for c in crash.conclusions)


@pytest.mark.parametrize(
    "line",
    [
        "Segmentation fault (core dumped)",
        "Bus error",
        "Aborted (core dumped)",
        "Killed",
        # bash, a script's child: "<script>: line <n>: <pid> <signal>  <command>"
        "/job/run.sh: line 12: 40213 Segmentation fault      (core dumped) python train.py",
        "./train.sh: line 3: 4711 Killed                  torchrun --nproc-per-node 8 x.py",
        "Fatal Python error: Segmentation fault",
        # UCX's handler (Megatron-LM#516, recorded)
        "[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)",
    ],
)
def test_each_form_is_a_crash(line: str) -> None:
    said = _crash(line)
    assert said is not None and said[0] == "FAIL"


def test_killed_names_the_oom_killer() -> None:
    said = _crash("Killed")
    assert said is not None and any("OOM killer" in c for c in said[1])


@pytest.mark.parametrize(
    "line",
    [
        "Killed 3 zombie workers",
        "Aborted by user request",
        "ERROR: job Aborted",
        "Bus error rate: 0.0",
        "Fatal Python error: init_fs_encoding: failed to get the Python codec",
    ],
)
def test_near_misses_are_not_crashes(line: str) -> None:
    assert _crash(line) is None
