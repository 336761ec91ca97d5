"""Socket interfaces that cannot reach another host (hpnet.ncclog.interfaces), on real
lines."""

from __future__ import annotations

from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

HOROVOD = DATA / (
    "nccl-logs/horovod-docker-two-hosts-asymmetric-socket-ifaces-vlan-subnets-ipv6-linklocal-"
    "hang-nccl2.3.7.log"
)


def _findings(lines: list[str]) -> dict[str, object]:
    report = analyse(parse_nccl_log(lines))
    return {f.id: f for f in report.findings}


def test_link_local_socket_interfaces_of_a_two_host_job_are_named() -> None:
    """NCCL 2.3.7 listed each host's fe80:: interfaces beside its VLAN one (horovod#636):
    the other host reaches them only on that link. Each process's are named, and only
    those (the VLAN interfaces' routed addresses are not)."""
    found, notes = collect_inputs([str(HOROVOD)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    finding = next(f for f in report.findings if f.id == "socket-link-local")
    assert finding.severity == "warning" and "2 hosts" in finding.title
    assert finding.conclusions == (
        "process srv4:314: enp5s0 (fe80::4eed:fbff:fe91:8317%enp5s0), ens5f0 "
        "(fe80::a236:9fff:fef6:f1c0%ens5f0) in NCCL's socket interfaces",
        "process srv5:938: ens5f1 (fe80::a236:9fff:fef6:faed%ens5f1) in NCCL's socket interfaces",
    )
    assert "NCCL_SOCKET_FAMILY=AF_INET" in finding.fix
    assert all(q.startswith("srv") for q in (e.split(": ", 1)[1] for e in finding.evidence))


def test_one_host_or_no_link_local_address_is_not_flagged() -> None:
    lines = HOROVOD.read_text().splitlines()
    # srv4's lines alone: one host, where a link-local address reaches its own link
    assert "socket-link-local" not in _findings([x for x in lines if x.startswith("srv4")])
    # both hosts, their fe80:: interfaces gone: nothing to say
    assert "socket-link-local" not in _findings([x for x in lines if "fe80::" not in x])


def test_a_connection_through_a_link_local_interface_is_an_error() -> None:
    lines = HOROVOD.read_text().splitlines()
    # srv4's ring through its socket interface 1 (enp5s0, fe80::): NCCL 2.3.7's form
    lines.append("srv4:314:320 [0] NCCL INFO Ring 00 : 0 -> 1 [send] via NET/Socket/1")
    finding = _findings(lines)["socket-link-local"]
    assert finding.severity == "error"  # type: ignore[attr-defined]
