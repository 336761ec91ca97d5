"""NCCL environment variables: the catalog's data, one :class:`NcclVar` per variable.

Where the facts come from:

- NCCL's "Environment Variables" page,
  https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html, read as its source
  ``docs/userguide/source/env.rst`` in NVIDIA/nccl at tag v2.30.7-1
  (commit 73cf112295c33aee2b895f329f592f2a9b4b0f97; identical at master 5067397c2676, June 2026),
  plus ``docs/userguide/source/troubleshooting/performance_and_tuning.rst`` for NCCL_CHUNK_SIZE.
- NVIDIA/nccl source at the same tag: ``NCCL_PARAM(...)`` / ``DEFINE_NCCL_PARAM(...)``
  definitions and ``ncclGetEnv()`` / ``getenv()`` call sites under ``src/`` (chiefly
  ``src/misc/param.cc``, ``src/misc/socket.cc``, ``src/transport/net_socket.cc``,
  ``src/transport/net_ib/{init,connect,common,p2p}.cc``, ``src/transport/{net,p2p,shm,nvls}.cc``,
  ``src/graph/{paths,search,topo,tuning,connect}.cc``, ``src/init.cc``, ``src/enqueue.cc``,
  ``src/debug.cc``).
- Every release tag of NVIDIA/nccl from v2.3.5-5 to v2.30.7-1, compared with ``git grep``, for
  when a variable first appears, when it stops being read and when its default changed.

Conventions:

- ``doc`` is the anchor Sphinx generates from the section title (lower case, ``_`` to ``-``);
  variables without a section on that page link to the page itself and say so in ``notes``.
- ``since`` is the docs' "(since ...)" release; where the docs are silent or contradicted by the
  source, it is the first release tag whose ``src/`` reads the variable (stated in ``notes``);
  None when the docs are silent and the oldest public tag (v2.3.5-5) already reads it.
- ``default`` is the value documented (checked against the 2.30.7 source); None when NCCL decides
  at run time or leaves the feature unset. Earlier defaults are in ``notes``.
- ``debug_only`` is True for every variable in the page's "Debugging" section, which NCCL says
  should not be set in production, and for NCCL_CHUNK_SIZE; variables the docs do not describe
  are False.
- ``source`` is the file of v2.30.7-1 that defines or reads the variable; for variables no longer
  read, the file of the last release that read them; None when no public release reads them.
- ``minimum`` / ``maximum`` come from the docs or from limits enforced in the source.
- NCCL parses integer variables with ``strtoll(value, NULL, 0)``: ``0x`` hexadecimal and
  leading-zero octal are accepted and trailing text is ignored. Variables read through
  ``ncclGetEnv`` may also come from ``NCCL_CONF_FILE`` (or ``~/.nccl.conf``) and
  ``/etc/nccl.conf``; a value already in the environment always wins.
"""

from hpnet.nccl.model import DOC_URL, Kind, NcclVar

__all__ = ["VARIABLES"]

VARIABLES: tuple[NcclVar, ...] = (
    NcclVar(
        name="NCCL_ALGO",
        kind=Kind.ENUM_LIST,
        summary="Restricts which collective algorithms NCCL may choose.",
        default=None,
        since="2.5",
        doc=f"{DOC_URL}#nccl-algo",
        source="src/graph/tuning.cc",
        debug_only=True,
        choices=("Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"),
        notes=(
            "Case-insensitive; a leading '^' excludes the listed algorithms.",
            (
                "CollNet was one name in 2.5 to 2.13, split into CollNetChain and CollNetDirect in "
                "2.14; NVLS since 2.17, NVLSTree since 2.18, PAT since 2.23."
            ),
            (
                "Since 2.24 per-function lists are accepted ('ring;allreduce:tree,collnetdirect'), "
                "unknown tokens are errors, and there is no implicit fallback to Ring."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_ALLOC_P2P_NET_LL_BUFFERS",
        kind=Kind.BOOL,
        summary=(
            "Gives every network send/receive connection its own LL buffers so small messages can "
            "use LL."
        ),
        default="0",
        since="2.16.5",
        doc=f"{DOC_URL}#nccl-alloc-p2p-net-ll-buffers",
        source="src/init.cc",
        debug_only=True,
        notes=(
            (
                "The docs say 2.14, but 2.14.3 to 2.16.2 read the misspelled name "
                "NCCL_NCCL_ALLOC_P2P_NET_LL_BUFFERS; the documented name works since 2.16.5."
            ),
            "Memory use grows with the number of remote peers.",
        ),
    ),
    NcclVar(
        name="NCCL_BUFFSIZE",
        kind=Kind.SIZE,
        summary=(
            "Size in bytes of the buffers NCCL uses between each pair of GPUs (Simple protocol)."
        ),
        default="4194304",
        since=None,
        doc=f"{DOC_URL}#nccl-buffsize",
        source="src/init.cc",
        debug_only=True,
        minimum=1,
        notes=("Powers of two are recommended.",),
    ),
    NcclVar(
        name="NCCL_CGA_CLUSTER_SIZE",
        kind=Kind.INT,
        summary=(
            "Thread-block cluster size for NCCL kernels on sm90 and later; overrides "
            "cgaClusterSize."
        ),
        default=None,
        since="2.15.1",
        doc=f"{DOC_URL}#nccl-cga-cluster-size",
        source="src/init.cc",
        debug_only=True,
        minimum=0,
        maximum=8,
        notes=("The docs say 2.16; the variable is already read by v2.15.1-1.",),
    ),
    # Known from the docs only: no public release (v2.3.5-5 onward) reads it.
    NcclVar(
        name="NCCL_CHECKS_DISABLE",
        kind=Kind.BOOL,
        summary="Old switch that skipped argument checks on every collective call.",
        default="0",
        since="2.0.5",
        doc=f"{DOC_URL}#nccl-checks-disable",
        debug_only=True,
        notes=(
            (
                "Deprecated in 2.2.12; not read by any release in the public repository (v2.3.5-5 "
                "onward)."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_CHECK_MODE",
        kind=Kind.ENUM,
        summary="How NCCL checks call arguments: not at all, locally, or globally across ranks.",
        default="DEFAULT",
        since="2.29.7",
        doc=f"{DOC_URL}#nccl-check-mode",
        source="src/init.cc",
        debug_only=True,
        choices=("DEFAULT", "DEBUG_LOCAL", "DEBUG_GLOBAL"),
    ),
    NcclVar(
        name="NCCL_CHECK_POINTERS",
        kind=Kind.BOOL,
        summary="Checks the CUDA pointers passed to every collective call.",
        default="0",
        since="2.2.12",
        doc=f"{DOC_URL}#nccl-check-pointers",
        source="src/init.cc",
        debug_only=True,
        notes=("Deprecated in 2.29.7 in favour of NCCL_CHECK_MODE=DEBUG_LOCAL.",),
    ),
    NcclVar(
        name="NCCL_CHUNK_SIZE",
        kind=Kind.SIZE,
        summary=(
            "Size in bytes of the network messages used for send/receive and all-to-all operations."
        ),
        default=None,
        since="2.12.7",
        doc=DOC_URL,
        source="src/enqueue.cc",
        debug_only=True,
        minimum=0,
        notes=(
            (
                "Listed only in the user guide's performance-tuning page, which discourages "
                "production use."
            ),
            "0 (the source default) leaves the size to NCCL.",
        ),
    ),
    NcclVar(
        name="NCCL_COLLNET_ENABLE",
        kind=Kind.BOOL,
        summary="Enables the CollNet (in-network reduction) plugin path.",
        default="0",
        since="2.6",
        doc=f"{DOC_URL}#nccl-collnet-enable",
        source="src/init.cc",
    ),
    NcclVar(
        name="NCCL_COLLNET_NODE_THRESHOLD",
        kind=Kind.INT,
        summary="Minimum node count for NCCL to use CollNet.",
        default="2",
        since="2.9.9",
        doc=f"{DOC_URL}#nccl-collnet-node-threshold",
        source="src/init.cc",
    ),
    NcclVar(
        name="NCCL_COMM_BLOCKING",
        kind=Kind.BOOL,
        summary=(
            "Makes all communicators blocking (1) or non-blocking (0), overriding their config."
        ),
        default=None,
        since="2.14",
        doc=f"{DOC_URL}#nccl-comm-blocking",
        source="src/init.cc",
        debug_only=True,
        notes=("Unset: the communicator's blocking config, which defaults to blocking.",),
    ),
    NcclVar(
        name="NCCL_COMM_ID",
        kind=Kind.STRING,
        summary=(
            "Fixes the address of the bootstrap root as host:port so ranks can meet without "
            "exchanging a unique id."
        ),
        default=None,
        since=None,
        doc=DOC_URL,
        source="src/bootstrap.cc",
        notes=(
            "Format <ipv4>:<port>, [<ipv6>]:<port> or <hostname>:<port>.",
            (
                "Also steers automatic interface choice: with no ib* interface NCCL prefers one in "
                "the same subnet as this address."
            ),
            "Cannot be combined with several ncclUniqueIds; only the first is used.",
            "Not on the environment-variable page; facts from source.",
        ),
    ),
    NcclVar(
        name="NCCL_CONF_FILE",
        kind=Kind.PATH,
        summary="Names a KEY=VALUE file of NCCL settings read in place of ~/.nccl.conf.",
        default=None,
        since="2.23",
        doc=f"{DOC_URL}#nccl-conf-file",
        source="src/misc/param.cc",
        notes=(
            "Before 2.23, or when unset, NCCL reads ~/.nccl.conf; /etc/nccl.conf is read after it.",
            (
                "Files never override a variable already in the environment, and the first file "
                "read wins over /etc/nccl.conf."
            ),
            "'~' is not expanded; read with getenv() from the process environment only.",
        ),
    ),
    NcclVar(
        name="NCCL_CROSS_NIC",
        kind=Kind.INT,
        summary=(
            "Whether rings and trees may use different NICs on different nodes: 0 never, 1 allowed,"
            " 2 when faster."
        ),
        default="2",
        since="2.5.6",
        doc=f"{DOC_URL}#nccl-cross-nic",
        source="src/graph/search.cc",
        minimum=0,
        maximum=2,
        notes=(
            "0 suits rail-optimized fabrics; 1 suits fabrics where all NICs reach one switch.",
            "The docs give no release; first tagged source reading it is v2.5.6-1.",
        ),
    ),
    NcclVar(
        name="NCCL_CTA_POLICY",
        kind=Kind.STRING,
        summary=(
            "CTA policy for the communicator: DEFAULT, EFFICIENCY or ZERO, combinable with '|'."
        ),
        default=None,
        since="2.27",
        doc=f"{DOC_URL}#nccl-cta-policy",
        source="src/init.cc",
        notes=(
            "Legacy single digits 0, 1, 2 since 2.27; names and '|' combinations since 2.29.",
            "Unset: the communicator's CTAPolicy config, else DEFAULT.",
        ),
    ),
    NcclVar(
        name="NCCL_CUMEM_ENABLE",
        kind=Kind.BOOL,
        summary="Allocates NCCL's GPU memory with the CUDA cuMem* virtual memory API.",
        default=None,
        since="2.18",
        doc=f"{DOC_URL}#nccl-cumem-enable",
        source="src/misc/cudawrap.cc",
        debug_only=True,
        notes=("Default 0 in 2.18; since 2.19 enabled automatically when the system supports it.",),
    ),
    NcclVar(
        name="NCCL_CUMEM_HOST_ENABLE",
        kind=Kind.BOOL,
        summary="Allocates NCCL's host memory with the CUDA cuMem* API.",
        default=None,
        since="2.23",
        doc=f"{DOC_URL}#nccl-cumem-host-enable",
        source="src/misc/cudawrap.cc",
        debug_only=True,
        notes=(
            (
                "Default 0 in 2.23; since 2.24 1 when CUDA driver >= 12.6, runtime >= 12.2 and "
                "cuMem host allocations work."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_DEBUG",
        kind=Kind.ENUM,
        summary="Verbosity of NCCL's log: VERSION, WARN, INFO, ABORT or TRACE.",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-debug",
        source="src/debug.cc",
        choices=("VERSION", "WARN", "INFO", "ABORT", "TRACE"),
        notes=(
            "Unset: nothing is printed.",
            (
                "ABORT is accepted by the source but not listed in the docs; TRACE output needs a "
                "build with tracing enabled."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_DEBUG_FILE",
        kind=Kind.PATH,
        summary=(
            "File that receives NCCL's log instead of stdout; %h becomes the host name and %p the "
            "pid."
        ),
        default=None,
        since="2.2.12",
        doc=f"{DOC_URL}#nccl-debug-file",
        source="src/debug.cc",
        notes=(
            "An existing file is overwritten; use a name unique per process.",
            "/dev/stdout or /dev/stderr give line-buffered output; '~' is not expanded.",
        ),
    ),
    NcclVar(
        name="NCCL_DEBUG_SUBSYS",
        kind=Kind.ENUM_LIST,
        summary=(
            "Which subsystems' INFO messages are printed; a leading '^' excludes the listed ones."
        ),
        default="INIT,BOOTSTRAP,ENV",
        since="2.3.4",
        doc=f"{DOC_URL}#nccl-debug-subsys",
        source="src/debug.cc",
        choices=(
            "INIT",
            "COLL",
            "P2P",
            "SHM",
            "NET",
            "GRAPH",
            "TUNING",
            "ENV",
            "ALLOC",
            "ALLOC_HOST",
            "CALL",
            "PROXY",
            "NVLS",
            "BOOTSTRAP",
            "REG",
            "PROFILE",
            "RAS",
            "DESTROY",
            "ALL",
        ),
        notes=(
            (
                "Default INIT up to 2.16.2, INIT,ENV from 2.16.5 to 2.22, INIT,BOOTSTRAP,ENV since "
                "2.23 (source tags)."
            ),
            "Names of 2.30.7; older releases know fewer subsystems.",
        ),
    ),
    NcclVar(
        name="NCCL_DEBUG_TIMESTAMP_FORMAT",
        kind=Kind.STRING,
        summary=(
            "strftime format of the timestamp prefix on log lines; '%<digit>f' adds fractions of a "
            "second."
        ),
        default="[%F %T] ",
        since="2.26",
        doc=f"{DOC_URL}#nccl-debug-timestamp-format",
        source="src/debug.cc",
        notes=(
            "Underscores are printed as spaces; an empty value removes the timestamp.",
            "Times are local; set TZ to change the zone.",
        ),
    ),
    NcclVar(
        name="NCCL_DEBUG_TIMESTAMP_LEVELS",
        kind=Kind.ENUM_LIST,
        summary="Which log levels get a timestamp prefix.",
        default="WARN",
        since="2.26",
        doc=f"{DOC_URL}#nccl-debug-timestamp-levels",
        source="src/debug.cc",
        choices=("VERSION", "WARN", "INFO", "ABORT", "TRACE", "ALL"),
        notes=("A leading '^' inverts the list; an empty value turns timestamps off.",),
    ),
    NcclVar(
        name="NCCL_DMABUF_ENABLE",
        kind=Kind.BOOL,
        summary="Registers GPU buffers for GPUDirect RDMA through Linux dma-buf.",
        default="1",
        since="2.13",
        doc=f"{DOC_URL}#nccl-dmabuf-enable",
        source="src/init.cc",
        debug_only=True,
        notes=("Silently off when the kernel, CUDA or NIC driver lacks support.",),
    ),
    NcclVar(
        name="NCCL_ENV_PLUGIN",
        kind=Kind.STRING,
        summary=(
            "Picks the environment plugin library that supplies NCCL's settings: a file name, a "
            "suffix for libnccl-env-<suffix>.so, or none."
        ),
        default=None,
        since="2.28",
        doc=f"{DOC_URL}#nccl-env-plugin",
        source="src/plugin/env.cc",
        notes=(
            "Unset: libnccl-env.so if present, otherwise the built-in environment reader.",
            "Read with getenv() from the process environment only, not from nccl.conf files.",
        ),
    ),
    NcclVar(
        name="NCCL_GDRCOPY_ENABLE",
        kind=Kind.BOOL,
        summary="Uses the GDRCopy library to map GPU memory for CPU access by NCCL's proxy.",
        default="0",
        since="2.9.6",
        doc=DOC_URL,
        source="src/init.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GDRCOPY_FIFO_ENABLE",
        kind=Kind.BOOL,
        summary="With GDRCopy enabled, keeps the kernel work FIFO in GDRCopy-mapped GPU memory.",
        default="1",
        since="2.9.6",
        doc=DOC_URL,
        source="src/init.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GDRCOPY_FLUSH_ENABLE",
        kind=Kind.BOOL,
        summary="With GDRCopy enabled, flushes GPUDirect RDMA receives through a GDRCopy mapping.",
        default="0",
        since="2.9.6",
        doc=DOC_URL,
        source="src/transport/net.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GDRCOPY_SYNC_ENABLE",
        kind=Kind.BOOL,
        summary=(
            "With GDRCopy enabled, keeps network proxy synchronization flags in GDRCopy-mapped GPU "
            "memory."
        ),
        default="1",
        since="2.12.7",
        doc=DOC_URL,
        source="src/transport/net.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GDR_FLUSH_DISABLE",
        kind=Kind.BOOL,
        summary="Skips the extra RDMA read NCCL issues to flush GPUDirect RDMA receives.",
        default="0",
        since=None,
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GRAPH_DUMP_FILE",
        kind=Kind.PATH,
        summary="File to which NCCL writes the ring/tree graphs it chose.",
        default=None,
        since="2.6.4",
        doc=DOC_URL,
        source="src/graph/search.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Written by the rank given in NCCL_GRAPH_DUMP_FILE_RANK (default 0).",
        ),
    ),
    NcclVar(
        name="NCCL_GRAPH_DUMP_FILE_RANK",
        kind=Kind.INT,
        summary="Rank that writes NCCL_GRAPH_DUMP_FILE.",
        default="0",
        since="2.6.4",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GRAPH_FILE",
        kind=Kind.PATH,
        summary="XML file of ring/tree graphs that NCCL loads instead of searching for them.",
        default=None,
        since="2.6.4",
        doc=DOC_URL,
        source="src/graph/search.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_GRAPH_MIXING_SUPPORT",
        kind=Kind.BOOL,
        summary=(
            "Supports NCCL calls from parallel CUDA graphs, or graphs mixed with uncaptured calls, "
            "on one communicator."
        ),
        default="1",
        since="2.13",
        doc=f"{DOC_URL}#nccl-graph-mixing-support",
        source="src/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_GRAPH_REGISTER",
        kind=Kind.BOOL,
        summary="Registers user buffers for collectives captured in CUDA graphs.",
        default="1",
        since="2.11",
        doc=f"{DOC_URL}#nccl-graph-register",
        source="src/enqueue.cc",
        debug_only=True,
        notes=("Source default 0 from 2.11 to 2.18, 1 since 2.19.",),
    ),
    NcclVar(
        name="NCCL_GRAPH_STREAM_ORDERING",
        kind=Kind.BOOL,
        summary=(
            "Keeps NCCL's serialization of communication kernels during CUDA graph capture (1) or "
            "leaves ordering to the application (0)."
        ),
        default="1",
        since="2.30",
        doc=f"{DOC_URL}#nccl-graph-stream-ordering",
        source="src/enqueue.cc",
        debug_only=True,
        notes=("0 must not be combined with graph mixing (graphUsageMode 2).",),
    ),
    NcclVar(
        name="NCCL_HOSTID",
        kind=Kind.STRING,
        summary="Overrides the host identity NCCL uses to decide which ranks share a machine.",
        default=None,
        since="2.5.6",
        doc=DOC_URL,
        source="src/misc/utils.cc",
        notes=(
            "Unset: the hostname plus /proc/sys/kernel/random/boot_id.",
            "Ranks with different values are treated as different hosts (network between them).",
            "Not on the environment-variable page; facts from source.",
        ),
    ),
    NcclVar(
        name="NCCL_IBVERBS_LIB",
        kind=Kind.PATH,
        summary=(
            "Names the libibverbs library NCCL should dlopen before trying libibverbs.so and "
            "libibverbs.so.1."
        ),
        default=None,
        since="2.30.3",
        doc=DOC_URL,
        source="src/misc/ibvsymbols.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_ADAPTIVE_ROUTING",
        kind=Kind.BOOL,
        summary="Uses adaptive-routing capable transfers on the IB verbs transport.",
        default=None,
        since="2.16",
        doc=f"{DOC_URL}#nccl-ib-adaptive-routing",
        source="src/transport/net_ib/init.cc",
        debug_only=True,
        notes=(
            "Automatic: on for InfiniBand, off for RoCE.",
            "Needs an SL that the fabric routes adaptively (NCCL_IB_SL).",
        ),
    ),
    NcclVar(
        name="NCCL_IB_ADDR_FAMILY",
        kind=Kind.ADDR_FAMILY,
        summary="Address family of the RoCE GID that NCCL picks when NCCL_IB_GID_INDEX is unset.",
        default="AF_INET",
        since="2.21",
        doc=f"{DOC_URL}#nccl-ib-addr-family",
        source="src/transport/net_ib/connect.cc",
        notes=("Compared case-sensitively; other values leave AF_INET in place.",),
    ),
    NcclVar(
        name="NCCL_IB_ADDR_RANGE",
        kind=Kind.STRING,
        summary="CIDR range that an automatically picked RoCE GID must fall into.",
        default=None,
        since="2.21",
        doc=f"{DOC_URL}#nccl-ib-addr-range",
        source="src/transport/net_ib/connect.cc",
        notes=("Unset: no range restriction; the family should match NCCL_IB_ADDR_FAMILY.",),
    ),
    NcclVar(
        name="NCCL_IB_AR_THRESHOLD",
        kind=Kind.SIZE,
        summary=(
            "Message size in bytes above which IB data goes in a separate message that can use "
            "adaptive routing."
        ),
        default="8192",
        since="2.6",
        doc=f"{DOC_URL}#nccl-ib-ar-threshold",
        source="src/transport/net_ib/p2p.cc",
        debug_only=True,
        minimum=0,
        notes=(
            "A value above NCCL_BUFFSIZE disables adaptive-routing sends altogether.",
            "Ignored when NCCL_IB_OOO_RQ is enabled.",
        ),
    ),
    NcclVar(
        name="NCCL_IB_CUDA_SUPPORT",
        kind=Kind.BOOL,
        summary="Old switch forcing (1) or disabling (0) GPUDirect RDMA on IB.",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-ib-cuda-support",
        source="src/transport/net_ib.cu",
        debug_only=True,
        notes=("Removed in 2.4.0 (last read by v2.3.7-1); use NCCL_NET_GDR_LEVEL.",),
    ),
    # Meaning of value 2 read from source only (exposes the NIC through both paths).
    NcclVar(
        name="NCCL_IB_DATA_DIRECT",
        kind=Kind.INT,
        summary=(
            "Uses the mlx5 Data Direct DMA path of a NIC when it has one: 0 off, 1 on, 2 exposes "
            "both paths."
        ),
        default="1",
        since="2.27.3",
        doc=DOC_URL,
        source="src/transport/net_ib/init.cc",
        minimum=0,
        maximum=2,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_DEVICE_PCI_ORDER",
        kind=Kind.BOOL,
        summary="Sorts IB devices by PCI address so every node enumerates them in the same order.",
        default="1",
        since="2.29.7",
        doc=DOC_URL,
        source="src/transport/net_ib/init.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_DISABLE",
        kind=Kind.BOOL,
        summary=(
            "Turns off NCCL's InfiniBand/RoCE verbs transport so it falls back to sockets or a "
            "plugin."
        ),
        default="0",
        since=None,
        doc=f"{DOC_URL}#nccl-ib-disable",
        source="src/transport/net_ib/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_IB_ECE_ENABLE",
        kind=Kind.BOOL,
        summary=(
            "Uses Enhanced Connection Establishment so the HCAs can negotiate features such as "
            "congestion control."
        ),
        default="1",
        since="2.23",
        doc=f"{DOC_URL}#nccl-ib-ece-enable",
        source="src/transport/net_ib/connect.cc",
        debug_only=True,
    ),
    # Range 0-255 as for NCCL_IB_TC; the docs give none.
    NcclVar(
        name="NCCL_IB_FIFO_TC",
        kind=Kind.INT,
        summary="Separate traffic class for NCCL's small credit-return (FIFO) messages on RoCE.",
        default=None,
        since="2.22.3",
        doc=f"{DOC_URL}#nccl-ib-fifo-tc",
        source="src/transport/net_ib/connect.cc",
        minimum=0,
        maximum=255,
        notes=(
            (
                "Unset: the traffic class of the data (NCCL_IB_TC); the 2.22 source default was 0, "
                "since 2.24 it follows NCCL_IB_TC."
            ),
            "Only applied on Ethernet (RoCE) link layers.",
        ),
    ),
    NcclVar(
        name="NCCL_IB_GDR_LEVEL",
        kind=Kind.PATH_LEVEL,
        summary="Pre-2.4 name of NCCL_NET_GDR_LEVEL.",
        default=None,
        since="2.3.4",
        doc=f"{DOC_URL}#nccl-net-gdr-level-formerly-nccl-ib-gdr-level",
        source="src/transport/net_ib.cu",
        debug_only=True,
        renamed="NCCL_NET_GDR_LEVEL",
        notes=(
            (
                "Renamed in 2.4.0; later releases do not read the old name (last read by v2.3.7-1, "
                "as an integer)."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_IB_GID_INDEX",
        kind=Kind.INT,
        summary="RoCE GID table index NCCL uses; -1 lets NCCL pick one.",
        default="-1",
        since="2.1.4",
        doc=f"{DOC_URL}#nccl-ib-gid-index",
        source="src/transport/net_ib/connect.cc",
        notes=(
            "Default 0 before 2.21; -1 (automatic) since 2.21 (source: v2.21.5-1).",
            (
                "Read with strtoll(value, NULL, 0): 0x3 is 3. Since 2.21.5 any negative value "
                "means automatic (ncclIbGetGidIndex: 'if (*gidIndex >= 0) return')."
            ),
            (
                "Automatic choice prefers a valid GID of NCCL_IB_ADDR_FAMILY within "
                "NCCL_IB_ADDR_RANGE and of RoCE version NCCL_IB_ROCE_VERSION_NUM."
            ),
            (
                "InfiniBand ports are routed by LID and never use it (ncclIbRtrQp sets a GID only "
                "on Ethernet ports); since 2.22.3 NCCL no longer even reads it there, using "
                "index 0 or the routable-FLID index."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_IB_HCA",
        kind=Kind.HCA_LIST,
        summary="Chooses which RDMA devices and ports NCCL may use.",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-ib-hca",
        source="src/transport/net_ib/init.cc",
        notes=(
            (
                "Entries <hca>[:<port>[:<rail>[:<plane>]]]; the rail and plane fields exist since "
                "2.29.7 (source)."
            ),
            (
                "Prefix match unless the list starts with '=' (after an optional '^'): mlx5_1 also "
                "selects mlx5_10 to mlx5_19."
            ),
            "Unset: every usable device and active port; at most 32 devices.",
        ),
    ),
    NcclVar(
        name="NCCL_IB_MERGE_NICS",
        kind=Kind.BOOL,
        summary="Fuses the ports of dual-port NICs into one logical NCCL network device.",
        default="1",
        since="2.20",
        doc=f"{DOC_URL}#nccl-ib-merge-nics",
        source="src/transport/net_ib/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_IB_MERGE_VFS",
        kind=Kind.BOOL,
        summary=(
            "Treats SR-IOV virtual functions of one physical NIC as the same PCI device when NCCL "
            "groups devices."
        ),
        default="1",
        since="2.18.1",
        doc=DOC_URL,
        source="src/transport/net_ib/init.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_MQP_RETRY_ALL",
        kind=Kind.BOOL,
        summary="Retries ibv_modify_qp on any error, not only on ETIMEDOUT.",
        default="0",
        since="2.24.3",
        doc=DOC_URL,
        source="src/misc/ibvwrap.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_MQP_RETRY_CNT",
        kind=Kind.INT,
        summary="How many times NCCL retries ibv_modify_qp after a timeout error.",
        default="34",
        since="2.24.3",
        doc=DOC_URL,
        source="src/misc/ibvwrap.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_MQP_RETRY_SLEEP_MSEC",
        kind=Kind.INT,
        summary=(
            "Base wait in milliseconds between ibv_modify_qp retries, growing linearly per attempt."
        ),
        default="100",
        since="2.24.3",
        doc=DOC_URL,
        source="src/misc/ibvwrap.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_OOO_RQ",
        kind=Kind.BOOL,
        summary=(
            "Lets receive work requests on the receiver's queue pairs be consumed out of order."
        ),
        default="0",
        since="2.30",
        doc=f"{DOC_URL}#nccl-ib-ooo-rq",
        source="src/transport/net_ib/init.cc",
        debug_only=True,
        notes=("Applied to mlx5 devices only (source).",),
    ),
    NcclVar(
        name="NCCL_IB_PCI_RELAXED_ORDERING",
        kind=Kind.INT,
        summary=(
            "PCIe relaxed ordering for IB memory registrations: 0 off, 1 required, 2 when "
            "available."
        ),
        default="2",
        since="2.12",
        doc=f"{DOC_URL}#nccl-ib-pci-relaxed-ordering",
        source="src/transport/net_ib/init.cc",
        debug_only=True,
        minimum=0,
        maximum=2,
        notes=("Helps IB performance in virtual machines.",),
    ),
    NcclVar(
        name="NCCL_IB_PKEY",
        kind=Kind.INT,
        summary="Partition key table index used on NCCL's IB queue pairs.",
        default="0",
        since="2.8.3",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_QPS_PER_CONNECTION",
        kind=Kind.INT,
        summary=(
            "Number of IB queue pairs per connection between two ranks, for more routing entropy."
        ),
        default="1",
        since="2.10",
        doc=f"{DOC_URL}#nccl-ib-qps-per-connection",
        source="src/transport/net_ib/connect.cc",
        debug_only=True,
        minimum=1,
        maximum=128,
        notes=("See NCCL_IB_SPLIT_DATA_ON_QPS for how messages are spread over them.",),
    ),
    NcclVar(
        name="NCCL_IB_RETRY_CNT",
        kind=Kind.INT,
        summary="Verbs retry count: how many times a send is retried before the connection fails.",
        default="7",
        since="2.1.15",
        doc=f"{DOC_URL}#nccl-ib-retry-cnt",
        source="src/transport/net_ib/connect.cc",
        minimum=0,
        maximum=7,
    ),
    NcclVar(
        name="NCCL_IB_RETURN_ASYNC_EVENTS",
        kind=Kind.BOOL,
        summary=(
            "Makes fatal asynchronous IB events stop NCCL's IB communication instead of only being "
            "logged."
        ),
        default="1",
        since="2.23",
        doc=f"{DOC_URL}#nccl-ib-return-async-events",
        source="src/transport/net_ib/common.cc",
    ),
    NcclVar(
        name="NCCL_IB_ROCE_VERSION_NUM",
        kind=Kind.INT,
        summary="RoCE version of the GID NCCL picks automatically when NCCL_IB_GID_INDEX is unset.",
        default="2",
        since="2.21",
        doc=f"{DOC_URL}#nccl-ib-roce-version-num",
        source="src/transport/net_ib/connect.cc",
        minimum=1,
        maximum=2,
    ),
    NcclVar(
        name="NCCL_IB_ROUTABLE_FLID_GID_INDEX",
        kind=Kind.INT,
        summary=(
            "GID index checked on InfiniBand ports for a routable FLID; used when it holds one, "
            "else index 0."
        ),
        default="1",
        since="2.22.3",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    # Range 0-15 is the width of the InfiniBand SL field; the docs give none.
    NcclVar(
        name="NCCL_IB_SL",
        kind=Kind.INT,
        summary="InfiniBand service level used on NCCL's queue pairs.",
        default="0",
        since="2.1.4",
        doc=f"{DOC_URL}#nccl-ib-sl",
        source="src/transport/net_ib/connect.cc",
        minimum=-1,
        maximum=15,
        notes=(
            (
                "Since 2.26 the source default is -1: use the communicator's trafficClass config "
                "when set, otherwise 0."
            ),
            (
                "-1 is accepted since 2.26 (connect.cc: 'ncclParamIbSl() != -1 ? ...'); older "
                "releases put it on the wire as is."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_IB_SPLIT_DATA_ON_QPS",
        kind=Kind.BOOL,
        summary=(
            "With several queue pairs, 1 splits every message across all of them, 0 uses them in "
            "round robin."
        ),
        default="0",
        since="2.18",
        doc=f"{DOC_URL}#nccl-ib-split-data-on-qps",
        source="src/transport/net_ib/common.cc",
        debug_only=True,
        notes=("Default 1 in 2.18 and 2.19, 0 since 2.20.",),
    ),
    # Behaviour summarised from source: connector looks for a local RoCE NIC on the listener's
    # subnet.
    NcclVar(
        name="NCCL_IB_SUBNET_AWARE_ROUTING",
        kind=Kind.BOOL,
        summary=(
            "On multi-subnet RoCE fabrics, connects from a local NIC on the same IP subnet as the "
            "remote NIC."
        ),
        default="0",
        since="2.30.7",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IB_SUBNET_PREFIX_LEN",
        kind=Kind.INT,
        summary=(
            "IPv4 prefix length that NCCL_IB_SUBNET_AWARE_ROUTING uses to decide that two GIDs "
            "share a subnet."
        ),
        default="24",
        since="2.30.7",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        minimum=1,
        maximum=32,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    # Range 0-255 is the width of the GRH traffic class field; the docs give none.
    NcclVar(
        name="NCCL_IB_TC",
        kind=Kind.INT,
        summary="Traffic class written into NCCL's RoCE/IB packets, used for QoS on the fabric.",
        default="0",
        since="2.1.15",
        doc=f"{DOC_URL}#nccl-ib-tc",
        source="src/transport/net_ib/connect.cc",
        minimum=-1,
        maximum=255,
        notes=(
            (
                "Since 2.26 the source default is -1: use the communicator's trafficClass config "
                "when set, otherwise 0."
            ),
            (
                "-1 is accepted since 2.26 (connect.cc: 'envTrafficClass != -1 ? ...'); older "
                "releases put it on the wire as is."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_IB_TIMEOUT",
        kind=Kind.INT,
        summary=(
            "Verbs local ACK timeout exponent: each retry waits 4.096 microseconds times 2^value."
        ),
        default="20",
        since=None,
        doc=f"{DOC_URL}#nccl-ib-timeout",
        source="src/transport/net_ib/connect.cc",
        minimum=0,
        maximum=31,
        notes=(
            "Default 14 up to 2.13, 18 from 2.14 to 2.22, 20 since 2.23 (docs and source tags).",
            (
                "0 means an infinite timeout; with the default 7 retries, 20 gives about 30 s "
                "before an error."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_IB_USE_INLINE",
        kind=Kind.BOOL,
        summary="Sends the IB transport's small control (FIFO) messages as inline work requests.",
        default="0",
        since="2.8.3",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    # Summary read from source only (warning in the fused-NIC connect path).
    NcclVar(
        name="NCCL_IB_WARN_RAIL_LOCAL",
        kind=Kind.BOOL,
        summary=(
            "Warns when a connection between fused NICs ends up with fewer matching rails than "
            "NICs."
        ),
        default="0",
        since="2.24.3",
        doc=DOC_URL,
        source="src/transport/net_ib/connect.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IGNORE_COLLNET_MISMATCH",
        kind=Kind.BOOL,
        summary=(
            "Keeps going (1) or fails initialization (0) when ranks see different numbers of "
            "CollNet devices."
        ),
        default="0",
        since="2.30",
        doc=f"{DOC_URL}#nccl-ignore-collnet-mismatch",
        source="src/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_IGNORE_CPU_AFFINITY",
        kind=Kind.BOOL,
        summary=(
            "Ignores the CPU affinity the job set and binds NCCL's threads by GPU affinity only."
        ),
        default="0",
        since="2.4.6",
        doc=f"{DOC_URL}#nccl-ignore-cpu-affinity",
        source="src/graph/topo.cc",
    ),
    NcclVar(
        name="NCCL_IGNORE_DISABLED_P2P",
        kind=Kind.INT,
        summary=(
            "Proceeds (1) instead of failing when NVML reports P2P disabled between NVLink-"
            "connected GPUs; 2 skips the NVML check."
        ),
        default="0",
        since="2.12.7",
        doc=DOC_URL,
        source="src/graph/paths.cc",
        minimum=0,
        maximum=2,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_IGNORE_NET_MISMATCH",
        kind=Kind.BOOL,
        summary=(
            "Keeps going (1) or fails initialization (0) when ranks see different numbers of "
            "network devices."
        ),
        default="1",
        since="2.30",
        doc=f"{DOC_URL}#nccl-ignore-net-mismatch",
        source="src/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_IPC_USE_ABSTRACT_SOCKET",
        kind=Kind.BOOL,
        summary=(
            "Uses Linux abstract Unix sockets to exchange CUDA IPC handles between local processes."
        ),
        default="1",
        since="2.29",
        doc=f"{DOC_URL}#nccl-ipc-use-abstract-socket",
        source="src/os/linux_ipcsocket.cc",
        debug_only=True,
        notes=("Turn off when containers in different network namespaces must share GPUs.",),
    ),
    NcclVar(
        name="NCCL_LAUNCH_MODE",
        kind=Kind.ENUM,
        summary="How NCCL launches kernels for processes driving several GPUs: PARALLEL or GROUP.",
        default="PARALLEL",
        since="2.1.0",
        doc=f"{DOC_URL}#nccl-launch-mode",
        source="src/init.cc",
        debug_only=True,
        choices=("PARALLEL", "GROUP"),
        notes=("GROUP (cooperative launch) is deprecated since 2.9.",),
    ),
    NcclVar(
        name="NCCL_LAUNCH_ORDER_IMPLICIT",
        kind=Kind.BOOL,
        summary=(
            "Orders NCCL operations of different communicators on one device by host program order."
        ),
        default="0",
        since="2.26",
        doc=f"{DOC_URL}#nccl-launch-order-implicit",
        source="src/enqueue.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_LAUNCH_RACE_FATAL",
        kind=Kind.BOOL,
        summary=(
            "Returns a fatal error when host threads race to launch NCCL work on the same device."
        ),
        default="1",
        since="2.26",
        doc=f"{DOC_URL}#nccl-launch-race-fatal",
        source="src/misc/strongstream.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_LEGACY_CUDA_REGISTER",
        kind=Kind.BOOL,
        summary=(
            "Allows registration of buffers from cudaMalloc, which can cause implicit syncs and "
            "hangs."
        ),
        default="0",
        since="2.24",
        doc=f"{DOC_URL}#nccl-legacy-cuda-register",
        source="src/transport/p2p.cc",
        debug_only=True,
    ),
    # Default computed from 2.30.7 constants (120 elements x 640 threads x 8 steps x 8 bytes).
    NcclVar(
        name="NCCL_LL128_BUFFSIZE",
        kind=Kind.SIZE,
        summary="Size in bytes of the LL128 protocol buffers.",
        default="4915200",
        since="2.7.3",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_LL128_NTHREADS",
        kind=Kind.INT,
        summary="CUDA threads per block for the LL128 protocol.",
        default="640",
        since="2.5.6",
        doc=DOC_URL,
        source="src/graph/tuning.cc",
        minimum=160,
        maximum=640,
        notes=(
            "Not on the environment-variable page; facts from source (2.30.7 limits).",
            "Must be a multiple of 32; out-of-range values are clamped.",
        ),
    ),
    # Default computed from 2.30.7 constants (8 lines x 512 threads x 8 steps x 16 bytes).
    NcclVar(
        name="NCCL_LL_BUFFSIZE",
        kind=Kind.SIZE,
        summary="Size in bytes of the LL protocol buffers.",
        default="524288",
        since="2.7.3",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_LL_THRESHOLD",
        kind=Kind.SIZE,
        summary="Old size limit under which NCCL used the low-latency protocol.",
        default=None,
        since="2.1",
        doc=f"{DOC_URL}#nccl-ll-threshold",
        source="src/init.cc",
        debug_only=True,
        notes=("Removed in 2.5 (last read by v2.4.8-1); use NCCL_PROTO.",),
    ),
    NcclVar(
        name="NCCL_LOCAL_REGISTER",
        kind=Kind.BOOL,
        summary="Honours explicit ncclCommRegister buffer registrations.",
        default="1",
        since="2.19",
        doc=f"{DOC_URL}#nccl-local-register",
        source="src/register/register.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_MAX_CTAS",
        kind=Kind.INT,
        summary=(
            "Upper bound on the CTAs (channels) NCCL uses; overrides the maxCTAs communicator "
            "config."
        ),
        default=None,
        since="2.17",
        doc=f"{DOC_URL}#nccl-max-ctas",
        source="src/init.cc",
        debug_only=True,
        minimum=1,
        maximum=64,
        notes=("Maximum 32 before 2.25.",),
    ),
    NcclVar(
        name="NCCL_MAX_NCHANNELS",
        kind=Kind.INT,
        summary="Upper bound on the number of channels (and CUDA blocks) NCCL uses.",
        default=None,
        since="2.5.0",
        doc=f"{DOC_URL}#nccl-max-nchannels",
        source="src/graph/connect.cc",
        debug_only=True,
        minimum=1,
        maximum=64,
        renamed="NCCL_MAX_NRINGS",
        notes=(
            "Deprecated since 2.17 in favour of NCCL_MAX_CTAS; if both are set the lower wins.",
            "Channel limit 32 before 2.25 and 64 since (source MAXCHANNELS).",
        ),
    ),
    NcclVar(
        name="NCCL_MAX_NRINGS",
        kind=Kind.INT,
        summary="Old name of NCCL_MAX_NCHANNELS, still honoured when the new name is unset.",
        default=None,
        since="2.0.5",
        doc=f"{DOC_URL}#nccl-max-nchannels",
        source="src/graph/connect.cc",
        debug_only=True,
        minimum=1,
        maximum=64,
        renamed="NCCL_MAX_NCHANNELS",
        notes=("Ignored when NCCL_MAX_NCHANNELS is set.",),
    ),
    NcclVar(
        name="NCCL_MAX_P2P_NCHANNELS",
        kind=Kind.INT,
        summary="Upper bound on the channels used for send/receive operations.",
        default="64",
        since="2.7.3",
        doc=DOC_URL,
        source="src/graph/paths.cc",
        minimum=1,
        maximum=64,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Default is the channel limit: 32 before 2.25, 64 since.",
        ),
    ),
    NcclVar(
        name="NCCL_MEM_SYNC_DOMAIN",
        kind=Kind.INT,
        summary=(
            "CUDA memory synchronization domain for NCCL kernels (sm90 and CUDA 12.0 or later)."
        ),
        default="1",
        since="2.16",
        doc=f"{DOC_URL}#nccl-mem-sync-domain",
        source="src/enqueue.cc",
        debug_only=True,
        minimum=0,
        maximum=1,
        notes=("1 is cudaLaunchMemSyncDomainRemote.",),
    ),
    NcclVar(
        name="NCCL_MIN_CTAS",
        kind=Kind.INT,
        summary=(
            "Lower bound on the CTAs (channels) NCCL uses; overrides the minCTAs communicator "
            "config."
        ),
        default=None,
        since="2.17",
        doc=f"{DOC_URL}#nccl-min-ctas",
        source="src/init.cc",
        debug_only=True,
        minimum=1,
        maximum=64,
        notes=(
            "Maximum 32 before 2.25.",
            "Very small messages may still use fewer channels.",
        ),
    ),
    NcclVar(
        name="NCCL_MIN_NCHANNELS",
        kind=Kind.INT,
        summary="Lower bound on the number of channels (and CUDA blocks) NCCL uses.",
        default=None,
        since="2.5.0",
        doc=f"{DOC_URL}#nccl-min-nchannels",
        source="src/graph/connect.cc",
        debug_only=True,
        minimum=0,
        maximum=64,
        renamed="NCCL_MIN_NRINGS",
        notes=(
            "Deprecated since 2.17 in favour of NCCL_MIN_CTAS; if both are set the higher wins.",
            (
                "Maximum 12 up to 2.2, 16 in 2.3-2.4, 32 from 2.5, 64 since 2.25 (source); larger "
                "values are capped."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_MIN_NRINGS",
        kind=Kind.INT,
        summary="Old name of NCCL_MIN_NCHANNELS, still honoured when the new name is unset.",
        default=None,
        since="2.2.0",
        doc=f"{DOC_URL}#nccl-min-nchannels",
        source="src/graph/connect.cc",
        debug_only=True,
        minimum=0,
        maximum=64,
        renamed="NCCL_MIN_NCHANNELS",
        notes=("Ignored when NCCL_MIN_NCHANNELS is set.",),
    ),
    NcclVar(
        name="NCCL_MIN_P2P_NCHANNELS",
        kind=Kind.INT,
        summary="Lower bound on the channels used for send/receive operations.",
        default="1",
        since="2.7.3",
        doc=DOC_URL,
        source="src/graph/paths.cc",
        minimum=1,
        maximum=64,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_MNNVL",
        kind=Kind.INT,
        summary="2.20 name of NCCL_MNNVL_ENABLE.",
        default=None,
        since="2.20.3",
        doc=DOC_URL,
        source="src/init.cc",
        renamed="NCCL_MNNVL_ENABLE",
        notes=("Read only by 2.20.x (v2.20.3-1, v2.20.5-1); negative or unset meant automatic.",),
    ),
    NcclVar(
        name="NCCL_MNNVL_CLIQUE_ID",
        kind=Kind.INT,
        summary=(
            "Overrides the multi-node NVLink clique id, e.g. to split one NVLink domain between "
            "jobs."
        ),
        default=None,
        since="2.23.4",
        doc=f"{DOC_URL}#nccl-mnnvl-clique-id",
        source="src/init.cc",
        debug_only=True,
        notes=("The docs say 2.25; the variable is already read by v2.23.4-1.",),
    ),
    NcclVar(
        name="NCCL_MNNVL_ENABLE",
        kind=Kind.INT,
        summary="Use of multi-node NVLink: 0 off, 1 required, 2 when available.",
        default="2",
        since="2.21",
        doc=f"{DOC_URL}#nccl-mnnvl-enable",
        source="src/init.cc",
        debug_only=True,
        minimum=0,
        maximum=2,
        renamed="NCCL_MNNVL",
        notes=(
            "Needs cuMem (NCCL_CUMEM_ENABLE) and a working IMEX domain.",
            "2.20 read the same setting as NCCL_MNNVL.",
        ),
    ),
    NcclVar(
        name="NCCL_MNNVL_UUID",
        kind=Kind.INT,
        summary=(
            "Overrides the multi-node NVLink cluster UUID (both 64-bit halves) that the fabric "
            "manager assigns."
        ),
        default=None,
        since="2.25",
        doc=f"{DOC_URL}#nccl-mnnvl-uuid",
        source="src/init.cc",
        debug_only=True,
        notes=("Parsed with strtoll base 0, so 0x-prefixed hexadecimal also works.",),
    ),
    NcclVar(
        name="NCCL_MULTI_RANK_GPU_ENABLE",
        kind=Kind.BOOL,
        summary="Allows several ranks of one communicator on the same GPU (experimental).",
        default="0",
        since="2.30",
        doc=f"{DOC_URL}#nccl-multi-rank-gpu-enable",
        source="src/init.cc",
        notes=(
            (
                "NVLS is not compatible: with NCCL_NVLS_ENABLE=1 init fails, with 2 NVLS is turned "
                "off."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_NCHANNELS_PER_NET_PEER",
        kind=Kind.INT,
        summary="Number of channels used per remote peer for network send/receive.",
        default=None,
        since="2.12.7",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=(
            "Not on the environment-variable page; facts from source.",
            (
                "Default 2 up to 2.19, automatic since 2.20; since 2.28 it overrides the "
                "nChannelsPerNetPeer config."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_NET",
        kind=Kind.STRING,
        summary="Forces the network module by name, for example IB, Socket, or a plugin's name.",
        default=None,
        since="2.10",
        doc=f"{DOC_URL}#nccl-net",
        source="src/init.cc",
        notes=(
            "Case-insensitive; overrides the netName field of every communicator's config.",
            (
                "If no module of that name loads, communicator initialization fails instead of "
                "falling back."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_NETDEVS_POLICY",
        kind=Kind.STRING,
        summary=(
            "How network devices are shared out among GPUs: AUTO, ALL, or MAX:<n> devices per GPU."
        ),
        default="AUTO",
        since="2.28",
        doc=f"{DOC_URL}#nccl-netdevs-policy",
        source="src/graph/topo.cc",
        notes=("Case-insensitive; an unrecognised value falls back to AUTO.",),
    ),
    NcclVar(
        name="NCCL_NET_DISABLE_INTRA",
        kind=Kind.BOOL,
        summary="Stops NCCL from ever choosing the network between GPUs of the same node.",
        default="0",
        since="2.12.7",
        doc=DOC_URL,
        source="src/graph/paths.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            "2.12.7 used an automatic default (-2); 0 since 2.12.10.",
        ),
    ),
    NcclVar(
        name="NCCL_NET_FORCE_FLUSH",
        kind=Kind.BOOL,
        summary=(
            "Forces the GPUDirect RDMA receive flush even on GPUs (Hopper and later) that do not "
            "need it."
        ),
        default="0",
        since="2.15.1",
        doc=DOC_URL,
        source="src/graph/paths.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Default 1 from 2.15 to 2.18, 0 since 2.19.",
        ),
    ),
    NcclVar(
        name="NCCL_NET_FORCE_MERGE",
        kind=Kind.STRING,
        summary=(
            "Lists NIC groups to fuse regardless of distance: groups separated by ';', NICs by ','."
        ),
        default=None,
        since="2.24.3",
        doc=DOC_URL,
        source="src/graph/topo.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_NET_GDR_C2C",
        kind=Kind.BOOL,
        summary=(
            "Allows GPUDirect RDMA through a CPU-attached NIC when the GPU reaches that CPU over "
            "C2C."
        ),
        default="1",
        since="2.26",
        doc=f"{DOC_URL}#nccl-net-gdr-c2c",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=("Default 0 in 2.26, 1 since 2.27.",),
    ),
    NcclVar(
        name="NCCL_NET_GDR_LEVEL",
        kind=Kind.PATH_LEVEL,
        summary="Farthest GPU-to-NIC topology distance at which NCCL still uses GPUDirect RDMA.",
        default=None,
        since="2.4.0",
        doc=f"{DOC_URL}#nccl-net-gdr-level-formerly-nccl-ib-gdr-level",
        source="src/graph/paths.cc",
        debug_only=True,
        renamed="NCCL_IB_GDR_LEVEL",
        notes=(
            (
                "Unset (2.30.7 source): PXB, widened to P2C (NIC on a C2C-attached CPU) while "
                "NCCL_NET_GDR_C2C=1."
            ),
            "Path names are accepted since 2.6 (source); 2.4 and 2.5 read an integer only.",
            "Legacy integers: 0=LOC, 1=PIX, 2=PXB, 3=PHB, 4 or more=SYS.",
        ),
    ),
    # Docs: default 1 on NVLink platforms, 0 otherwise; 2.30.7 source also enables it on sm80+.
    NcclVar(
        name="NCCL_NET_GDR_READ",
        kind=Kind.BOOL,
        summary=(
            "Lets the NIC read send data straight from GPU memory instead of staging it in host "
            "memory."
        ),
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-net-gdr-read",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=(
            (
                "Before 2.4.2 the default was 0; since then 1 on NVLink platforms and 0 otherwise "
                "(docs)."
            ),
            (
                "In 2.30.7 source the automatic value only disables it on pre-Ampere GPUs without "
                "NVLink peers."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_NET_MERGE_LEVEL",
        kind=Kind.ENUM,
        summary=(
            "Farthest topology distance at which NCCL fuses physical NICs into one virtual NIC."
        ),
        default="PORT",
        since="2.24.3",
        doc=DOC_URL,
        source="src/graph/topo.cc",
        choices=("LOC", "PORT", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"),
        exact_case=True,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Matched case-sensitively by prefix; an unknown value falls back silently.",
        ),
    ),
    # since taken from the docs (2.30.5); no 2.30.5 tag exists to confirm it.
    NcclVar(
        name="NCCL_NET_MERGE_POLICY",
        kind=Kind.ENUM,
        summary=(
            "Whether NIC fusion may merge NICs of different rails (ALL) or only NICs of the same "
            "rail (RAIL)."
        ),
        default="ALL",
        since="2.30.5",
        doc=f"{DOC_URL}#nccl-net-merge-policy",
        source="src/graph/topo.cc",
        debug_only=True,
        choices=("ALL", "RAIL"),
        notes=(
            (
                "Rails come from the rail field of NCCL_IB_HCA; NICs without a rail are never "
                "merged under RAIL."
            ),
            "The docs say 2.30.5; the first tagged source reading it is v2.30.7-1.",
        ),
    ),
    NcclVar(
        name="NCCL_NET_OVERHEAD",
        kind=Kind.INT,
        summary="Per-message network overhead, in nanoseconds, assumed by NCCL's tuning model.",
        default=None,
        since="2.18.1",
        doc=DOC_URL,
        source="src/graph/tuning.cc",
        minimum=0,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Automatic (2.30.7): 1 us, or 2 us on AMD x86 CPUs.",
        ),
    ),
    NcclVar(
        name="NCCL_NET_PLUGIN",
        kind=Kind.STRING,
        summary=(
            "Picks the network plugin library: a file name, a suffix for libnccl-net-<suffix>.so, "
            "or none."
        ),
        default=None,
        since="2.11",
        doc=f"{DOC_URL}#nccl-net-plugin",
        source="src/plugin/net.cc",
        notes=(
            "Unset: NCCL tries libnccl-net.so, then its internal IB and Socket transports.",
            "'none' (case-insensitive) disables external plugins.",
            "Since 2.27 (source) a comma-separated list of plugins is accepted.",
        ),
    ),
    NcclVar(
        name="NCCL_NET_SHARED_BUFFERS",
        kind=Kind.BOOL,
        summary=(
            "Uses one shared buffer pool for inter-node point-to-point traffic to all remote peers."
        ),
        default="1",
        since="2.8",
        doc=f"{DOC_URL}#nccl-net-shared-buffers",
        source="src/transport/net.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_NET_SHARED_COMMS",
        kind=Kind.BOOL,
        summary=(
            "Reuses network connections between PXN proxies, aggregating messages at some cost in "
            "entropy."
        ),
        default="1",
        since="2.12",
        doc=f"{DOC_URL}#nccl-net-shared-comms",
        source="src/transport/net.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_NSOCKS_PERTHREAD",
        kind=Kind.INT,
        summary="Number of sockets each socket-transport helper thread opens.",
        default=None,
        since="2.4.8",
        doc=f"{DOC_URL}#nccl-nsocks-perthread",
        source="src/transport/net_socket.cc",
        minimum=1,
        maximum=64,
        notes=(
            "Automatic: 8 on AWS, 1 otherwise.",
            "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD may not exceed 64.",
        ),
    ),
    # Default left unset: the docs give 512 or 256 by GPU generation; 2.30.7 picks 256 or 512 by
    # ring bandwidth.
    NcclVar(
        name="NCCL_NTHREADS",
        kind=Kind.INT,
        summary="CUDA threads per block for NCCL's kernels (one block per channel).",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-nthreads",
        source="src/graph/tuning.cc",
        debug_only=True,
        minimum=64,
        maximum=512,
        allowed=(64, 128, 256, 512),
        notes=(
            (
                "Documented values 64, 128, 256, 512; default 512 on recent GPUs, 256 on some older"
                " ones."
            ),
            "Source: values that are not a multiple of 32 or above 512 are replaced by 512.",
        ),
    ),
    NcclVar(
        name="NCCL_NVB_DISABLE",
        kind=Kind.BOOL,
        summary="Turns off intra-node NVLink paths that relay through an intermediate GPU.",
        default="0",
        since="2.9.9",
        doc=f"{DOC_URL}#nccl-nvb-disable",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=("The docs say 2.11; the variable is already read by v2.9.9-1.",),
    ),
    NcclVar(
        name="NCCL_NVLSTREE_MAX_CHUNKSIZE",
        kind=Kind.SIZE,
        summary="Largest chunk size in bytes for the NVLSTree algorithm.",
        default=None,
        since="2.20.3",
        doc=DOC_URL,
        source="src/transport/nvls.cc",
        minimum=1,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Automatic (2.30.7): 65536 with 4 or more nodes, otherwise the NVLS chunk size.",
        ),
    ),
    NcclVar(
        name="NCCL_NVLS_CHUNKSIZE",
        kind=Kind.SIZE,
        summary="Chunk size in bytes for NVLink SHARP collectives.",
        default="131072",
        since="2.21.5",
        doc=DOC_URL,
        source="src/transport/nvls.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_NVLS_ENABLE",
        kind=Kind.INT,
        summary="Use of NVLink SHARP (NVLS): 0 off, 1 on, 2 on where supported.",
        default="2",
        since="2.17",
        doc=f"{DOC_URL}#nccl-nvls-enable",
        source="src/transport/nvls.cc",
        debug_only=True,
        minimum=0,
        maximum=2,
        notes=(
            "Default 1 in 2.17, 2 since 2.18.",
            (
                "2.27 and 2.28 fell back silently when NVLS resources could not be allocated; since"
                " 2.29 that fails again, as with 1."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_NVLS_NCHANNELS",
        kind=Kind.INT,
        summary="Number of channels (CTAs) NCCL uses for NVLink SHARP.",
        default=None,
        since="2.17.1",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Default 16 up to 2.24; automatic since 2.25 (16 on Hopper, 24 or 32 on Blackwell).",
        ),
    ),
    NcclVar(
        name="NCCL_OOB_NET_ENABLE",
        kind=Kind.BOOL,
        summary=(
            "Runs the initialization allgather over NCCL's network transport instead of bootstrap "
            "sockets."
        ),
        default="0",
        since="2.23",
        doc=f"{DOC_URL}#nccl-oob-net-enable",
        source="src/bootstrap.cc",
    ),
    NcclVar(
        name="NCCL_OOB_NET_IFNAME",
        kind=Kind.HCA_LIST,
        summary=(
            "Selects the network device used for out-of-band traffic when NCCL_OOB_NET_ENABLE=1."
        ),
        default=None,
        since="2.23",
        doc=f"{DOC_URL}#nccl-oob-net-ifname",
        source="src/bootstrap.cc",
        notes=(
            (
                "Names depend on the network in use (IB device names for IB, interfaces for "
                "Socket); '^', '=' and ':port' work as for NCCL_IB_HCA; the first match is used."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_P2P_DIRECT_DISABLE",
        kind=Kind.BOOL,
        summary=(
            "Stops GPUs in one process from reading each other's user buffers directly over P2P."
        ),
        default="0",
        since="2.12.12",
        doc=f"{DOC_URL}#nccl-p2p-direct-disable",
        source="src/transport/p2p.cc",
        debug_only=True,
        notes=("The docs give no release; first tagged source reading it is v2.12.12-1.",),
    ),
    NcclVar(
        name="NCCL_P2P_DISABLE",
        kind=Kind.BOOL,
        summary="Turns off the CUDA peer-to-peer transport between GPUs (NVLink or PCIe).",
        default="0",
        since=None,
        doc=f"{DOC_URL}#nccl-p2p-disable",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=("Only the value 1 has an effect; it wins over NCCL_P2P_LEVEL.",),
    ),
    NcclVar(
        name="NCCL_P2P_LEVEL",
        kind=Kind.PATH_LEVEL,
        summary="Farthest GPU-to-GPU topology distance at which NCCL still uses the P2P transport.",
        default=None,
        since="2.3.4",
        doc=f"{DOC_URL}#nccl-p2p-level",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=(
            "Unset: chosen from the platform.",
            "Path names are accepted since 2.6 (source); earlier releases read an integer.",
            "Legacy integers: 0=LOC, 1=PIX, 2=PXB, 3=PHB, 4 or more=SYS; NVL has no integer.",
        ),
    ),
    NcclVar(
        name="NCCL_P2P_LL_THRESHOLD",
        kind=Kind.SIZE,
        summary="Largest send/receive size in bytes that may use the LL protocol.",
        default="16384",
        since="2.14",
        doc=f"{DOC_URL}#nccl-p2p-ll-threshold",
        source="src/enqueue.cc",
        debug_only=True,
        minimum=0,
    ),
    NcclVar(
        name="NCCL_P2P_NET_CHUNKSIZE",
        kind=Kind.SIZE,
        summary="Chunk size in bytes for send/receive operations that go over the network.",
        default="131072",
        since="2.14",
        doc=f"{DOC_URL}#nccl-p2p-net-chunksize",
        source="src/init.cc",
        debug_only=True,
        minimum=1,
        notes=("In 2.30.7 the value is doubled on ARM hosts with Blackwell GPUs (source).",),
    ),
    NcclVar(
        name="NCCL_P2P_NVL_CHUNKSIZE",
        kind=Kind.SIZE,
        summary=(
            "Chunk size in bytes for send/receive operations when all GPUs are linked by NVLink."
        ),
        default="524288",
        since="2.16.2",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_P2P_PCI_CHUNKSIZE",
        kind=Kind.SIZE,
        summary=(
            "Chunk size in bytes for single-node send/receive operations that are not all-NVLink."
        ),
        default="131072",
        since="2.16.2",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_P2P_PXN_LEVEL",
        kind=Kind.INT,
        summary=(
            "When send/receive may route through another GPU's NIC (PXN): 0 never, 1 when needed, 2"
            " always."
        ),
        default="2",
        since="2.12",
        doc=f"{DOC_URL}#nccl-p2p-pxn-level",
        source="src/graph/search.cc",
        debug_only=True,
        minimum=0,
        maximum=2,
    ),
    NcclVar(
        name="NCCL_P2P_READ_ENABLE",
        kind=Kind.BOOL,
        summary="Makes the P2P transport read from the peer instead of writing to it.",
        default=None,
        since="2.7.3",
        doc=DOC_URL,
        source="src/transport/p2p.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            (
                "Automatic: decided from the topology (reads are preferred on NVLink-connected "
                "Ampere)."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_P2P_USE_CUDA_MEMCPY",
        kind=Kind.BOOL,
        summary=(
            "Has the P2P transport move data with copy-engine memcpy driven by the proxy thread."
        ),
        default="0",
        since="2.13.4",
        doc=DOC_URL,
        source="src/transport/p2p.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_PAT_ENABLE",
        kind=Kind.INT,
        summary=(
            "Use of the PAT algorithm: 0 off, 1 on, 2 automatic (one GPU per node, host "
            "networking)."
        ),
        default="2",
        since="2.23.4",
        doc=DOC_URL,
        source="src/graph/tuning.cc",
        minimum=0,
        maximum=2,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_PROFILER_PLUGIN",
        kind=Kind.STRING,
        summary=(
            "Picks the profiler plugin library: a file name, a suffix for libnccl-"
            "profiler-<suffix>.so, none, or STATIC_PLUGIN."
        ),
        default=None,
        since="2.23.4",
        doc=f"{DOC_URL}#nccl-profiler-plugin",
        source="src/plugin/profiler.cc",
        notes=(
            "Unset: libnccl-profiler.so if present, otherwise no profiling.",
            "STATIC_PLUGIN looks for the plugin symbols in the program binary itself.",
            "The docs give no release; first tagged source reading it is v2.23.4-1.",
        ),
    ),
    NcclVar(
        name="NCCL_PROTO",
        kind=Kind.ENUM_LIST,
        summary="Restricts which protocols (LL, LL128, Simple) NCCL may use.",
        default=None,
        since="2.5",
        doc=f"{DOC_URL}#nccl-proto",
        source="src/graph/tuning.cc",
        debug_only=True,
        choices=("LL", "LL128", "Simple"),
        notes=(
            "Case-insensitive; a leading '^' excludes the listed protocols.",
            "Forcing LL128 on platforms that do not support it can corrupt data.",
            "Since 2.24 per-function lists are accepted, as for NCCL_ALGO.",
        ),
    ),
    NcclVar(
        name="NCCL_PROXY_CPUSET",
        kind=Kind.STRING,
        summary="CPU list to which NCCL pins its proxy threads.",
        default=None,
        since="2.28.3",
        doc=DOC_URL,
        source="src/proxy.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            "An undecodable list is ignored with an INFO message.",
        ),
    ),
    NcclVar(
        name="NCCL_PROXY_DUMP_SIGNAL",
        kind=Kind.INT,
        summary="Signal number on which NCCL's proxy thread dumps its state to the log.",
        default=None,
        since="2.14.3",
        doc=DOC_URL,
        source="src/proxy.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_PXN_C2C",
        kind=Kind.BOOL,
        summary="Allows PXN when the intermediate GPU reaches the NIC through C2C and PCIe.",
        default="1",
        since="2.27",
        doc=f"{DOC_URL}#nccl-pxn-c2c",
        source="src/graph/paths.cc",
        debug_only=True,
        notes=("Default 0 in 2.27, 1 since 2.28.",),
    ),
    NcclVar(
        name="NCCL_PXN_DISABLE",
        kind=Kind.BOOL,
        summary=(
            "Turns off PXN, i.e. reaching a non-local NIC over NVLink through an intermediate GPU."
        ),
        default="0",
        since="2.12",
        doc=f"{DOC_URL}#nccl-pxn-disable",
        source="src/graph/paths.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_RAS_ADDR",
        kind=Kind.STRING,
        summary="host:port on which the RAS subsystem listens for ncclras clients.",
        default="localhost:28028",
        since="2.24",
        doc=f"{DOC_URL}#nccl-ras-addr",
        source="src/ras/client_support.cc",
        debug_only=True,
        notes=("IPv6 addresses go in brackets; give each job on a shared node its own port.",),
    ),
    NcclVar(
        name="NCCL_RAS_ENABLE",
        kind=Kind.BOOL,
        summary=(
            "Enables NCCL's RAS subsystem, which can be queried about job health while it runs."
        ),
        default="1",
        since="2.24",
        doc=f"{DOC_URL}#nccl-ras-enable",
        source="src/bootstrap.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_RAS_TIMEOUT_FACTOR",
        kind=Kind.INT,
        summary="Multiplier applied to all RAS timeouts.",
        default="1",
        since="2.24",
        doc=f"{DOC_URL}#nccl-ras-timeout-factor",
        source="src/ras/ras.cc",
        debug_only=True,
        minimum=1,
    ),
    NcclVar(
        name="NCCL_REPORT_CONNECT_PROGRESS",
        kind=Kind.BOOL,
        summary=(
            "Has rank 0 report progress about once a second while connections are being set up."
        ),
        default="0",
        since="2.19.4",
        doc=DOC_URL,
        source="src/transport.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_RUNTIME_CONNECT",
        kind=Kind.BOOL,
        summary=(
            "Connects peers lazily when first used (1) instead of during communicator init (0)."
        ),
        default="1",
        since="2.22",
        doc=f"{DOC_URL}#nccl-runtime-connect",
        source="src/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_SET_STACK_SIZE",
        kind=Kind.BOOL,
        summary=(
            "Sets the CUDA stack size to the largest NCCL kernel's need up front, avoiding a later "
            "reconfiguration."
        ),
        default="0",
        since="2.9",
        doc=f"{DOC_URL}#nccl-set-stack-size",
        source="src/init.cc",
        debug_only=True,
        notes=("Set to 1 if the reconfiguration causes hangs.",),
    ),
    NcclVar(
        name="NCCL_SET_THREAD_NAME",
        kind=Kind.BOOL,
        summary="Gives NCCL's CPU threads descriptive names for debugging and profiling.",
        default="0",
        since="2.12",
        doc=f"{DOC_URL}#nccl-set-thread-name",
        source="src/debug.cc",
    ),
    NcclVar(
        name="NCCL_SHM_DISABLE",
        kind=Kind.BOOL,
        summary="Turns off the shared-memory transport used between GPUs that cannot use P2P.",
        default="0",
        since=None,
        doc=f"{DOC_URL}#nccl-shm-disable",
        source="src/transport/shm.cc",
        debug_only=True,
        notes=("NCCL then uses the network between such GPUs.",),
    ),
    NcclVar(
        name="NCCL_SHM_LOCALITY",
        kind=Kind.INT,
        summary=(
            "Where shared-memory transport buffers live: 1 on the sender's side, 2 on the "
            "receiver's."
        ),
        default="2",
        since="2.13.4",
        doc=DOC_URL,
        source="src/transport/shm.cc",
        minimum=1,
        maximum=2,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Other values are ignored with a warning.",
        ),
    ),
    NcclVar(
        name="NCCL_SHM_MEMCPY_MODE",
        kind=Kind.INT,
        summary=(
            "With NCCL_SHM_USE_CUDA_MEMCPY=1: copy on the sender (1), the receiver (2) or both (3)."
        ),
        default="1",
        since="2.13.4",
        doc=DOC_URL,
        source="src/transport/shm.cc",
        minimum=1,
        maximum=3,
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Read from 2.13.4 to 2.30.4; no longer read in 2.30.7.",
        ),
    ),
    NcclVar(
        name="NCCL_SHM_USE_CUDA_MEMCPY",
        kind=Kind.BOOL,
        summary="Has the shared-memory transport copy data with cudaMemcpy from the proxy thread.",
        default="0",
        since="2.13.4",
        doc=DOC_URL,
        source="src/transport/shm.cc",
        notes=(
            "Not on the environment-variable page; facts from source.",
            "Read from 2.13.4 to 2.30.4; no longer read in 2.30.7.",
        ),
    ),
    # Known from the docs only: no public release (v2.3.5-5 onward) reads it.
    NcclVar(
        name="NCCL_SINGLE_RING_THRESHOLD",
        kind=Kind.SIZE,
        summary="Old size limit under which NCCL used a single ring.",
        default=None,
        since="2.1",
        doc=f"{DOC_URL}#nccl-single-ring-threshold",
        debug_only=True,
        notes=(
            "Removed in 2.3; not read by any release in the public repository (v2.3.5-5 onward).",
            "Former default 262144 on compute capability 7 and above, 131072 otherwise.",
        ),
    ),
    NcclVar(
        name="NCCL_SOCKET_FAMILY",
        kind=Kind.ADDR_FAMILY,
        summary="Restricts NCCL's socket interfaces to IPv4 or to IPv6.",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-socket-family",
        source="src/misc/socket.cc",
        notes=("Compared case-sensitively; any value other than AF_INET or AF_INET6 is ignored.",),
    ),
    NcclVar(
        name="NCCL_SOCKET_IFNAME",
        kind=Kind.IFACE_LIST,
        summary="Chooses the IP interfaces NCCL uses for bootstrap and for its socket transport.",
        default=None,
        since=None,
        doc=f"{DOC_URL}#nccl-socket-ifname",
        source="src/misc/socket.cc",
        notes=(
            (
                "Unset: NCCL tries ib* interfaces first, then one in the subnet of NCCL_COMM_ID, "
                "then anything except docker*, lo and virbr*, then docker*, lo and (since 2.28) "
                "virbr*."
            ),
            (
                "A value of a single character is ignored and automatic selection is used (source: "
                "the value must be longer than one character)."
            ),
            (
                "Prefix match by default: 'eth' also selects eth1 or eth0.100; '=' asks for exact "
                "names, a leading '^' excludes."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_SOCKET_INLINE",
        kind=Kind.SIZE,
        summary="Largest socket-transport message, in bytes, sent inline with its control header.",
        default="128",
        since="2.27.3",
        doc=DOC_URL,
        source="src/transport/net_socket.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_SOCKET_MAGIC",
        kind=Kind.STRING,
        summary=(
            "Replaces the 64-bit handshake constant of NCCL's internal TCP sockets, to keep "
            "unrelated jobs from talking to each other."
        ),
        default=None,
        since="2.30.7",
        doc=f"{DOC_URL}#nccl-socket-magic",
        source="src/misc/socket.cc",
        notes=(
            (
                "Decimal or 0x-prefixed hexadecimal (strtoull base 0); an unparsable value falls "
                "back to the built-in constant with an INFO message."
            ),
            (
                "Does not change the magic of bootstrap connections made through NCCL_COMM_ID or "
                "ncclGetUniqueId."
            ),
            "The docs give no release; first tagged source reading it is v2.30.7-1.",
        ),
    ),
    NcclVar(
        name="NCCL_SOCKET_MIN_TASKSIZE",
        kind=Kind.SIZE,
        summary="Smallest slice, in bytes, that the socket transport hands to one of its sockets.",
        default="65536",
        since="2.27.3",
        doc=DOC_URL,
        source="src/transport/net_socket.cc",
        minimum=1,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    # Defaults: docs say 1 thread elsewhere; source starts no helper thread (0) outside AWS and GCP.
    NcclVar(
        name="NCCL_SOCKET_NTHREADS",
        kind=Kind.INT,
        summary="Number of helper threads per connection in the socket transport.",
        default=None,
        since="2.4.8",
        doc=f"{DOC_URL}#nccl-socket-nthreads",
        source="src/transport/net_socket.cc",
        minimum=1,
        maximum=16,
        notes=(
            (
                "Automatic: 2 on AWS (NIC vendor 0x1d0f), 4 on Google Cloud gVNIC (vendor 0x1ae0, "
                "since 2.5.6); the docs give 1 elsewhere, the source uses no helper threads there."
            ),
            "Values above 16 are capped with a warning.",
            (
                "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD may not exceed 64; NCCL lowers "
                "NCCL_NSOCKS_PERTHREAD with a warning when it does."
            ),
        ),
    ),
    # The docs date this variable to 2.28, but no 2.28 tag reads it; v2.29.2-1 is the first.
    NcclVar(
        name="NCCL_SOCKET_POLL_TIMEOUT_MSEC",
        kind=Kind.INT,
        summary=(
            "Lets bootstrap socket operations poll for up to this many milliseconds between "
            "attempts instead of spinning, to save CPU."
        ),
        default="0",
        since="2.29.2",
        doc=f"{DOC_URL}#nccl-socket-poll-timeout-msec",
        source="src/misc/socket.cc",
        minimum=0,
        notes=(
            "The docs say 'since 2.28'; the first tagged source that reads it is v2.29.2-1.",
            "0 keeps the old busy-retry behaviour.",
        ),
    ),
    NcclVar(
        name="NCCL_SOCKET_RCVBUF",
        kind=Kind.SIZE,
        summary="Sets SO_RCVBUF on NCCL's sockets; unset keeps the kernel's default.",
        default=None,
        since="2.27.3",
        doc=DOC_URL,
        source="src/misc/socket.cc",
        notes=(
            (
                "Not on the environment-variable page; facts from source (2.30.7 applies it in "
                "src/os/linux.cc)."
            ),
        ),
    ),
    NcclVar(
        name="NCCL_SOCKET_RETRY_CNT",
        kind=Kind.INT,
        summary=(
            "How many times NCCL retries a socket connect that failed with ETIMEDOUT, ECONNREFUSED "
            "or EHOSTUNREACH."
        ),
        default="34",
        since="2.24",
        doc=f"{DOC_URL}#nccl-socket-retry-cnt",
        source="src/misc/socket.cc",
        minimum=1,
        notes=("With NCCL_SOCKET_RETRY_SLEEP_MSEC=100 the retries add up to roughly one minute.",),
    ),
    NcclVar(
        name="NCCL_SOCKET_RETRY_SLEEP_MSEC",
        kind=Kind.INT,
        summary=(
            "Base wait in milliseconds between socket connect retries; the wait grows linearly with"
            " each failed attempt."
        ),
        default="100",
        since="2.24",
        doc=f"{DOC_URL}#nccl-socket-retry-sleep-msec",
        source="src/misc/socket.cc",
        minimum=1,
    ),
    NcclVar(
        name="NCCL_SOCKET_SNDBUF",
        kind=Kind.SIZE,
        summary="Sets SO_SNDBUF on NCCL's sockets; unset keeps the kernel's default.",
        default=None,
        since="2.27.3",
        doc=DOC_URL,
        source="src/misc/socket.cc",
        notes=(
            (
                "Not on the environment-variable page; facts from source (2.30.7 applies it in "
                "src/os/linux.cc)."
            ),
        ),
    ),
    # The docs say '2.29U1'; taken as 2.29.7, the first tag whose source reads it.
    NcclVar(
        name="NCCL_SYM_GIN_KERNELS_ENABLE",
        kind=Kind.BOOL,
        summary="Allows symmetric kernels that communicate over the network through GIN.",
        default="1",
        since="2.29.7",
        doc=f"{DOC_URL}#nccl-sym-gin-kernels-enable",
        source="src/sym_kernels.cc",
        debug_only=True,
        notes=("The docs say '2.29U1'; the first tagged source reading it is v2.29.7-1.",),
    ),
    NcclVar(
        name="NCCL_TOPO_DUMP_FILE",
        kind=Kind.PATH,
        summary="File to which NCCL writes the topology XML it detected.",
        default=None,
        since="2.6",
        doc=f"{DOC_URL}#nccl-topo-dump-file",
        source="src/init.cc",
        notes=("Written by the rank given in NCCL_TOPO_DUMP_FILE_RANK (default 0).",),
    ),
    NcclVar(
        name="NCCL_TOPO_DUMP_FILE_RANK",
        kind=Kind.INT,
        summary="Rank that writes NCCL_TOPO_DUMP_FILE.",
        default="0",
        since="2.6.4",
        doc=DOC_URL,
        source="src/graph/topo.cc",
        minimum=0,
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_TOPO_FILE",
        kind=Kind.PATH,
        summary="XML topology file that NCCL loads before detecting the rest of the system.",
        default=None,
        since="2.6",
        doc=f"{DOC_URL}#nccl-topo-file",
        source="src/graph/topo.cc",
        notes=(
            "Unset: /var/run/nvidia-topologyd/virtualTopology.xml is loaded if present.",
            "On multi-node NVLink systems it should describe a single node.",
        ),
    ),
    NcclVar(
        name="NCCL_TREE_THRESHOLD",
        kind=Kind.SIZE,
        summary="Old size limit under which NCCL used trees instead of rings.",
        default=None,
        since="2.4",
        doc=f"{DOC_URL}#nccl-tree-threshold",
        source="src/init.cc",
        debug_only=True,
        notes=("Removed in 2.5 (last read by v2.4.8-1); use NCCL_ALGO.",),
    ),
    NcclVar(
        name="NCCL_TUNER_PLUGIN",
        kind=Kind.STRING,
        summary=(
            "Picks the tuner plugin library: a file name, a suffix for libnccl-tuner-<suffix>.so, "
            "or none."
        ),
        default=None,
        since="2.19.1",
        doc=f"{DOC_URL}#nccl-tuner-plugin",
        source="src/plugin/tuner.cc",
        notes=(
            (
                "Unset: libnccl-tuner.so, then tuner symbols inside the net plugin, then the built-"
                "in tuner."
            ),
            (
                "The docs' list says libnccl-net-<name>.so, but their example and the source use "
                "libnccl-tuner-<name>.so."
            ),
            "The docs give no release; first tagged source reading it is v2.19.1-1.",
        ),
    ),
    NcclVar(
        name="NCCL_UID_STAGGER_RATE",
        kind=Kind.INT,
        summary=(
            "Target message rate, per second, toward the bootstrap root when staggering is active."
        ),
        default="7000",
        since="2.23",
        doc=f"{DOC_URL}#nccl-uid-stagger-rate",
        source="src/bootstrap.cc",
        minimum=1,
    ),
    NcclVar(
        name="NCCL_UID_STAGGER_THRESHOLD",
        kind=Kind.INT,
        summary=(
            "Rank count per ncclUniqueId above which ranks stagger their first contact with the "
            "bootstrap root."
        ),
        default="256",
        since="2.23",
        doc=f"{DOC_URL}#nccl-uid-stagger-threshold",
        source="src/bootstrap.cc",
        minimum=1,
    ),
    NcclVar(
        name="NCCL_WARN_ENABLE_DEBUG_INFO",
        kind=Kind.BOOL,
        summary="Raises the log level to INFO once a WARN message has been printed.",
        default="0",
        since="2.19.4",
        doc=DOC_URL,
        source="src/debug.cc",
        notes=("Not on the environment-variable page; facts from source.",),
    ),
    NcclVar(
        name="NCCL_WIN_ENABLE",
        kind=Kind.BOOL,
        summary="Enables window memory registration.",
        default="1",
        since="2.27",
        doc=f"{DOC_URL}#nccl-win-enable",
        source="src/init.cc",
        debug_only=True,
    ),
    NcclVar(
        name="NCCL_WORK_FIFO_BYTES",
        kind=Kind.SIZE,
        summary="Size in bytes of the host-to-GPU work FIFO; must be a power of two.",
        default="1048576",
        since="2.22.3",
        doc=DOC_URL,
        source="src/init.cc",
        minimum=1,
        notes=(
            "Not on the environment-variable page; facts from source.",
            (
                "Non-powers of two are ignored with a warning; capped at 1 GiB; forced to 0 when "
                "CUDA confidential computing is on."
            ),
            "2.13 to 2.21 had NCCL_WORK_FIFO_DEPTH, counted in entries rather than bytes.",
        ),
    ),
)

# ---------------------------------------------------------------- read by the source only
#
# Every name NVIDIA/nccl v2.30.7-1 reads (``NCCL_PARAM``, ``DEFINE_NCCL_PARAM``,
# ``ncclGetEnv``) that the environment-variable page does not describe. Facts come from
# the source alone: ``kind`` and ``default`` from the definition, ``since`` from the
# first release tag whose ``src/`` reads the name (``git grep`` over every tag; None when
# v2.3.5-5 already reads it), ``source`` the file that defines it, the summary from the
# code that uses it. Most are internal, testing or tuning knobs: NCCL does not promise
# they keep working, and hpnet validates only their syntax.

_FROM_SOURCE = "Not on the environment-variable page; facts from source."
_CONFIG = "Unset: the communicator's ncclConfig_t field decides (NCCL_CONFIG_UNDEF_INT)."
_UNUSED = "Defined with NCCL_PARAM in v2.30.7-1 but no code calls it: setting it has no effect."


def _source_only(  # noqa: PLR0917 - one call per table row, positional by design
    name: str,
    kind: Kind,
    default: str | None,
    since: str | None,
    source: str,
    summary: str,
    *notes: str,
    choices: tuple[str, ...] = (),
) -> NcclVar:
    return NcclVar(
        name=name,
        kind=kind,
        summary=summary,
        default=default,
        since=since,
        doc=DOC_URL,
        source=source,
        choices=choices,
        notes=(_FROM_SOURCE, *notes),
    )


_B, _I, _S, _SZ = Kind.BOOL, Kind.INT, Kind.STRING, Kind.SIZE
_GDAKI = "src/transport/net_ib/gdaki/gin_host_gdaki.cc"
_RESILIENCY = "src/transport/net_ib/p2p_resiliency.cc"
_RECOVERY = "src/transport/net_ib/p2p_resiliency_recovery.cc"
_MS = "In milliseconds."

VARIABLES += (
    _source_only(
        "NCCL_ALLGATHERV_ENABLE",
        _B,
        "1",
        "2.29.2",
        "src/enqueue.cc",
        "Lets NCCL turn broadcasts into an allgatherv task (not with CUDA confidential computing).",
    ),
    _source_only(
        "NCCL_COMM_SHRINK_SHARE_RESOURCES",
        _I,
        None,
        "2.27.3",
        "src/init.cc",
        "Overrides the shrinkShare field of the communicator config.",
        _CONFIG,
    ),
    _source_only(
        "NCCL_COMM_SPLIT_SHARE_RESOURCES",
        _I,
        None,
        "2.18.1",
        "src/init.cc",
        "Overrides the splitShare field of the communicator config.",
        _CONFIG,
    ),
    _source_only(
        "NCCL_CONNECT_ROUND_MAX_PEERS",
        _I,
        "128",
        "2.19.4",
        "src/transport.cc",
        "Most peers NCCL connects to in one round of transport setup.",
    ),
    _source_only(
        "NCCL_DEV_API_JIT",
        _I,
        "0",
        "2.30.7",
        "src/gin/gin_host.cc",
        "1: device-API (GIN) kernels are JIT-compiled, so NCCL uses its newest "
        "device code version.",
    ),
    _source_only(
        "NCCL_DISABLE_MEM_MANAGER",
        _B,
        "0",
        "2.29.7",
        "src/mem_manager.cc",
        "Turns off NCCL's memory manager (the source calls it an internal parameter for testing).",
    ),
    _source_only(
        "NCCL_ELASTIC_BUFFER_REGISTER",
        _B,
        "1",
        "2.30.3",
        "src/dev_runtime.cc",
        "Allows elastic buffer registration for windows; 0 makes such registrations fail.",
    ),
    _source_only(
        "NCCL_ENABLE_VERSION_CHECK",
        _B,
        "1",
        "2.29.2",
        "src/dev_runtime.cc",
        "Refuses device-API code compiled against a newer NCCL than the one "
        "running; 0 skips the check.",
    ),
    _source_only(
        "NCCL_GDAKI_USE_RELIABLE_DB",
        _I,
        "0",
        "2.29.7",
        _GDAKI,
        "Doorbell mode of GIN's GDAKI queue pairs (0 valid doorbell record, "
        "non-zero none; 2 also changes posting).",
    ),
    _source_only(
        "NCCL_GIN_ENABLE",
        _B,
        "1",
        "2.28.7",
        "src/gin/gin_host.cc",
        "0 disables GPU-initiated networking (GIN) for the device API.",
    ),
    _source_only(
        "NCCL_GIN_ERROR_QUERY_SEC",
        _I,
        "10",
        "2.28.7",
        _GDAKI,
        "Seconds between GIN GDAKI error queries.",
    ),
    _source_only(
        "NCCL_GIN_GDAKI_MAX_DEST_RD_ATOMIC",
        _I,
        "-2",
        "2.30.3",
        _GDAKI,
        "max_dest_rd_atomic of GIN GDAKI queue pairs; not positive: the device's max_qp_rd_atom.",
    ),
    _source_only(
        "NCCL_GIN_GDAKI_MAX_QP_RD_ATOMIC",
        _I,
        "-2",
        "2.30.3",
        _GDAKI,
        "max_rd_atomic of GIN GDAKI queue pairs; not positive: the device's max_qp_rd_atom.",
    ),
    _source_only(
        "NCCL_GIN_GDAKI_NIC_HANDLER",
        _I,
        "0",
        "2.28.7",
        _GDAKI,
        "DOCA GPUNetIO NIC handler mode of GIN GDAKI queue pairs.",
    ),
    _source_only(
        "NCCL_GIN_GDAKI_QP_DEPTH",
        _I,
        "128",
        "2.28.7",
        _GDAKI,
        "Send-queue depth of GIN GDAKI queue pairs when the caller gives none.",
    ),
    _source_only(
        "NCCL_GIN_IB_TC",
        _I,
        "-1",
        "2.30.7",
        "src/transport/net_ib/gin.cc",
        "Traffic class of GIN's IB connections; -1: NCCL_IB_TC.",
    ),
    _source_only(
        "NCCL_GIN_NCONNECTIONS",
        _I,
        "-2",
        "2.29.7",
        "src/gin/gin_host.cc",
        "Number of GIN connections per communicator; -2: one per local GIN device.",
    ),
    _source_only(
        "NCCL_GIN_PLUGIN",
        _S,
        None,
        "2.29.7",
        "src/plugin/gin.cc",
        "GIN plugin libraries to load, like NCCL_NET_PLUGIN for networks.",
    ),
    _source_only(
        "NCCL_GIN_PLUGIN_REF_COUNT",
        _I,
        "0",
        "2.29.7",
        "src/plugin/gin.cc",
        "Initial reference count of loaded GIN plugins (keeps them loaded).",
    ),
    _source_only(
        "NCCL_GIN_PROXY_QUEUE_SIZE",
        _I,
        "-1",
        "2.28.7",
        "src/gin/gin_host_proxy.cc",
        "Queue size of the GIN proxy; below 1 or above the maximum outstanding "
        "requests: the maximum.",
    ),
    _source_only(
        "NCCL_GIN_TYPE",
        _I,
        "-1",
        "2.28.7",
        "src/transport/net_ib/gin.cc",
        "Forces one GIN implementation type (-1: any); plugins of another type are skipped.",
    ),
    _source_only(
        "NCCL_GRAPH_HELPER_DISABLE",
        _B,
        "0",
        "2.11.4",
        "src/init.cc",
        "Once disabled NCCL's CUDA-graph helper thread.",
        _UNUSED,
    ),
    _source_only(
        "NCCL_GROUP_CUDA_STREAM",
        _B,
        "0",
        None,
        "src/init.cc",
        "Once made group launches use an internal CUDA stream (needed on CUDA "
        "9.0/9.1; default 0 on later CUDA).",
        _UNUSED,
    ),
    _source_only(
        "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
        _I,
        "-2",
        "2.29.7",
        "src/transport/net_ib/common.cc",
        "Pre-posts receive work requests on IB receive queues (-2: no; forced on "
        "with resiliency or out-of-order RQ).",
    ),
    _source_only(
        "NCCL_IB_QUERY_PORT_SPEED",
        _B,
        "1",
        "2.30.7",
        "src/misc/ibvwrap.cc",
        "Asks ibv_query_port_speed for the port speed; 0 computes it from the "
        "port's speed and width.",
    ),
    _source_only(
        "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME",
        _I,
        "-2",
        "2.29.7",
        "src/transport/net_ib/p2p.cc",
        "How IB receives are matched to sends (-2: by index; forced to by-id with "
        "port failover or out-of-order RQ).",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_FAILOVER",
        _B,
        "0",
        "2.29.7",
        _RESILIENCY,
        "1 lets IB connections fail over to another port when one fails.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS",
        _I,
        "1",
        "2.29.7",
        _RESILIENCY,
        "Failover attempts per failed send before NCCL gives up.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
        _I,
        "10",
        "2.29.7",
        _RESILIENCY,
        "Wait before probing after a port failure.",
        _MS,
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY",
        _B,
        "0",
        "2.30.3",
        _RECOVERY,
        "1 lets a failed IB port be brought back into use once it recovers.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT",
        _I,
        "5000",
        "2.30.3",
        _RECOVERY,
        "Time to wait for a recovery acknowledgement.",
        _MS,
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL",
        _I,
        "500",
        "2.30.3",
        _RECOVERY,
        "Interval between batches of port-alive messages.",
        _MS,
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE",
        _I,
        "5",
        "2.30.3",
        _RECOVERY,
        "Port-alive messages per batch during recovery.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE",
        _I,
        "5",
        "2.30.3",
        _RECOVERY,
        "In-order port-alive messages needed to declare a port recovered.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
        _I,
        "4000",
        "2.30.3",
        _RECOVERY,
        "Time without port-alive messages before a recovery attempt fails.",
        _MS,
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX",
        _I,
        "5",
        "2.30.3",
        _RECOVERY,
        "Recovery attempts before a port is given up.",
    ),
    _source_only(
        "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY",
        _I,
        "200",
        "2.30.3",
        _RECOVERY,
        "Wait after a failure before recovery starts.",
        _MS,
    ),
    _source_only(
        "NCCL_L1_SHARED_MEMORY_CARVEOUT",
        _I,
        "0",
        "2.12.10",
        "src/enqueue.cc",
        "Shared-memory carveout (percent of L1) requested for NCCL's kernels.",
    ),
    _source_only(
        "NCCL_LL128_C2C",
        _B,
        "1",
        "2.27.3",
        "src/graph/tuning.cc",
        "Allows the LL128 protocol over C2C links on sm90 and later.",
    ),
    _source_only(
        "NCCL_LSA_TEAM_SIZE",
        _I,
        "0",
        "2.29.7",
        "src/dev_runtime.cc",
        "Size of the device API's load/store-accessible (LSA) team; 0: from the topology.",
    ),
    _source_only(
        "NCCL_MLOPART_RDMA_ENABLE",
        _B,
        "0",
        "2.30.7",
        "src/register/coll_reg.cc",
        "Treats MLOPart GPU partitions as RDMA-capable for buffer registration.",
    ),
    _source_only(
        "NCCL_MNNVL_CROSS_CLIQUE",
        _B,
        "0",
        "2.30.3",
        "src/init.cc",
        "Multi-node NVLink: enables CUDA P2P across cliques of one NVLink domain.",
    ),
    _source_only(
        "NCCL_MNNVL_RAIL_PER_HOST",
        _B,
        "0",
        "2.28.7",
        "src/graph/search.cc",
        "Multi-node NVLink graph search: treats each host's NICs as one rail.",
    ),
    _source_only(
        "NCCL_MNNVL_SCATTER_NETS_ENABLE",
        _B,
        "1",
        "2.27.5",
        "src/graph/search.cc",
        "Multi-node NVLink: spreads channels over the NICs of several hosts.",
    ),
    _source_only(
        "NCCL_MULTI_SEGMENT_REGISTER",
        _B,
        "1",
        "2.29.2",
        "src/transport/generic.cc",
        "Allows registering buffers made of several memory segments with the network.",
    ),
    _source_only(
        "NCCL_NET_GDR_MLOPART",
        _B,
        "0",
        "2.30.7",
        "src/graph/paths.cc",
        "Allows GPUDirect RDMA for MLOPart GPU partitions.",
    ),
    _source_only(
        "NCCL_NET_OPTIONAL_RECV_COMPLETION",
        _B,
        "1",
        "2.24.3",
        "src/transport/net.cc",
        "Lets network plugins skip receive completions NCCL does not need.",
    ),
    _source_only(
        "NCCL_NET_PLUGIN_REF_COUNT",
        _I,
        "0",
        "2.26.2",
        "src/plugin/net.cc",
        "Initial reference count of loaded net plugins (keeps them loaded).",
    ),
    _source_only(
        "NCCL_NO_CACHE",
        _S,
        None,
        "2.29.7",
        "src/param/param.cc",
        "Comma-separated parameter names NCCL re-reads on every use instead of caching (or ALL).",
    ),
    _source_only(
        "NCCL_NUM_RMA_CTX",
        _I,
        None,
        "2.29.2",
        "src/init.cc",
        "Overrides the numRmaCtx field of the communicator config; 0 disables RMA.",
        _CONFIG,
    ),
    _source_only(
        "NCCL_NVB_PRECONNECT",
        _B,
        "1",
        "2.9.9",
        "src/init.cc",
        "Connects NVLink-bridge (NVB) peers at init instead of on first use.",
    ),
    _source_only(
        "NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE",
        _I,
        None,
        "2.27.3",
        "src/init.cc",
        "Overrides the nvlinkCentricSched field of the communicator config.",
        _CONFIG,
    ),
    _source_only(
        "NCCL_NVTX_DISABLE",
        _B,
        "0",
        "2.28.3",
        "src/init_nvtx.cc",
        "1 turns off NCCL's NVTX ranges (profiling annotations).",
    ),
    _source_only(
        "NCCL_P2P_EPOCH_ENABLE",
        _B,
        "1",
        "2.29.2",
        "src/enqueue.cc",
        "Starts a new work batch when the point-to-point epoch changes.",
    ),
    _source_only(
        "NCCL_P2P_MAX_PEERS",
        _I,
        None,
        "2.30.3",
        "src/init.cc",
        "Overrides the maxP2pPeers field of the communicator config (0 or less is ignored).",
        _CONFIG,
    ),
    _source_only(
        "NCCL_P2P_PER_CHANNEL_NET_BW",
        _I,
        "14",
        "2.29.2",
        "src/graph/paths.cc",
        "Network bandwidth (GB/s) one point-to-point channel is assumed to carry, "
        "to size P2P channels.",
    ),
    _source_only(
        "NCCL_P2P_SCHEDULE_GROUP_SIZE",
        _I,
        "8",
        "2.28.7",
        "src/init.cc",
        "Peers scheduled together in one group of the inter-node P2P schedule "
        "(NCCL_MAX_DEV_WORK_P2P_PER_BATCH).",
    ),
    _source_only(
        "NCCL_PARAM_DUMP_ALL",
        Kind.ENUM,
        "FALSE",
        "2.30.3",
        "src/param/param.cc",
        "TRUE: the parameter dump lists internal parameters too.",
        "Read by 2.30's parameter parser: 1/T/TRUE or 0/F/FALSE.",
        choices=("0", "1", "F", "T", "FALSE", "TRUE"),
    ),
    _source_only(
        "NCCL_PROGRESS_APPENDOP_FREQ",
        _I,
        "8",
        "2.16.5",
        "src/proxy.cc",
        "How often (in progress loops) the busy proxy thread appends new operations.",
    ),
    _source_only(
        "NCCL_PROXY_APPEND_BATCH_SIZE",
        _I,
        "16",
        "2.16.2",
        "src/proxy.cc",
        "Most proxy operations appended in one batch.",
    ),
    _source_only(
        "NCCL_RMA_DISABLE",
        _B,
        "0",
        "2.30.7",
        "src/dev_runtime.cc",
        "1 disables the RMA proxy between LSA teams.",
    ),
    _source_only(
        "NCCL_RMA_PLUGIN",
        _S,
        None,
        "2.30.7",
        "src/plugin/rma.cc",
        "RMA plugin libraries to load, like NCCL_NET_PLUGIN for networks.",
    ),
    _source_only(
        "NCCL_RMA_PLUGIN_REF_COUNT",
        _I,
        "0",
        "2.30.7",
        "src/plugin/rma.cc",
        "Initial reference count of loaded RMA plugins (keeps them loaded).",
    ),
    _source_only(
        "NCCL_RMA_PROXY_DUMP_SIGNAL",
        _I,
        "-1",
        "2.29.2",
        "src/rma/rma_proxy.cc",
        "A signal number on which the RMA proxy dumps its state (-1: none).",
    ),
    _source_only(
        "NCCL_RMA_PROXY_QUEUE_SIZE",
        _I,
        "-1",
        "2.29.2",
        "src/rma/rma_proxy.cc",
        "Queue size of the RMA proxy; below 1 or above the maximum: the maximum.",
    ),
    _source_only(
        "NCCL_SET_CPU_STACK_SIZE",
        _B,
        "1",
        "2.28.3",
        "src/init.cc",
        "Sets the stack size of NCCL's threads (src/os/linux.cc); 0 keeps the system's.",
    ),
    _source_only(
        "NCCL_SHADOW_MEMPOOL_MAX_SIZE",
        _SZ,
        "1073741824",
        "2.30.7",
        "src/allocator.cc",
        "Maximum size in bytes of NCCL's shadow memory pool.",
    ),
    _source_only(
        "NCCL_SINGLE_PROC_MEM_REG_ENABLE",
        _B,
        "0",
        "2.28.3",
        "src/group.cc",
        "Enables buffer registration (NVLS included) when one process drives several GPUs.",
    ),
    _source_only(
        "NCCL_SYM_CE_THRESHOLD",
        _I,
        "8388608",
        "2.29.2",
        "src/enqueue.cc",
        "Element count above which symmetric collectives may use copy engines "
        "(sm100+, all-NVLink).",
    ),
    _source_only(
        "NCCL_SYM_CTAS",
        _I,
        "0",
        "2.27.3",
        "src/sym_kernels.cc",
        "CTAs for symmetric-memory kernels; 0: NCCL decides.",
    ),
    _source_only(
        "NCCL_SYM_KERNEL",
        _S,
        None,
        "2.27.3",
        "src/sym_kernels.cc",
        "Restricts symmetric-memory collectives to the one kernel named (exact "
        "name; '^' or unset: all).",
    ),
    _source_only(
        "NCCL_SYM_NOWIN_ENABLE",
        _B,
        "0",
        "2.29.2",
        "src/scheduler/symmetric_sched.cc",
        "Allows symmetric kernels on buffers that are not registered windows.",
    ),
    _source_only(
        "NCCL_SYM_REUSE_SYSMEM_HANDLES",
        _B,
        "0",
        "2.30.4",
        "src/dev_runtime.cc",
        "Reuses host-memory handles of peers in symmetric memory.",
    ),
    _source_only(
        "NCCL_SYM_RS_GIN_CHUNK_SIZE",
        _I,
        "-1",
        "2.30.7",
        "src/sym_kernels.cc",
        "Chunk size of the GIN reduce-scatter symmetric kernel; -1: NCCL decides.",
    ),
    _source_only(
        "NCCL_SYM_TMA_ENABLE",
        _B,
        "0",
        "2.30.3",
        "src/sym_kernels.cc",
        "Lets symmetric kernels use the Tensor Memory Accelerator (sm100+).",
    ),
    _source_only(
        "NCCL_THREAD_THRESHOLDS",
        _S,
        None,
        "2.5.6",
        "src/graph/tuning.cc",
        "Six integers 'tree LL LL128 Simple ring LL LL128 Simple' overriding the "
        "per-thread size thresholds (negative: keep).",
    ),
    _source_only(
        "NCCL_TOPO_SPLIT_MLOPART",
        _B,
        "1",
        "2.30.7",
        "src/graph/topo.cc",
        "Lists MLOPart GPU partitions as separate GPUs in the topology.",
    ),
    _source_only(
        "NCCL_UNPACK_DOUBLE_NCHANNELS",
        _B,
        "1",
        "2.22.3",
        "src/graph/connect.cc",
        "Doubles the channels when the network uses device-side unpacking.",
    ),
    _source_only(
        "NCCL_WIN_STRIDE",
        _I,
        "-1",
        "2.27.3",
        "src/dev_runtime.cc",
        "Address stride between ranks' symmetric windows; -1: NCCL decides.",
    ),
    _source_only(
        "NCCL_WORK_ARGS_BYTES",
        _SZ,
        "9223372036854775807",
        "2.22.3",
        "src/init.cc",
        "Caps the kernel argument bytes, which caps the channels NCCL uses.",
    ),
)
