"""The GID a NET/IB queue pair used, read out of NCCL's line into a finding (hpnet.ncclog.gids)."""

from __future__ import annotations

import pytest

from hpnet.ncclog.facts import parse_nccl_text
from hpnet.ncclog.findings import match_signatures
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.gids import gid_address, gid_details
from hpnet.ncclog.lines import classify
from hpnet.ncclog.model import LogLine
from tests.conftest import DATA

ROCE_LOG = (
    DATA
    / "nccl-logs"
    / ("k8s-roce-gid0-linklocal-set-ece-unsupported-modify-qp-enodev-ncclunknown-EXCERPT.log")
)


@pytest.mark.parametrize(
    ("prefix", "interface", "address"),
    [
        ("80FE", "1A8A41FEFF21A75E", "fe80::5ea7:21ff:fe41:8a1a"),  # RoCE, MAC-made
        ("80FE", "C3B2A10300039B98", "fe80::989b:300:3a1:b2c3"),  # an InfiniBand port GUID
        ("0", "A01A8C0FFFF0000", "::ffff:192.168.1.10"),  # RoCE over IPv4
        ("B80D0120", "100000000000000", "2001:db8::1"),
        ("1" + "0" * 16, "0", None),  # a half wider than 64 bits is no GID
    ],
)
def test_the_halves_are_read_as_a_little_endian_host_printed_them(
    prefix: str, interface: str, address: str | None
) -> None:
    assert gid_address(prefix, interface) == address


def _said(key: str) -> str:
    return gid_details([(key, LogLine(source="x.log", line_number=3, text="", count=1))])[0]


def test_each_kind_of_gid_is_said_for_what_it_is() -> None:
    roce = _said("gid:0:80FE/1A8A41FEFF21A75E")
    assert "GID index 0, fe80::5ea7:21ff:fe41:8a1a, link-local" in roce
    assert "most likely RoCE" in roce and "(x.log:3)" in roce
    infiniband = _said("gid:0:80FE/C3B2A10300039B98")
    assert "InfiniBand's port GID" in infiniband and "most likely RoCE" not in infiniband
    mapped = _said("gid:3:0/A01A8C0FFFF0000")
    assert "GID index 3, ::ffff:192.168.1.10, IPv4-mapped" in mapped
    assert "v1 or v2 the line does not say" in mapped  # the type is not in the line
    assert "global IPv6" in _said("gid:1:B80D0120/100000000000000")


def test_every_release_s_queue_pair_line_is_read_for_its_gid() -> None:
    """Each format NCCL printed a queue pair's GID with (the format table's examples,
    rendered from the source of every release) reads as that GID."""
    examples = [
        f["example"]
        for f in load_table().formats
        if "qpn" in f["format"] and "GID %ld (%lX/%lX)" in f["format"] and f.get("example")
    ]
    assert len(examples) >= 5
    for example in examples:
        event = classify(b"h:1:2 [0] NCCL INFO " + example.encode(), "x")
        assert event is not None and event.kind == "ib-qp", example
        index, prefix, interface = event.data
        assert isinstance(index, int) and gid_address(str(prefix), str(interface))


def test_a_queue_pair_that_could_not_connect_names_its_gid() -> None:
    """A RoCE pod's ibv_modify_qp ENODEV: the queue pair used GID 0, link-local, which
    the line before says (line 1), as the input's conclusions state."""
    findings = {
        f.id: f for f in match_signatures(parse_nccl_text(ROCE_LOG.read_bytes(), source="r.log"))
    }
    said = findings["modify-qp-enodev"].conclusions
    assert said == (
        "the queue pair used GID index 0, fe80::5ea7:21ff:fe41:8a1a, link-local (fe80::/64) "
        "with a MAC address in it (the ff:fe of a MAC-made EUI-64: Ethernet, so most likely "
        "RoCE): the port's default entry, which on RoCE is not routed past its L2 network "
        "(r.log:1)",
    )
