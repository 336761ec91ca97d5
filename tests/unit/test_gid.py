from __future__ import annotations

import re

import pytest

from hpnet.rdma.gid import _classify_any, _classify_full, classify_gid, make_gid, normalize_gid_type
from hpnet.rdma.model import GidKind
from tests.conftest import DATA


@pytest.mark.parametrize(
    ("text", "kind", "ipv4"),
    [
        # spellings seen in tests/data/listings (sysfs/full form and rdma-core's compressed form)
        ("0000:0000:0000:0000:0000:ffff:c0a8:010b", GidKind.IPV4_MAPPED, "192.168.1.11"),
        ("::ffff:10.0.3.1", GidKind.IPV4_MAPPED, "10.0.3.1"),
        ("fe80:0000:0000:0000:8e2a:8eff:fe40:a37c", GidKind.IPV6_LINK_LOCAL, None),
        ("fe80::5ee4:835c:fc12:336", GidKind.IPV6_LINK_LOCAL, None),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", GidKind.IPV6_GLOBAL, None),
        ("fd00::2", GidKind.IPV6_GLOBAL, None),
        ("0000:0000:0000:0000:0000:0000:0000:0000", GidKind.EMPTY, None),
    ],
)
def test_classify_gid(text: str, kind: GidKind, ipv4: str | None) -> None:
    exploded, got_kind, got_ipv4 = classify_gid(text)
    assert got_kind is kind
    assert got_ipv4 == ipv4
    assert len(exploded) == 39 and exploded.count(":") == 7


def test_compressed_and_full_spellings_are_the_same_gid() -> None:
    assert (
        classify_gid("::ffff:10.0.3.1")[0]
        == classify_gid("0000:0000:0000:0000:0000:ffff:0a00:0301")[0]
    )


def test_classify_gid_rejects_non_addresses() -> None:
    with pytest.raises(ValueError):
        classify_gid("not-a-gid")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("IB/RoCE v1", "IB/RoCE v1"),
        ("RoCE v2", "RoCE v2"),
        ("v1", "IB/RoCE v1"),
        ("v2", "RoCE v2"),
        ("RoCE v1", "IB/RoCE v1"),
        ("RoCEv2", "RoCE v2"),
        ("", None),
        (None, None),
    ],
)
def test_normalize_gid_type(text: str | None, expected: str | None) -> None:
    assert normalize_gid_type(text) == expected


def test_empty_slot_keeps_no_type_or_netdev() -> None:
    gid = make_gid(7, "0000:0000:0000:0000:0000:0000:0000:0000", "RoCE v2", "eth0")
    assert gid.kind is GidKind.EMPTY
    assert gid.type is None and gid.netdev is None


def every_recorded_full_form_gid() -> list[str]:
    """Every eight-group GID in the recorded trees and listings."""
    found: set[str] = set()
    for path in [*(DATA / "sysfs").glob("*.tree"), *(DATA / "listings").glob("*.txt")]:
        found.update(re.findall(r"\b[0-9a-f]{4}(?::[0-9a-f]{4}){7}\b", path.read_text()))
    return sorted(found)


def test_fast_path_agrees_with_ipaddress_on_every_recorded_gid() -> None:
    gids = every_recorded_full_form_gid()
    assert len(gids) > 30  # 39 distinct GIDs recorded today
    kinds = set()
    for gid in gids:
        assert _classify_full(gid) == _classify_any(gid), gid
        kinds.add(_classify_full(gid)[1])
    assert kinds >= {GidKind.EMPTY, GidKind.IPV4_MAPPED, GidKind.IPV6_LINK_LOCAL}


@pytest.mark.parametrize(
    "gid",
    ["fe80:0000:0000:0000:0000:0000:0000:0001", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
     "fec0:0000:0000:0000:0000:0000:0000:0001", "0000:0000:0000:0000:0000:fffe:0a00:0001",
     "0000:0000:0000:0000:0001:ffff:0a00:0001", "2001:0db8:0000:0000:0000:ffff:0a00:0001"],
)  # fmt: skip
def test_fast_path_agrees_with_ipaddress_at_prefix_boundaries(gid: str) -> None:
    assert _classify_full(gid) == _classify_any(gid)
