"""What broke, from where NCCL says it broke: the causal model of ``hpnet verify``.

Every NCCL WARN names its source location (``transport/nvls.cc:254 NCCL WARN ...``),
and every WARN call site of every release is in the format table
(``data/nccl_formats.json``, key ``sites``). NCCL's source tree is laid out by
subsystem, so the file says which part of NCCL failed even for a message no
signature knows: :data:`SUBSYSTEMS` maps source paths to a subsystem, its cause
family, a one-line "what broke" and the fixes. Signatures
(:mod:`hpnet.ncclog.signatures`) still refine a line they know; this table names the
cause of a fatal WARN that only a generic signature ("a CUDA call failed") or none
matched. ``tests/unit/test_causes.py`` checks that every file in the format table's
``sites`` is covered. The order of findings, cause before effect, is
:mod:`hpnet.ncclog.precedence`.

Pure functions and literal data.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from hpnet.ncclog.formats import format_regex, load_table

__all__ = [
    "SUBSYSTEMS",
    "Subsystem",
    "location_of",
    "subsystem_of",
    "warn_files",
]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Subsystem:
    """A part of NCCL, known by its source files, and what its failure means."""

    id: str  # the finding id when it names a cause (kebab-case)
    name: str
    #: paths under NCCL's src/ (a trailing ``/`` is a directory); first match wins
    paths: tuple[str, ...]
    family: str  # the cause family: intra-node, network, host, gpu, usage
    broke: str  # one line: what broke (the finding's title)
    cause: str
    fix: str
    #: a failure here says no more than the generic signatures (a CUDA call, an init
    #: step): named only where no signature matched the line
    generic: bool = False
    #: a message that names this subsystem wherever the line says it comes from (a WARN
    #: pasted without its location)
    message: str | None = None


#: NCCL source path -> subsystem. Paths are those of NVIDIA/nccl src/ from 2.3.5 to
#: 2.30.7 (the ``sites`` of data/nccl_formats.json); causes and fixes from NCCL's
#: source and maintainers' answers cited per row.
SUBSYSTEMS: tuple[Subsystem, ...] = (
    Subsystem(
        # transport/nvls.cc: cuMulticastCreate / cuMulticastAddDevice / cuMulticastBindMem
        # (nvlsGroupCreate, nvlsGroupBindMem); mnnvl.cc: the multi-node NVLink clique.
        # NVIDIA/nccl#1788 (cuMulticastAddDevice 401), #1672 (invalid argument; maintainers:
        # try NCCL_NVLS_ENABLE=0, test multicast with nvbandwidth / nvloom),
        # pie-project/pie#500 (container without /dev/nvidia-caps)
        id="nvls-setup-failed",
        name="NVLink SHARP (NVLS) / multicast",
        paths=("transport/nvls", "transport/multicast.cc", "transport/mc_arena.cc", "mnnvl.cc"),
        family="intra-node",
        broke="NVLink SHARP (NVLS) multicast setup failed",
        cause="a CUDA multicast call in NCCL's NVLS setup (cuMulticastCreate / AddDevice / "
        "BindMem, transport/nvls.cc) failed: on NVSwitch systems multicast needs the Fabric "
        "Manager running (IMEX for multi-node NVLink), a driver that supports it, and in a "
        "container the NVIDIA capability devices (/dev/nvidia-caps); 'initialization error' "
        "means CUDA itself is not usable in this process (a worker forked after CUDA init)",
        fix="NCCL_NVLS_ENABLE=0 runs without NVLS (confirms the cause); then check "
        "`nvidia-smi -q` Fabric state / `systemctl status nvidia-fabricmanager`, the driver "
        "version, and that the container gets /dev/nvidia-caps; test multicast with "
        "nvbandwidth or nvloom",
    ),
    Subsystem(
        # transport/p2p.cc: cudaIpcOpenMemHandle / cuMemImportFromShareableHandle of the
        # peer's buffer (p2pMap, ncclP2pImportShareableBuffer); misc/ipcsocket.cc passes
        # cuMem file descriptors over a Unix socket. NVIDIA/nccl#360 and #324 (containers),
        # #1647 (cuMemImportFromShareableHandle 101), #1948 (p2p.cc 'invalid device ordinal')
        id="p2p-setup-failed",
        name="P2P / IPC between GPUs of one host",
        paths=(
            "transport/p2p.cc",
            "transport/p2p.cu",
            "misc/ipcsocket.cc",
            "os/linux_ipcsocket.cc",
            "os/windows_ipcsocket.cc",
            "p2p.cu",
            "diagnostics/p2p.cc",  # 2.31 NCCL_RUN_DIAGNOSTICS: its P2P path check
        ),
        family="intra-node",
        broke="P2P/IPC buffer setup between GPUs of one host failed",
        cause="NCCL could not map the peer GPU's buffer into this process (CUDA IPC "
        "handle or cuMem shareable handle): the ranks of one host run in containers with "
        "separate IPC / PID namespaces, a process does not see the peer's GPU "
        "(CUDA_VISIBLE_DEVICES or one GPU per task), or the cuMem handle type is refused",
        fix="run the ranks of a host in one IPC and PID namespace and let each see all the "
        "host's GPUs (docker --ipc=host --pid=host; Slurm: not --gpus-per-task=1); "
        "NCCL_CUMEM_ENABLE=0 falls back to legacy CUDA IPC; NCCL_P2P_DISABLE=1 goes through SHM",
    ),
    Subsystem(
        # transport/shm.cc, misc/shmutils.cc (posix_fallocate / shm_open in /dev/shm)
        id="shm-setup-failed",
        name="shared memory (SHM)",
        paths=("transport/shm.cc", "transport/shm.cu", "misc/shmutils.cc", "include/shm.h"),
        family="host",
        broke="the shared-memory transport (/dev/shm) could not be set up",
        cause="NCCL's SHM transport and proxy create segments in /dev/shm: too small (a "
        "container's 64 MiB), full, or not shared between the ranks' containers",
        fix="docker --shm-size=8g or --ipc=host; Kubernetes: an emptyDir medium: Memory at "
        "/dev/shm; NCCL_SHM_DISABLE=1 avoids it",
    ),
    Subsystem(
        # transport/net_ib*.cc (the internal IB/RoCE module), misc/ibvwrap.cc (verbs calls)
        id="ib-failed",
        name="IB / RoCE verbs (NET/IB)",
        paths=(
            "transport/net_ib",
            "misc/ibvwrap",
            "misc/ibvsymbols.cc",
            "misc/mlx5dv",
            "include/ibvwrap.h",
        ),
        family="network",
        broke="the RDMA (IB / RoCE) network module failed",
        cause="a verbs call or an RDMA transfer failed in NCCL's IB module: device, port, GID, "
        "memory registration or the fabric between the NICs",
        fix="run `hpnet doctor` on the nodes (ports, GIDs, memlock, GPUDirect) and read the "
        "line's own error text",
    ),
    Subsystem(
        # misc/socket.cc, transport/net_socket.cc: TCP for bootstrap, proxy and NET/Socket
        id="socket-failed",
        name="TCP sockets (bootstrap, proxy, NET/Socket)",
        paths=(
            "misc/socket.cc",
            "include/socket.h",
            "transport/net_socket",
            "os/linux_socket_pair.cc",
            "os/windows_socket_pair.cc",
            "transport/rma_socket",
        ),
        family="network",
        broke="a TCP connection between ranks failed",
        generic=True,  # the socket signatures name refused / reset / closed connections
        cause="a peer was unreachable or went away (it exited or crashed, a firewall, a wrong "
        "interface): NCCL's bootstrap, proxy and Socket transport all use TCP",
        fix="find the first failure on the peer named in the line; check NCCL_SOCKET_IFNAME "
        "names a network every node reaches",
    ),
    Subsystem(
        id="bootstrap-failed",
        name="bootstrap",
        paths=("bootstrap.cc", "bootstrap.cu"),
        family="network",
        broke="NCCL's bootstrap (the rendezvous of the ranks) failed",
        cause="the ranks could not reach each other or the root over TCP (interface, "
        "address, port, a rank missing or started twice)",
        fix="check NCCL_SOCKET_IFNAME and NCCL_COMM_ID / the launcher's rendezvous on every node",
    ),
    Subsystem(
        # plugin/net.cc loads libnccl-net*.so and picks NCCL_NET (2.19+); net.cc and
        # init.cc before: "Error: network %s not found." (ncclInvalidUsage)
        id="net-plugin-failed",
        name="NET module loading and selection",
        paths=("plugin/", "net.cc"),
        family="network",
        broke="the network module NCCL was told to use is not available",
        cause="NCCL_NET names a module that did not load: its plugin library is missing, or it "
        "failed to load (a GLIBC or library it needs is missing, built for another NCCL), or "
        "the module found no device",
        fix="read the NET/Plugin lines before it for why the plugin did not load; use an image "
        "whose libc and libraries the plugin needs, the plugin build for this NCCL, or unset "
        "NCCL_NET",
    ),
    Subsystem(
        id="collnet-failed",
        name="CollNet / SHARP",
        paths=("transport/coll_net.cc",),
        family="network",
        broke="in-network reduction (CollNet / SHARP) setup failed",
        cause="the CollNet plugin (SHARP) could not set up its group or buffers",
        fix="check the SHARP daemons and plugin; NCCL_COLLNET_ENABLE=0 runs without it",
    ),
    Subsystem(
        # graph/paths.cc "Failed to find reverse path": a link with no link back in the
        # topology NCCL built (NVIDIA/nccl#1253, vllm-project/vllm#4062: a newer NCCL fixed it)
        id="topology-failed",
        name="topology detection / graph search",
        paths=("graph/", "include/topo.h", "misc/topo.cc", "include/nvlink.h", "misc/rings",
               "tuning/"),
        family="host",
        broke="NCCL could not build a consistent topology of this machine",
        cause="NCCL's view of the PCI / NVLink / NIC tree is inconsistent: an NCCL too old for "
        "the GPUs, NVLink or driver (links it misreads), a VM or container that shows part of "
        "the PCI tree, or an NCCL_TOPO_FILE that does not match the machine",
        fix="use a newer NCCL; give NCCL the real PCI tree (sysfs in the container) or a "
        "matching NCCL_TOPO_FILE; NCCL_P2P_DISABLE=1 / NCCL_NVLS_ENABLE=0 avoid the link in doubt",
        message=r"Failed to find reverse path|Could not find real path of",
    ),
    Subsystem(
        id="proxy-failed",
        name="proxy thread",
        paths=("proxy.cc",),
        family="network",
        broke="NCCL's proxy thread failed",
        cause="the proxy thread that drives network connections failed (usually relaying an "
        "error of a transport, or a peer's proxy that went away)",
        fix="read the transport error before it and the peer's log",
        generic=True,
    ),
    Subsystem(
        id="net-connect-failed",
        name="network connection setup",
        paths=("transport/net.cc", "transport/net.cu", "transport.cc", "transport.cu"),
        family="network",
        broke="a connection between ranks could not be set up",
        cause="connecting two ranks' transports failed (the network module, memory "
        "registration, or the peer)",
        fix="read the line and the WARN lines around it on both ranks",
        generic=True,
    ),
    Subsystem(
        id="ras-failed",
        name="RAS",
        paths=("ras/",),
        family="host",
        broke="NCCL's RAS subsystem failed",
        cause="the RAS thread (reliability monitoring, port 28028) hit an error; RAS crashed in "
        "some releases (2.26.2, 2.27.3, 2.27.7)",
        fix="NCCL_RAS_ENABLE=0, or an NCCL release with the fix",
    ),
    Subsystem(
        id="gdrcopy-failed",
        name="GDRCopy",
        paths=("misc/gdrwrap.cc", "include/gdrwrap.h"),
        family="gpu",
        broke="GDRCopy could not be used",
        cause="the gdrdrv module or libgdrapi is missing or mismatched",
        fix="load gdrdrv or set NCCL_GDRCOPY_ENABLE=0",
    ),
    Subsystem(
        id="nvml-failed",
        name="NVML",
        paths=("misc/nvmlwrap", "include/nvmlwrap.h"),
        family="gpu",
        broke="an NVML call failed (GPU management library)",
        cause="libnvidia-ml is missing or does not match the driver, or the GPU is in a bad state",
        fix="check `nvidia-smi` in the same container",
    ),
    Subsystem(
        id="cuda-call-failed",
        name="CUDA calls and GPU memory",
        paths=(
            "misc/cudawrap.cc",
            "include/cudawrap.h",
            "include/checks.h",
            "misc/strongstream.cc",
            "include/alloc.h",
            "allocator.cc",
            "mem_manager.cc",
            "register",
            "misc/checks.cu",
        ),
        family="gpu",
        broke="a CUDA call or GPU memory allocation failed",
        cause="a GPU fault, out of memory, a driver / runtime mismatch or an earlier kernel error",
        fix="check `nvidia-smi`, dmesg (Xid errors) and the CUDA error text in the line",
        generic=True,
    ),
    Subsystem(
        id="device-api-failed",
        name="device API / GIN / RMA",
        paths=(
            "gin/",
            "rma/",
            "dev_runtime",
            "cft_dev_runtime.cc",
            "sym_kernels",
            "symmetric/",
            "onerank.cu",
            "devcomm/",
            "ce_coll.cc",
            "scheduler/",
            "device/",
            "transport/gdaki/",
        ),
        family="gpu",
        broke="NCCL's device-initiated communication (GIN / RMA / symmetric kernels) failed",
        cause="the GPU-initiated networking or symmetric memory setup failed (GPUDirect "
        "Async / DOCA, dma-buf, or the NIC's support)",
        fix="read the line; the GIN / symmetric features can be switched off (NCCL_GIN_ENABLE=0)",
    ),
    Subsystem(
        id="api-usage",
        name="API arguments",
        paths=("misc/argcheck.cc", "include/common_coll.h", "enqueue.cc", "enqueue.cu",
               "misc/enqueue.cu", "enqueue/"),
        family="usage",
        broke="a call into NCCL was refused or failed to launch",
        cause="the program passed NCCL something it refuses (a pointer, a device, a count) or a "
        "launch failed",
        fix="read the line: it names the argument",
        generic=True,
    ),
    Subsystem(
        id="init-failed",
        name="communicator init",
        paths=("init.cc", "init.cu", "group.cc", "misc/group", "include/core.h", "misc/utils.cc",
               "include/utils.h", "os/", "param/", "include/param/", "misc/profiler.cc",
               "misc/tuner.cc", "include/graph.h", "include/comm.h", "config/",
               "misc/crypt.cc"),
        family="usage",
        broke="communicator initialisation failed",
        cause="a step of ncclCommInitRank failed: the line names it",
        fix="read the line and the WARN lines before it",
        generic=True,
    ),
)  # fmt: skip

_LOCATION = re.compile(r"^WARN (\S+?\.(?:cc|cu|c|h|cpp|hpp|cuh|py)):\d+")


def location_of(message: str) -> str | None:
    """The NCCL source file of a WARN as hpnet read it (``WARN file.cc:N text``).

    >>> location_of("WARN transport/nvls.cc:254 Cuda failure 401 'x'")
    'transport/nvls.cc'
    """
    found = _LOCATION.match(message)
    return found.group(1) if found else None


def _covers(path: str, prefix: str) -> bool:
    return path.startswith(prefix) if prefix.endswith("/") else (
        path == prefix or path.startswith(prefix)
    )  # fmt: skip


def _by_path(path: str) -> Subsystem | None:
    # a location may carry a build directory (RCCL's /long/.../src/graph/paths.cc, a
    # generated /.../build/obj/device/gensrc/... of 2.31) or a relative ../include/
    # (the last "/src/": a build tree may hold another, /src/out/.../build/rccl/hipify/src/)
    path = path.rsplit("/src/", 1)[-1].split("/gensrc/", 1)[-1].removeprefix("../")
    for subsystem in SUBSYSTEMS:
        if any(_covers(path, prefix) for prefix in subsystem.paths):
            return subsystem
    return None


@functools.cache
def _format_files() -> tuple[tuple[re.Pattern[str], frozenset[str], str], ...]:
    """Every WARN format with literal text, the files that print it and NCCL's decision."""
    found = []
    for entry in load_table().formats:
        text = str(entry.get("format") or "").strip()
        if entry["level"] != "WARN" or entry.get("plugin") or not re.sub(r"%\w", "", text).strip():
            continue
        sites = entry.get("sites") or {}
        assert isinstance(sites, dict)  # noqa: S101
        files = frozenset(str(site).rsplit(":", 1)[0] for site in sites)
        found.append((re.compile(format_regex(text) + r"\s*"), files, str(entry.get("fatal"))))
    return tuple(found)


def warn_files(text: str) -> tuple[frozenset[str], str | None]:
    """The files that print a WARN text (no location), and NCCL's decision after it.

    >>> warn_files("Failed to find reverse path from remNode 0/41000 nlinks 2 to node 0/61000")
    (frozenset({'graph/paths.cc'}), 'fatal')
    """
    for pattern, files, fatal in _format_files():
        if pattern.fullmatch(text.strip()):
            return files, fatal
    return frozenset(), None


def subsystem_of(message: str) -> Subsystem | None:
    """The subsystem a failure line comes from: its own location, else a subsystem whose
    message pattern it matches, else the files the format table says print it.

    >>> subsystem_of("WARN transport/p2p.cc:275 Cuda failure 101 'invalid device ordinal'").id
    'p2p-setup-failed'
    """
    path = location_of(message)
    if path is not None:
        return _by_path(path)
    text = message.removeprefix("WARN ").strip()
    for subsystem in SUBSYSTEMS:
        if subsystem.message and re.search(subsystem.message, text):
            return subsystem
    files, _ = warn_files(text)
    owners = {s for s in (_by_path(f) for f in files) if s is not None}
    return owners.pop() if len(owners) == 1 else None
