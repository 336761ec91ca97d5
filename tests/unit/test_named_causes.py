"""What broke, named from NCCL's own words on real logs (issue 24 rule 1)."""

from __future__ import annotations

from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse
from tests.conftest import DATA


def _report(name: str) -> VerifyReport:
    found, notes = collect_inputs([str(DATA / "nccl-logs" / name)])
    return analyse(read_logs(found, jobs=1, notes=notes))


def _errors(report: VerifyReport) -> list[str]:
    return [f.id for f in report.findings if f.severity == "error"]


def test_mnnvl_not_working_is_named_apart_from_nvls() -> None:
    report = _report(
        "mnnvl-imex-fabric-cumemcreate-800-not-permitted-unprivileged-pod-gb200-nccl2.28.9.log"
    )
    assert report.fatal and _errors(report)[0] == "mnnvl-failed"
    finding = report.findings[0]
    assert "IMEX channel" in finding.cause and "NCCL_MNNVL_ENABLE=0" in finding.fix
    assert not any(f.id == "nvls-failed" for f in report.findings)


def test_a_socket_of_the_other_network_module_is_a_network_mismatch() -> None:
    report = _report(
        "net-mismatch-socket-accept-wrong-type-4-ib-peer-same-hostname-nccl2.18.3-2.18.6.log"
    )
    assert report.fatal and _errors(report)[0] == "net-mismatch"


def test_a_device_fatal_async_event_is_a_failure() -> None:
    # IBV_EVENT_DEVICE_FATAL on 3 processes, nothing after it: the HCA is gone
    report = _report(
        "ib-async-event-local-catastrophic-error-mpirun-timestamp-tags-3-procs-nccl2.4.2.log"
    )
    assert report.fatal and _errors(report)[0] == "ib-async-event"


def test_a_port_error_event_stays_a_warning_where_nothing_failed_after_it() -> None:
    report = _report(
        "ib-async-event-port-error-8-procs-one-node-redacted-host-lit-llama-nccl2.14-2.15.log"
    )
    event = next(f for f in report.findings if f.id == "ib-async-event")
    assert not event.fatal


def test_a_plugin_that_gave_up_is_an_error_and_not_the_network_nccl_chose() -> None:
    report = _report(
        "ofi-plugin-init-failed-endpoint-invalid-argument-gdr-disabled-p4d-cloudwatch-doubled-"
        "nccl2.21.5.log"
    )
    assert not report.fatal  # NCCL goes on with its own network unless NCCL_NET forces it
    assert _errors(report)[0] == "ofi-plugin-error"
    assert not any(h.chose for h in report.hosts)
