"""Error trails a caller recovered from (hpnet.ncclog.recovery), on real lines."""

from __future__ import annotations

from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

SHARP = (
    DATA / "nccl-logs/sharp-coll-init-cannot-create-sharp-job-collnet-p2p-fallback-nccl2.19.3.log"
)


def test_collnet_fallback_excuses_the_trails_of_the_same_call_on_every_node() -> None:
    """NCCL 2.19.3: ncclTransportCollNetCheck warns on local rank 0 and returns
    ncclSystemError, init.cc's caller goes on without CollNet. The trails
    (transport.cc:291, init.cc:670 -> 2) of every node are that call's."""
    found, notes = collect_inputs([str(SHARP)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    assert not report.fatal
    assert not any(f.id == "error-trail" for f in report.findings)
    collnet = next(f for f in report.findings if f.id == "collnet-failed")
    assert collnet.severity == "warning"


def test_a_trail_from_another_site_still_failed() -> None:
    lines = SHARP.read_text().splitlines()
    # a process that passed an error up from another call (a real trail line of the
    # same log, moved to a site the fallback's node never printed)
    lines.append("ib-vm-40:1098215:1098536 [7] NCCL INFO init.cc:1400 -> 2")
    log = parse_nccl_log(lines)
    failed = {p.key for p in log.processes if p.trail_codes and not p.went_on}
    assert failed == {"ib-vm-40:1098215"}


def test_without_the_recoverable_warn_the_trails_failed() -> None:
    lines = [line for line in SHARP.read_text().splitlines() if "Cannot initialize" not in line]
    log = parse_nccl_log(lines)
    assert {p.key for p in log.processes if p.trail_codes and not p.went_on} == {
        "ib-vm-40:1098215",
        "ib-vm-52:1047884",
        "ib-vm-41:1056973",
        "ib-vm-41:1056977",
        "ib-vm-41:1056976",
        "ib-vm-41:1056968",
    }


SAT = DATA / (
    "nccl-logs/collnet-sharp-plugin-sat-streaming-tree-lock-failed-minus18-training-job-"
    "nccl2.21.5-EXCERPT.log"
)


def test_a_collnet_setup_failure_ends_where_it_is_printed() -> None:
    """NCCL 2.21.5's transport.cc:327 is ncclTransportCollNetSetup's connect: that
    function returns a flag, not the error (its caller warns "Cannot initialize CollNet"
    and goes on without it). The excerpt ends before that WARN: the SHARP plugin's
    failure is a fallback, not a failed job."""
    found, notes = collect_inputs([str(SAT)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    assert not report.fatal and report.status == "WARN"
    assert not any(f.id == "error-trail" for f in report.findings)
    collnet = next(f for f in report.findings if f.id == "collnet-failed")
    assert collnet.severity == "warning"
    assert "Streaming Tree lock failed" in collnet.cause


def test_a_trail_that_also_left_the_collnet_setup_failed() -> None:
    lines = SAT.read_text().splitlines()
    # the same process passed an error up from init.cc too (a site no release absorbs)
    lines.append("node:174:4359 [3] NCCL INFO init.cc:1290 -> 2")
    log = parse_nccl_log(lines)
    assert {p.key for p in log.processes if p.trail_codes and not p.went_on} == {"node:174"}


def test_an_absorbed_site_under_a_build_path_is_absorbed() -> None:
    lines = [
        line.replace("transport.cc:327", "/dvs/p4/build/sw/gpgpu/nccl/src/transport.cc:327")
        for line in SAT.read_text().splitlines()
    ]
    log = parse_nccl_log(lines)
    assert not any(p.trail_codes and not p.went_on for p in log.processes)
