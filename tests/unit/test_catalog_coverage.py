"""The catalog knows every variable NCCL 2.30.7 reads, and the names it must not
call unknown; its validators read values the way NCCL's source does."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from hpnet.nccl.catalog import (
    FOREIGN,
    catalog,
    foreign,
    lookup,
    nccl_int,
    strtoll,
    suggest,
    validate,
)
from hpnet.nccl.gid_select import parse_addr_range
from hpnet.nccl.lists import parse_list

#: Every NCCL_* name NVIDIA/nccl v2.30.7-1 reads under src/ (the prefix dropped): the
#: keys of ``NCCL_PARAM(name, "KEY", ...)`` and ``DEFINE_NCCL_PARAM(name, type, KEY, ...)``
#: and the ``"NCCL_..."`` literals passed to ``ncclGetEnv``, less four literals that are
#: not variables (NCCL_COMM_PROPERTIES_INITIALIZER, NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
#: and NCCL_GIN_CONNECTION_RAIL are C macros named in error messages; NCCL_USE_CMAKE is
#: read by the build's generate.py). Derived with git grep over the tag; the test below
#: re-derives it when a clone of NVIDIA/nccl is at hand.
_KEYS_2_30_7 = """
    ALGO ALLGATHERV_ENABLE ALLOC_P2P_NET_LL_BUFFERS BUFFSIZE CGA_CLUSTER_SIZE CHECK_MODE
    CHECK_POINTERS CHUNK_SIZE COLLNET_ENABLE COLLNET_NODE_THRESHOLD COMM_BLOCKING COMM_ID
    COMM_SHRINK_SHARE_RESOURCES COMM_SPLIT_SHARE_RESOURCES CONF_FILE CONNECT_ROUND_MAX_PEERS
    CROSS_NIC CTA_POLICY CUMEM_ENABLE CUMEM_HOST_ENABLE DEBUG DEBUG_FILE DEBUG_SUBSYS
    DEBUG_TIMESTAMP_FORMAT DEBUG_TIMESTAMP_LEVELS DEV_API_JIT DISABLE_MEM_MANAGER DMABUF_ENABLE
    ELASTIC_BUFFER_REGISTER ENABLE_VERSION_CHECK ENV_PLUGIN GDAKI_USE_RELIABLE_DB GDRCOPY_ENABLE
    GDRCOPY_FIFO_ENABLE GDRCOPY_FLUSH_ENABLE GDRCOPY_SYNC_ENABLE GDR_FLUSH_DISABLE GIN_ENABLE
    GIN_ERROR_QUERY_SEC GIN_GDAKI_MAX_DEST_RD_ATOMIC GIN_GDAKI_MAX_QP_RD_ATOMIC
    GIN_GDAKI_NIC_HANDLER GIN_GDAKI_QP_DEPTH GIN_IB_TC GIN_NCONNECTIONS GIN_PLUGIN
    GIN_PLUGIN_REF_COUNT GIN_PROXY_QUEUE_SIZE GIN_TYPE GRAPH_DUMP_FILE GRAPH_DUMP_FILE_RANK
    GRAPH_FILE GRAPH_HELPER_DISABLE GRAPH_MIXING_SUPPORT GRAPH_REGISTER GRAPH_STREAM_ORDERING
    GROUP_CUDA_STREAM HOSTID IBVERBS_LIB IB_ADAPTIVE_ROUTING IB_ADDR_FAMILY IB_ADDR_RANGE
    IB_AR_THRESHOLD IB_DATA_DIRECT IB_DEVICE_PCI_ORDER IB_DISABLE IB_ECE_ENABLE IB_FIFO_TC
    IB_GID_INDEX IB_HCA IB_MERGE_NICS IB_MERGE_VFS IB_MQP_RETRY_ALL IB_MQP_RETRY_CNT
    IB_MQP_RETRY_SLEEP_MSEC IB_OOO_RQ IB_PCI_RELAXED_ORDERING IB_PKEY
    IB_PREPOST_RECEIVE_WORK_REQUESTS IB_QPS_PER_CONNECTION IB_QUERY_PORT_SPEED
    IB_RECEIVER_SIDE_MATCHING_SCHEME IB_RESILIENCY_PORT_FAILOVER
    IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY
    IB_RESILIENCY_PORT_RECOVERY IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT
    IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL
    IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE
    IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE
    IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX
    IB_RESILIENCY_PORT_RECOVERY_START_DELAY IB_RETRY_CNT IB_RETURN_ASYNC_EVENTS
    IB_ROCE_VERSION_NUM IB_ROUTABLE_FLID_GID_INDEX IB_SL IB_SPLIT_DATA_ON_QPS
    IB_SUBNET_AWARE_ROUTING IB_SUBNET_PREFIX_LEN IB_TC IB_TIMEOUT IB_USE_INLINE
    IB_WARN_RAIL_LOCAL IGNORE_COLLNET_MISMATCH IGNORE_CPU_AFFINITY IGNORE_DISABLED_P2P
    IGNORE_NET_MISMATCH IPC_USE_ABSTRACT_SOCKET L1_SHARED_MEMORY_CARVEOUT LAUNCH_MODE
    LAUNCH_ORDER_IMPLICIT LAUNCH_RACE_FATAL LEGACY_CUDA_REGISTER LL128_BUFFSIZE LL128_C2C
    LL128_NTHREADS LL_BUFFSIZE LOCAL_REGISTER LSA_TEAM_SIZE MAX_CTAS MAX_NCHANNELS MAX_NRINGS
    MAX_P2P_NCHANNELS MEM_SYNC_DOMAIN MIN_CTAS MIN_NCHANNELS MIN_NRINGS MIN_P2P_NCHANNELS
    MLOPART_RDMA_ENABLE MNNVL_CLIQUE_ID MNNVL_CROSS_CLIQUE MNNVL_ENABLE MNNVL_RAIL_PER_HOST
    MNNVL_SCATTER_NETS_ENABLE MNNVL_UUID MULTI_RANK_GPU_ENABLE MULTI_SEGMENT_REGISTER
    NCHANNELS_PER_NET_PEER NET NETDEVS_POLICY NET_DISABLE_INTRA NET_FORCE_FLUSH NET_FORCE_MERGE
    NET_GDR_C2C NET_GDR_LEVEL NET_GDR_MLOPART NET_GDR_READ NET_MERGE_LEVEL NET_MERGE_POLICY
    NET_OPTIONAL_RECV_COMPLETION NET_OVERHEAD NET_PLUGIN NET_PLUGIN_REF_COUNT NET_SHARED_BUFFERS
    NET_SHARED_COMMS NO_CACHE NSOCKS_PERTHREAD NTHREADS NUM_RMA_CTX NVB_DISABLE NVB_PRECONNECT
    NVLINK_UTIL_CENTRIC_SCHED_ENABLE NVLSTREE_MAX_CHUNKSIZE NVLS_CHUNKSIZE NVLS_ENABLE
    NVLS_NCHANNELS NVTX_DISABLE OOB_NET_ENABLE OOB_NET_IFNAME P2P_DIRECT_DISABLE P2P_DISABLE
    P2P_EPOCH_ENABLE P2P_LEVEL P2P_LL_THRESHOLD P2P_MAX_PEERS P2P_NET_CHUNKSIZE
    P2P_NVL_CHUNKSIZE P2P_PCI_CHUNKSIZE P2P_PER_CHANNEL_NET_BW P2P_PXN_LEVEL P2P_READ_ENABLE
    P2P_SCHEDULE_GROUP_SIZE P2P_USE_CUDA_MEMCPY PARAM_DUMP_ALL PAT_ENABLE PROFILER_PLUGIN
    PROGRESS_APPENDOP_FREQ PROTO PROXY_APPEND_BATCH_SIZE PROXY_CPUSET PROXY_DUMP_SIGNAL PXN_C2C
    PXN_DISABLE RAS_ADDR RAS_ENABLE RAS_TIMEOUT_FACTOR REPORT_CONNECT_PROGRESS RMA_DISABLE
    RMA_PLUGIN RMA_PLUGIN_REF_COUNT RMA_PROXY_DUMP_SIGNAL RMA_PROXY_QUEUE_SIZE RUNTIME_CONNECT
    SET_CPU_STACK_SIZE SET_STACK_SIZE SET_THREAD_NAME SHADOW_MEMPOOL_MAX_SIZE SHM_DISABLE
    SHM_LOCALITY SINGLE_PROC_MEM_REG_ENABLE SOCKET_FAMILY SOCKET_IFNAME SOCKET_INLINE
    SOCKET_MAGIC SOCKET_MIN_TASKSIZE SOCKET_NTHREADS SOCKET_POLL_TIMEOUT_MSEC SOCKET_RCVBUF
    SOCKET_RETRY_CNT SOCKET_RETRY_SLEEP_MSEC SOCKET_SNDBUF SYM_CE_THRESHOLD SYM_CTAS
    SYM_GIN_KERNELS_ENABLE SYM_KERNEL SYM_NOWIN_ENABLE SYM_REUSE_SYSMEM_HANDLES
    SYM_RS_GIN_CHUNK_SIZE SYM_TMA_ENABLE THREAD_THRESHOLDS TOPO_DUMP_FILE TOPO_DUMP_FILE_RANK
    TOPO_FILE TOPO_SPLIT_MLOPART TUNER_PLUGIN UID_STAGGER_RATE UID_STAGGER_THRESHOLD
    UNPACK_DOUBLE_NCHANNELS WARN_ENABLE_DEBUG_INFO WIN_ENABLE WIN_STRIDE WORK_ARGS_BYTES
    WORK_FIFO_BYTES
"""
NCCL_2_30_7 = tuple("NCCL_" + key for key in _KEYS_2_30_7.split())
MIRROR = Path("/work/.mirror/NVIDIA+nccl/repo")


def test_every_name_nccl_2_30_7_reads_is_in_the_catalog() -> None:
    assert len(NCCL_2_30_7) == 245
    missing = [name for name in NCCL_2_30_7 if lookup(name) is None]
    assert missing == []


def test_names_only_read_by_source_are_marked_undocumented() -> None:
    for name in ("NCCL_NVTX_DISABLE", "NCCL_GIN_TYPE", "NCCL_IB_RESILIENCY_PORT_RECOVERY"):
        var = lookup(name)
        assert var is not None and not var.documented, name
        assert var.notes[0] == "Not on the environment-variable page; facts from source."
    resiliency = lookup("NCCL_IB_RESILIENCY_PORT_FAILOVER")
    assert resiliency is not None and resiliency.since == "2.29.7" and resiliency.default == "0"
    dead = lookup("NCCL_GRAPH_HELPER_DISABLE")
    assert dead is not None and any("no code calls it" in note for note in dead.notes)
    assert lookup("NCCL_IB_HCA") is not None and lookup("NCCL_IB_HCA").documented  # type: ignore[union-attr]


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no clone of NVIDIA/nccl beside this checkout")
def test_the_list_matches_the_tag() -> None:
    tag = "v2.30.7-1"
    pattern = (
        r'"NCCL_[A-Z0-9_]+"|NCCL_PARAM\(\s*\w+\s*,\s*"[A-Z0-9_]+"'
        r"|DEFINE_NCCL_PARAM\(\s*\w+\s*,\s*[^,]+,\s*NCCL_[A-Z0-9_]+"
    )
    try:
        out = subprocess.run(
            ["git", "-C", str(MIRROR), "grep", "-h", "-o", "-E", pattern, tag, "--", "src"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        pytest.skip("the clone cannot be read")
    found = set()
    for line in out.splitlines():
        if m := re.search(r'^NCCL_PARAM\(\s*\w+\s*,\s*"([A-Z0-9_]+)"', line):
            found.add("NCCL_" + m.group(1))
            continue
        m = re.search(r"DEFINE_NCCL_PARAM\(\s*\w+\s*,\s*[^,]+,\s*(NCCL_[A-Z0-9_]+)", line)
        m = m or re.search(r'"(NCCL_[A-Z0-9_]+)"', line)
        if m:
            found.add(m.group(1))
    not_variables = {"NCCL_COMM_PROPERTIES_INITIALIZER", "NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER",
                     "NCCL_GIN_CONNECTION_RAIL", "NCCL_USE_CMAKE"}  # fmt: skip
    assert found - not_variables == set(NCCL_2_30_7)


# ------------------------------------------------------------------ not NCCL's names


@pytest.mark.parametrize(
    "name",
    ["NCCL_VERSION", "NCCL_HOME", "NCCL_ROOT", "NCCL_LIB_DIR", "NCCL_INCLUDE_DIR",
     "NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_DESYNC_DEBUG"],
)  # fmt: skip
def test_names_set_by_images_and_frameworks(name: str) -> None:
    assert foreign(name) is not None and lookup(name) is None and suggest(name) is None


def test_foreign_and_catalog_do_not_overlap() -> None:
    assert set(FOREIGN) & set(catalog()) == set()


# ------------------------------------------------------------------ did you mean


@pytest.mark.parametrize(
    "name",
    # real variables: never renamed into their neighbours (NVTX_DISABLE ~ NVB_DISABLE)
    ["NCCL_NVTX_DISABLE", "NCCL_P2P_MAX_PEERS", "NCCL_GIN_TYPE", "NCCL_IB_SL", "NCCL_IB_TC",
     # unknown and not close enough to anything, or close to two names at once
     "NCCL_FOO", "NCCL_IB_TIMEOUTS;touch /tmp/x", "NCCL_SOCKET_IF"],
)  # fmt: skip
def test_no_suggestion(name: str) -> None:
    assert suggest(name) is None


# ------------------------------------------------------------------ integers as strtoll


@pytest.mark.parametrize(
    ("text", "value"),
    [(" 22", 22), ("\t-3", -3), ("0x", 0), ("08", 0), ("--5", 0), ("²", 0), ("\u2003" + "5", 0),
     ("99999999999999999999", (1 << 63) - 1), ("-99999999999999999999", -(1 << 63))],
)  # fmt: skip
def test_strtoll_edges(text: str, value: int) -> None:
    assert strtoll(text) == value


def test_nccl_int_is_ncclloadparam() -> None:
    """ncclLoadParam (src/misc/param.cc): unset or empty -> default; ERANGE -> default."""
    assert nccl_int(None, 7) == 7 and nccl_int("", 7) == 7
    assert nccl_int("99999999999999999999", 7) == 7 and nccl_int("x", 7) == 0


@pytest.mark.parametrize(
    ("name", "value", "message", "severity"),
    [
        ("NCCL_IB_TIMEOUT", "99999999999999999999", "ERANGE", "fail"),
        ("NCCL_IB_TIMEOUT", "²", "NCCL reads '²' as 0", "fail"),
        ("NCCL_IB_TIMEOUT", "08", "octal, 0", "fail"),
        ("NCCL_IB_TIMEOUT", "", "empty", "warn"),
        ("NCCL_NTHREADS", "96", "not one of 64, 128, 256, 512", "fail"),
        ("NCCL_IB_SL", "-2", "below the minimum -1", "fail"),
        ("NCCL_SOCKET_FAMILY", "AF_INET ", "white space", "fail"),
        ("NCCL_SOCKET_FAMILY", "af_inet", "not AF_INET or AF_INET6", "fail"),
        ("NCCL_IB_ADDR_FAMILY", "inet6", "NCCL uses AF_INET", "fail"),
        ("NCCL_DEBUG", "INFO ", "before 2.30.7 ignores", "warn"),
        ("NCCL_NET_MERGE_LEVEL", "pix", "case-sensitively", "fail"),
        ("NCCL_NET_GDR_LEVEL", " PHB", "white space", "fail"),
        ("NCCL_IB_HCA", "mlx5_0:1:2:3:4", "ignores ':4'", "fail"),
        ("NCCL_IB_HCA", "mlx5_0, mlx5_1", "white space", "fail"),
        ("NCCL_IB_HCA", "^=", "excludes everything", "fail"),
        ("NCCL_IB_HCA", ":1", "as if it were unset", "warn"),
        ("NCCL_SOCKET_IFNAME", "", "empty", "warn"),
        ("NCCL_IB_ADDR_RANGE", "10.0.0.0/33", "NCCL ignores it", "fail"),
        ("NCCL_IB_ADDR_RANGE", "garbage", "NCCL ignores it", "fail"),
        ("NCCL_IB_DISABLE", "2", "any non-zero as 1", "warn"),
    ],
)
def test_values_as_nccl_reads_them(name: str, value: str, message: str, severity: str) -> None:
    result = validate(name, value)
    assert not result.ok and message in result.message and result.severity == severity


@pytest.mark.parametrize(
    ("name", "value"),
    [("NCCL_IB_SL", "-1"), ("NCCL_IB_TC", "-1"), ("NCCL_NTHREADS", "256"),
     ("NCCL_IB_GID_INDEX", "-5"), ("NCCL_IB_GID_INDEX", "0x3"), ("NCCL_IB_TIMEOUT", "03"),
     ("NCCL_IB_HCA", "mlx5_0:1:0:1"), ("NCCL_IB_ADDR_RANGE", "fd00::/8"),
     ("NCCL_IB_ADDR_RANGE", "10.0.0.0/-1"), ("NCCL_NET_MERGE_LEVEL", "PIX"),
     ("NCCL_PARAM_DUMP_ALL", "true")],
)  # fmt: skip
def test_values_nccl_accepts(name: str, value: str) -> None:
    assert validate(name, value).ok, validate(name, value)


def test_sl_and_tc_accept_minus_one_since_2_26() -> None:
    """connect.cc v2.26.2: NCCL_PARAM(IbSl, "IB_SL", -1), 'ncclParamIbSl() != -1 ? ...'."""
    for name in ("NCCL_IB_SL", "NCCL_IB_TC"):
        var = lookup(name)
        assert var is not None and var.minimum == -1 and any("2.26" in n for n in var.notes)


# ------------------------------------------------------------------ lists and ranges


def test_empty_lists_as_match_if_list_reads_them() -> None:
    assert parse_list("").selects_all and parse_list(":1").selects_all
    assert parse_list("^").selects_none and parse_list("^=").selects_none
    assert not parse_list("^=").matches("eth0") and parse_list("=").matches("eth0")


def test_address_ranges_as_env_ib_addr_range_reads_them() -> None:
    assert parse_addr_range("10.0.0.0/8", "AF_INET") == (0x0A000000, 8)
    assert parse_addr_range("10.0.0.0", "AF_INET") is None  # no '/'
    assert parse_addr_range("fd00::/8", "AF_INET") is None  # not AF_INET
    assert parse_addr_range("fd00::/129", "AF_INET6") is None
    assert parse_addr_range("10.0.0.0/x", "AF_INET") == (0x0A000000, 0)  # strtol: 0, all
