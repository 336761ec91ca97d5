"""Issue 23: Ctrl-C or SIGTERM during `hpnet check` keeps what was judged: the node
detected and the doctor's findings are printed and saved (--json, --report) in a
report marked incomplete that names the stage stopped, and the command exits as
interrupted (130, 143), as `hpnet bench` does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from hpnet.check.execute import Launched, Stopped, execute
from hpnet.check.plan import PlanFacts, StagePlan, plan_check
from hpnet.errors import Terminated
from tests.unit.test_results_kept import environment

HPNET = [sys.executable, "-m", "hpnet"]


def still_running(mark: str) -> list[int]:
    """Processes whose command line holds ``mark`` (the test's own directory)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if mark.encode() in argv:
                found.append(int(entry))
    return found


@pytest.mark.parametrize(
    ("sig", "code", "output"),
    [(signal.SIGINT, 130, "--json"), (signal.SIGTERM, 143, "text")],
)
def test_a_stopped_check_prints_and_saves_what_it_judged(
    tmp_path: Path, sig: signal.Signals, code: int, output: str
) -> None:
    """The real `hpnet check` (gloo on 2 CPU ranks) on this machine with
    NCCL_SOCKET_IFNAME=nosuch0 (a doctor FAIL: NCCL's bootstrap finds no interface),
    stopped by a real signal once its benchmark stage has started: the detection and
    the doctor are done. (This machine: a recorded node runs no benchmark, issue 26.)"""
    pytest.importorskip("torch")
    report, logs = tmp_path / "report", tmp_path / "logs"
    out, err = tmp_path / "out", tmp_path / "err"
    argv = [*HPNET, "check", "--device", "cpu",
            "--report", str(report), "--logs", str(logs)]  # fmt: skip
    if output == "--json":
        argv.append("--json")
    with out.open("wb") as stdout, err.open("wb") as stderr:
        runner = subprocess.Popen(
            argv, stdout=stdout, stderr=stderr, env=environment(NCCL_SOCKET_IFNAME="nosuch0"),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while "hpnet check: benchmark cpu" not in err.read_text():
            assert runner.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the benchmark stage never started"
            time.sleep(0.02)
        runner.send_signal(sig)
        assert runner.wait(timeout=60) == code, err.read_text()
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert not still_running(str(tmp_path)), "a rank was left running"
    said = err.read_text()
    assert "Traceback" not in said, said
    why = f"stopped by {'SIGINT (Ctrl-C)' if code == 130 else 'SIGTERM'}"
    stage = "during the benchmark cpu (stage 1 of 1)"
    assert f"hpnet check: {why} {stage}: the report holds what was judged" in said
    assert said.rstrip().endswith(f"stopped by {'the user' if code == 130 else sig.name}")
    assert "wrote " in said  # --report was written
    # report.json: marked incomplete, the doctor's findings kept
    data = json.loads((report / "report.json").read_text())
    assert data["incomplete"] == f"{why} {stage}"
    assert data["verdict"] == "NOT READY" and data["headline"].startswith(f"INCOMPLETE, {why}")
    assert "doctor:vars.ifname" in [p["code"] for p in data["problems"]]
    assert "vars.ifname" in [c["id"] for c in data["doctor_checks"]]
    assert sum(data["doctor"].values()) > 10  # the real doctor ran, its counts are kept
    assert data["node"] and data["transport"]  # and the detection's findings
    [cpu] = data["stages"]
    assert cpu["name"] == "cpu" and cpu["error"].startswith(why) and cpu["judgement"] is None
    page = (report / "report.html").read_text()
    assert "id='incomplete'" in page and f"{why} {stage}" in page
    assert "NCCL_SOCKET_IFNAME=nosuch0 matches no interface" in page
    printed = out.read_text()
    if output == "--json":
        assert json.loads(printed) == data
    else:
        assert printed.startswith(f"hpnet check: NOT READY — INCOMPLETE, {why} {stage}")
        assert f"INCOMPLETE: {why} {stage}." in printed
        assert "doctor: NCCL_SOCKET_IFNAME=nosuch0 matches no interface" in printed


#: a node of 4 GPUs and an active RDMA port: two stages, intra-node then the network
FOUR_GPUS = PlanFacts(node="n", profile="auto", transport="ib", device="cuda", num_gpus=4,
                      nproc=4, active_rates_gbit=(200.0,))  # fmt: skip


def test_the_stages_before_the_signal_are_kept_and_the_stopped_one_named(
    tmp_path: Path,
) -> None:
    """A launcher whose second stage was stopped by Ctrl-C: the first stage (judged)
    and the second (its error, not judged) go to on_interrupt, then the
    KeyboardInterrupt is raised again."""
    plan = plan_check(FOUR_GPUS)
    assert [s.name for s in plan.stages] == ["intra-node", "across 2 fake hosts"]
    kept: list[Stopped] = []

    def launcher(stage: StagePlan, _env: Mapping[str, str], _directory: str) -> Launched:
        if stage.name == "intra-node":
            return Launched(bench=None)
        return Launched(bench=None, error="stopped by SIGINT (Ctrl-C)",
                        interrupted=KeyboardInterrupt())  # fmt: skip

    with pytest.raises(KeyboardInterrupt):
        execute(plan, env={}, root=str(tmp_path), launcher=launcher, on_interrupt=kept.append)
    [stopped] = kept
    assert [o.stage.name for o in stopped.done] == ["intra-node"]
    assert stopped.stopped.stage.name == "across 2 fake hosts"
    assert stopped.stopped.stage.error == "stopped by SIGINT (Ctrl-C)"
    assert stopped.stopped.stage.judgement is None
    assert stopped.why == (
        "stopped by SIGINT (Ctrl-C) during the benchmark across 2 fake hosts (stage 2 of 2)"
    )


def test_a_signal_in_the_first_stage_names_the_stages_not_run(tmp_path: Path) -> None:
    kept: list[Stopped] = []

    def launcher(_stage: StagePlan, _env: Mapping[str, str], _directory: str) -> Launched:
        raise Terminated(signal.SIGTERM)

    with pytest.raises(Terminated):
        execute(plan_check(FOUR_GPUS), env={}, root=str(tmp_path), launcher=launcher,
                on_interrupt=kept.append)  # fmt: skip
    [stopped] = kept
    assert stopped.done == () and stopped.stopped.stage.error == "stopped by SIGTERM"
    assert stopped.why == (
        "stopped by SIGTERM during the benchmark intra-node (stage 1 of 2); "
        "not run: across 2 fake hosts"
    )
