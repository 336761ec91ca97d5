"""The NCCL variable catalog and its validators.

Good values are the examples in NCCL's environment-variable documentation and the
vendor guides; bad ones are what those documents and NCCL's parsing rules rule out.
"""

from __future__ import annotations

import re

import pytest

from hpnet.nccl.catalog import catalog, lookup, strtoll, suggest, validate
from hpnet.nccl.model import DOC_URL, Kind

REQUIRED = [
    # the families issue 3 names, one or more of each
    "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_TIMEOUT", "NCCL_IB_TC", "NCCL_IB_SL",
    "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_DISABLE", "NCCL_IB_ADDR_FAMILY",
    "NCCL_SOCKET_IFNAME", "NCCL_SOCKET_FAMILY", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD",
    "NCCL_NET", "NCCL_NET_PLUGIN", "NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ", "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", "NCCL_NVLS_ENABLE", "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS", "NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE",
    "NCCL_CROSS_NIC", "NCCL_HOSTID",
]  # fmt: skip


def test_catalog_covers_the_required_families() -> None:
    missing = [name for name in REQUIRED if lookup(name) is None]
    assert missing == []
    assert len(catalog()) >= 100


def test_every_entry_is_well_formed() -> None:
    for var in catalog().values():
        assert re.fullmatch(r"NCCL_[A-Z0-9_]+", var.name), var.name
        assert var.doc.startswith(DOC_URL), var.name
        assert var.summary.strip(), var.name
        if var.kind in (Kind.ENUM, Kind.ENUM_LIST):
            assert var.choices, var.name
        if var.default is not None and var.kind in (Kind.INT, Kind.BOOL, Kind.SIZE):
            assert validate(var.name, var.default).ok or var.default.startswith("-"), var
        if var.renamed:
            assert lookup(var.renamed) is not None, (var.name, var.renamed)


def test_version_dependent_defaults_are_recorded() -> None:
    timeout = lookup("NCCL_IB_TIMEOUT")
    assert timeout is not None and timeout.default == "20"
    assert any("14" in note and "18" in note for note in timeout.notes)
    gid = lookup("NCCL_IB_GID_INDEX")
    assert gid is not None and gid.default == "-1"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("NCCL_SOCKET_IFNAME", "eth"), ("NCCL_SOCKET_IFNAME", "=eth0"),
        ("NCCL_SOCKET_IFNAME", "^docker,lo"), ("NCCL_SOCKET_IFNAME", "^=docker0"),
        ("NCCL_SOCKET_IFNAME", "ib0,bond0,eth0"),
        ("NCCL_IB_HCA", "mlx5"), ("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"), ("NCCL_IB_HCA", "^=mlx5_1"),
        ("NCCL_IB_HCA", "erdma"), ("NCCL_IB_GID_INDEX", "3"), ("NCCL_IB_GID_INDEX", "-1"),
        ("NCCL_IB_TC", "136"), ("NCCL_IB_SL", "5"), ("NCCL_IB_TIMEOUT", "22"),
        ("NCCL_IB_QPS_PER_CONNECTION", "8"), ("NCCL_MIN_NCHANNELS", "16"),
        ("NCCL_SOCKET_FAMILY", "AF_INET"), ("NCCL_SOCKET_FAMILY", "AF_INET6"),
        ("NCCL_DEBUG", "INFO"), ("NCCL_DEBUG", "info"), ("NCCL_DEBUG_SUBSYS", "INIT,NET"),
        ("NCCL_DEBUG_SUBSYS", "^COLL"), ("NCCL_ALGO", "Ring,Tree"), ("NCCL_ALGO", "^NVLS"),
        ("NCCL_ALGO", "allreduce:tree;broadcast:ring"), ("NCCL_PROTO", "^LL128"),
        ("NCCL_NET_GDR_LEVEL", "PHB"), ("NCCL_NET_GDR_LEVEL", "2"), ("NCCL_P2P_LEVEL", "NVL"),
        ("NCCL_NET_PLUGIN", "none"), ("NCCL_IB_DISABLE", "0"), ("NCCL_BUFFSIZE", "4194304"),
        ("NCCL_DEBUG_FILE", "/tmp/nccl.%h.%p"),
    ],
)  # fmt: skip
def test_documented_values_are_accepted(name: str, value: str) -> None:
    assert validate(name, value).ok, validate(name, value)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("NCCL_IB_TIMEOUT", "abc", "NCCL reads 'abc' as 0"),
        ("NCCL_IB_TIMEOUT", "22s", "NCCL reads '22s' as 22"),
        ("NCCL_IB_TIMEOUT", "32", "above the maximum 31"),
        ("NCCL_IB_TC", "0136", "octal, 94"),
        ("NCCL_IB_TC", "256", "above the maximum 255"),
        ("NCCL_IB_SL", "16", "above the maximum 15"),
        ("NCCL_IB_DISABLE", "2", "expects 0 or 1"),
        ("NCCL_SOCKET_FAMILY", "inet", "not AF_INET or AF_INET6"),
        ("NCCL_SOCKET_IFNAME", "e", "ignores a value of one character"),
        ("NCCL_SOCKET_IFNAME", "^,", "excludes everything"),
        ("NCCL_SOCKET_IFNAME", ",,", "names no interface"),
        ("NCCL_IB_HCA", "mlx5_0:x", "port 'x'"),
        ("NCCL_DEBUG", "VERBOSE", "not one of"),
        ("NCCL_ALGO", "Ring,Star", "'Star' is not one of"),
        ("NCCL_NET_GDR_LEVEL", "FAR", "not one of"),
        ("NCCL_BUFFSIZE", "0", "below the minimum"),
    ],
)
def test_bad_values_say_what_nccl_does(name: str, value: str, message: str) -> None:
    result = validate(name, value)
    assert not result.ok and message in result.message


@pytest.mark.parametrize(
    ("text", "value"), [("22", 22), ("0x10", 16), ("010", 8), ("22s", 22), ("abc", 0), ("-1", -1)]
)
def test_strtoll_as_c_reads_it(text: str, value: int) -> None:
    assert strtoll(text) == value


@pytest.mark.parametrize(
    ("typo", "name"),
    [("NCCL_IB_TIMEOUTS", "NCCL_IB_TIMEOUT"), ("NCCL_SOCKET_IFNAMES", "NCCL_SOCKET_IFNAME"),
     ("NCCL_IB_GID_IDX", "NCCL_IB_GID_INDEX"), ("NCCL_DEBUGG", "NCCL_DEBUG")],
)  # fmt: skip
def test_suggest_the_closest_name(typo: str, name: str) -> None:
    assert suggest(typo) == name
