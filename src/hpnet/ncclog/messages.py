"""What an NCCL ``INFO`` message says: ``(kind, data, text)`` per message form.

The readers of the messages NCCL and its network plugins print after ``NCCL INFO``
(connections, versions, bootstrap, network and NIC lists, GPUDirect RDMA, plugins,
environment, communicator state), matched by their first words and read with the format
strings of the NCCL releases that print them. Pure functions of the message text:
:mod:`hpnet.ncclog.lines` finds the message in a line, caches its reading and pins it on
the process that wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hpnet.ncclog.net_messages import gdr_event, net_event
from hpnet.ncclog.reading import NOTABLE, Message, reading

__all__ = [
    "CRASH_REPORT", "DEEPSPEED_EXITED", "LAUNCHER_FAILED", "MPIRUN_SIGNAL", "PROCESS_ENDED",
    "RAY_REPEATED", "SRUN_ENDED", "TESTS_WRONG", "TORCHRUN_FAILED", "VERSION", "VLLM_DIED",
    "Message", "read_message",
]  # fmt: skip

#: a process a signal ended, as the shell reports it (bash's whole line "Bus error (core
#: dumped)"; in a script "run.sh: line 3:  4711 Killed  python x.py"), as Python's
#: faulthandler does ("Fatal Python error: Segmentation fault"), UCX's, abseil's and TVM
#: FFI's handlers: a crash
CRASH_REPORT = (
    r"^\s*(?:Segmentation fault|Bus error|Illegal instruction|Floating point exception"
    r"|Aborted|Killed)(?: \(core dumped\))?\s*$"
    r"|: line \d+: +\d+ +(?:Segmentation fault|Bus error|Illegal instruction"
    r"|Floating point exception|Aborted|Killed)(?: +\(core dumped\))?(?: |$)"
    r"|Fatal Python error: (?:Segmentation fault|Bus error|Aborted|Illegal instruction"
    r"|Floating point exception)"
    # UCX's handler (ucs/debug/debug.c), in any process that loaded it (Open MPI, HPC-X):
    # "[host:pid :0:tid] Caught signal 7 (Bus error: nonexistent physical address)"
    r"|\] Caught signal \d+ \((?:Segmentation fault|Bus error|Aborted|Illegal instruction"
    r"|Floating point exception)"
    # abseil's failure signal handler (absl/debugging/failure_signal_handler.cc, "*** %s
    # received at time=%ld%s ***"), in a process that links it (Ray's workers, XLA)
    r"|\*\*\* SIG(?:SEGV|BUS|ILL|FPE|ABRT) received at time=\d+"
    # TVM FFI's SIGSEGV handler (tvm_ffi's backtrace.cc), loaded with FlashInfer
    r"|!!!!!!! Segfault encountered !!!!!!!"
)


#: a launcher's report that a process of the job failed, each with what it names
#: (hpnet.hang.exits reads them): torchrun's agent (elastic/multiprocessing/api.py: its
#: first failure, exit status, local rank, pid), Open MPI's mpirun (orterun's
#: help-orterun.txt: rank, pid, node, signal), vLLM's executor (multiproc_worker_utils.py:
#: worker, pid, exit status), Slurm's srun (node, task ids, how; an exit code) and
#: DeepSpeed's launcher (an exit status)
TORCHRUN_FAILED = r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\) of (?:binary|fn)"
MPIRUN_SIGNAL = (
    r"noticed that process rank (\d+) with PID (\d+) on node (\S+) exited on signal (\d+)"
)
VLLM_DIED = r"Worker (\w+) pid (\d+) died, exit code: (-?[1-9]\d*)"
SRUN_ENDED = (
    r"srun: error: (\S+): tasks? ([\d,-]+): (Killed|Aborted|Terminated|Segmentation fault"
    r"|Bus error|Exited with exit code ([1-9]\d*))"
)
#: DeepSpeed's per-node launcher (deepspeed/launcher/launch.py, sigkill_handler): the exit
#: status of the first worker it saw fail, after the command it spawned last
DEEPSPEED_EXITED = r"sigkill_handler\] .*exits with return code = (-?[1-9]\d*)"
#: any of them, or another word of a failed launch: ChildFailedError, mpirun's abort
#: ("Per user-direction, the job has been aborted.", "mpirun detected that one or more
#: processes exited with non-zero status")
LAUNCHER_FAILED = "|".join(
    re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)  # their groups, not captured here
    for pattern in (
        TORCHRUN_FAILED, MPIRUN_SIGNAL, VLLM_DIED, SRUN_ENDED, DEEPSPEED_EXITED,
        r"\bChildFailedError\b",
        r"Per user-direction, the job has been aborted",
        r"detected that one or more processes exited with non-zero status",
    )
)  # fmt: skip
#: nccl-tests' footer when its data check found wrong elements (src/util.cu
#: writeResultFooter, "# %-20s : %d %s"; before 2.13 src/common.cu " Out of bounds values
#: : %d %s"): it then exits with an error
TESTS_WRONG = r"Out of bounds values\s*: *[1-9]\d* FAILED"
#: a process a signal ended, its launcher's report that it failed, nccl-tests' failed check
PROCESS_ENDED = f"{CRASH_REPORT}|{LAUNCHER_FAILED}|{TESTS_WRONG}"


#: a connection after the channel number is erased (scan): ``Channel : 2[2] -> 3[3]
#: [send] via NET/IB/0/GDRDMA``; 2.4-2.6 say ``Ring`` and print NET peers without
#: brackets; some transcriptions drop the arrow. Bare messages keep their number.
#: RCCL ends a connection line with its communicator: ``via NET/Socket/1 comm
#: 0x7f9e80000ef0 nRanks 02`` (not part of the transport)
_RCCL_COMM = r"(?: comm 0x[0-9a-fA-F]+ nRanks \d+)?"
_CONNECTION = re.compile(
    r"^(?:Channel|Ring)(?: \d+(?:/\d+)?)? : (\d+)(?:\[([0-9a-fA-Fx]+)\])?\s+(?:->\s+)?(\d+)"
    r"(?:\[([0-9a-fA-Fx]+)\])?(?: \[(send|receive)\])? via (.+?)" + _RCCL_COMM + "$"
)
#: CollNet has no peer rank: ``CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA``
_COLLNET = re.compile(
    r"^(?:CollNet|Coll) \d+(?:/\d+)? : (\d+) \[(send|receive)\] via (.+?)" + _RCCL_COMM + "$"
)
_RING_ORDER = re.compile(r"^(?:Channel|Ring)(?: \d+(?:/\d+)?)? :((?:\s+-?\d+)+)\s*$")
VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-+.\w]*?\+cuda(\d+\.\d+))?")
_DRIVER = re.compile(r"^cudaDriverVersion (\d+)")
_BOOTSTRAP = re.compile(r"^Bootstrap ?: Using (?:\[\d+\])?(\S+)")
#: 2.4.8-2.7.8 list every interface: "Bootstrap : Using [0]eth0:10.0.0.1<0> [1]eth1:..."
_BOOTSTRAP_MORE = re.compile(r"\[\d+\](\S+)")
#: "Using network %s" (2.6.4+), 2.3's "Using internal Network %s" / "Using external
#: Network %s" (init.cu:74-77 @2.3.5)
_NETWORK = re.compile(r"^Using (?:internal |external )?[Nn]etwork (.+?)$")
#: 2.27.3+: "Assigned NET plugin IB to comm" (the module a communicator uses; "Initialized
#: NET plugin X" only says X started, and a plugin that starts can still fail); a plugin
#: NCCL loaded: "NET/Plugin: Loaded net plugin AWS Libfabric (v8)" (plugin/net.cc)
_ASSIGNED = re.compile(r"^Assigned NET plugin (.+?) to comm")
#: 2.28+: "Assigned GIN plugin %s to comm" (plugin/net.cc:249 @2.28.9), 2.29+ also "RMA"
_GIN = re.compile(r"^Assigned (GIN|RMA) plugin (\S+) to comm")
_SHARP_DEVICE = re.compile(r"^Sharp rank \d+/\d+ initialized on (\S+)")
#: nccl-rdma-sharp-plugins' p2p_plugin.c: "P2P plugin %s", "P2P plugin v10 %s"
_P2P_PLUGIN = re.compile(r"^P2P plugin (?:v\d+ )?(\S+)\s*$")
_PLUGIN_FAILED = re.compile(r"^Failed to initialize NET plugin (.+?)$")
#: "NCCL_IB_HCA set by environment to mlx5_0." (param.cc, 2.7.3+ for string values; the
#: integer form ends without a period), "NCCL_IB_HCA set to mlx5_0" (2.4-2.15, NET)
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment |by \S+ )?to (.*?)\.?$")
#: the topology file NCCL read (graph/xml.cc, 2.10.3+, GRAPH): NCCL_TOPO_FILE's value
#: (graph/topo.cc passes getenv's), or the virtual-topology daemon's default file
_TOPO_FILE = re.compile(r"^Loading topology file (.+)$")
DEFAULT_TOPO_FILE = "/var/run/nvidia-topologyd/virtualTopology.xml"
_LAST_VERBS_LIB = re.compile(r"^Count not open libibverbs\.so\.1\s*$")
_RING_GDR = re.compile(r"^Connected all rings(?:, use ring PXN (\d+) GDR (\d+))?")
#: the return-code trail of a failed call (include/checks.h: "%s:%d -> %d", with
#: " (%s)" for a system call's errno and " [Async thread]" / " [Progress Thread]")
#: 2.30.7 adds the function: "%s:%d (%s) -> %d" (debug.cc's location prefix)
_TRAIL = re.compile(
    r"^(\S+?\.(?:cc|cu|cpp|c|h|hpp)):(\d+)(?: \([^()\s]*\))? -> (\d+)(?: \(([^()]*)\))?"
)
#: "%d coll channels, [%d collnet channels, ]%d nvls channels, %d p2p channels, ..."
#: (init.cc, 2.17.1+)
_CHANNELS = re.compile(
    r"^(\d+) coll channels, (?:(\d+) collnet channels, )?(\d+) nvls channels, (\d+) p2p channels"
)
#: "NVLS multicast support is %savailable on dev %d" (transport/nvls.cc, 2.19+)
_NVLS_SUPPORT = re.compile(r"^NVLS multicast support is (not )?available on dev (\d+)")
#: Ray's log deduplication appends " [repeated 7x across cluster]" to a line
RAY_REPEATED = re.compile(r"(?<!\s)\s*\[repeated \d+x across cluster\]\s*$")
#: ``name value`` pairs of the communicator lines (init.cc ``ncclCommInitRank comm %p rank %d
#: nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx``, ``ncclCommSplit ... parent %p
#: color %d key %d`` 2.21.5+, ``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank
#: %d MNNVL %d`` 2.20.3+): addresses and bus ids are hex, everything else decimal (a
#: hex-looking rank is not a rank)
_FIELDS = re.compile(
    r"\b(?:(comm|busId|commId|commHash|parent) (0x[0-9a-fA-F]+|[0-9a-fA-F]+)"
    r"|(rank|nranks|nRanks|cudaDev|nvmlDev|nNodes|localRanks|color|MNNVL) (-?\d+))\b"
)
_STATE = re.compile(r"- (Init|Abort|Destroy) (START|COMPLETE)")


def _fields(message: str) -> dict[str, str]:
    """``{"comm": "0x55d0", "rank": "3", ...}``: the first value of each name wins."""
    found: dict[str, str] = {}
    for hex_name, hex_value, name, value in _FIELDS.findall(message):
        found.setdefault(hex_name or name, hex_value or value)
    return found


def read_message(message: str, process: None, source: str) -> Message:
    """Read an INFO message (what follows ``NCCL INFO``): ``(kind, data, text)``.

    Pure of the process that wrote it, so the reading of a message is cached and a
    message all processes print (``Using network IB``) is read once.
    """
    # without its trailing white space, the patterns end in ``(.+?)$``: one that ends in
    # ``(.+?)\s*$`` tries every run of spaces inside a message to its end (quadratic)
    message = message.rstrip()
    if message.endswith("cluster]"):
        message = RAY_REPEATED.sub("", message)
    head = message[:8]
    for prefixes, reader in _READERS:
        if head.startswith(prefixes):
            found = reader(message, head)
            if found is not None:
                return found
    if NOTABLE.search(message):
        return reading("notable", process, (), message)
    return reading("other", process)


#: reads one form of message, or None when the message is not of that form (the next
#: reader whose prefix fits tries it)
_Reader = Callable[[str, str], "Message | None"]


def _channel(message: str, head: str) -> Message | None:
    found = _CONNECTION.match(message)
    if found:
        src, src_dev, dst, dst_dev, direction, via = found.groups()
        return reading(
            "connection", None, (int(src), src_dev or "", int(dst), dst_dev or "", direction, via)
        )
    ring = _RING_ORDER.match(message)
    if ring:
        return reading("ring", None, tuple(int(r) for r in ring.group(1).split()))
    return reading("other", None)


def _collnet(message: str, head: str) -> Message | None:
    found = _COLLNET.match(message)
    if found:
        rank, direction, via = found.groups()
        return reading("connection", None, (int(rank), "", -1, "", direction, via))
    return None


def _version(message: str, head: str) -> Message | None:
    found = VERSION.search(message)
    return reading("version", None, found.groups()) if found else None


def _cuda_driver(message: str, head: str) -> Message | None:
    found = _DRIVER.match(message)
    if found:
        number = int(found.group(1))
        return reading("cuda-driver", None, (f"{number // 1000}.{number % 1000 // 10}",))
    return None


def _bootstrap(message: str, head: str) -> Message | None:
    found = _BOOTSTRAP.match(message)
    if found:
        listed = _BOOTSTRAP_MORE.findall(message) or [found.group(1)]
        return reading("bootstrap", None, tuple(listed))
    return None


def _net(message: str, head: str) -> Message | None:
    return net_event(message, None)


def _no_libibverbs(message: str, head: str) -> Message | None:
    if "libibverbs" in message:
        return reading("ib-no-device", None, (), message)  # 2.11.4-2.29.7 INFO form
    return None


def _no_verbs_library(message: str, head: str) -> Message | None:
    if _LAST_VERBS_LIB.match(message):
        # 2.30.3+: "Count not open %s" (sic) per library tried, NCCL_IBVERBS_LIB, then
        # libibverbs.so, then libibverbs.so.1 (ibvsymbols.cc:78-86 @2.30.7): only the
        # last one failing means no libibverbs (libibverbs.so is a -dev package's link)
        return reading("ib-no-device", None, (), message)
    return None


def _no_ib_devices(message: str, head: str) -> Message | None:
    if "returned 0 devices" in message:
        return reading("ib-no-device", None, (), message)  # 2.3: call to devices() returned 0
    return None


def _using_network(message: str, head: str) -> Message | None:
    found = _NETWORK.match(message)
    return reading("network", None, (found.group(1), "using")) if found else None


def _assigned(message: str, head: str) -> Message | None:
    """2.27.3+: "Assigned NET plugin IB to comm", and the GIN plugin's assignment."""
    found = _ASSIGNED.match(message)
    if found:
        return reading("network", None, (found.group(1), "assigned"))
    gin = _GIN.match(message)
    if gin:
        return reading("gin", None, (gin.group(1), gin.group(2)), message)
    return None


def _sharp(message: str, head: str) -> Message | None:
    """nccl-rdma-sharp-plugins: "Sharp rank %d/%d initialized on %s"."""
    found = _SHARP_DEVICE.match(message)
    return reading("collnet-device", None, ("SHARP", found.group(1)), message) if found else None


def _p2p_plugin(message: str, head: str) -> Message | None:
    """nccl-rdma-sharp-plugins: "P2P plugin [v10 ]IBext_v10"."""
    found = _P2P_PLUGIN.match(message)
    return reading("net-module", None, (found.group(1),), message) if found else None


def _plugin(message: str, head: str) -> Message | None:
    if "plugin" not in message:
        return None
    failed = _PLUGIN_FAILED.match(message)
    if failed and failed.group(1) == "IB":
        return reading("ib-failed", None, (), message)  # 2.28.3+: IB found no device
    return reading("plugin", None, (), message)


def _env(message: str, head: str) -> Message | None:
    found = _ENV.match(message)
    return reading("env", None, found.groups()) if found else None


def _topology_file(message: str, head: str) -> Message | None:
    """``Loading topology file /opt/microsoft/ncv4/topo.xml``: what NCCL_TOPO_FILE is set
    to, said where the ENV subsystem's echo of it is not shown (GRAPH without ENV)."""
    found = _TOPO_FILE.match(message)
    if found is None or found.group(1) == DEFAULT_TOPO_FILE:
        return None
    return reading("env", None, ("NCCL_TOPO_FILE", found.group(1)))


def _comm_state(message: str, head: str) -> Message | None:
    if not (
        "Init START" in message
        or "Init COMPLETE" in message
        or "- Abort" in message
        or ("- Destroy" in message)
    ):
        return None
    state = _STATE.search(message)
    fields = _fields(message)
    if state and "rank" in fields:
        return reading("comm", None, (state.group(1), state.group(2), fields))
    return None


def _comm_info(message: str, head: str) -> Message | None:
    if "nRanks" in message or "nranks" in message:
        fields = _fields(message)
        if "rank" in fields:
            return reading("comm", None, ("Info", "", fields))
    return None


def _comm_info_23(message: str, head: str) -> Message | None:
    if "nranks" in message:  # 2.3: "rank 0 nranks 4"
        return reading("comm", None, ("Info", "", _fields(message)))
    return None


def _nvls(message: str, head: str) -> Message | None:
    return reading("nvls", None) if message.startswith(("NVLS comm", "Connected NVLS")) else None


def _nvls_support(message: str, head: str) -> Message | None:
    found = _NVLS_SUPPORT.match(message)
    return reading("nvls-support", None, (found.group(1) is None,), message) if found else None


def _channels(message: str, head: str) -> Message | None:
    if not (head[:1].isdigit() and " nvls channels" in message):
        return None
    found = _CHANNELS.match(message)
    if found:
        coll, collnet, nvls, p2p = found.groups()
        numbers = (int(coll), int(collnet) if collnet else -1, int(nvls), int(p2p))
        return reading("channels", None, numbers, message)
    return None


def _connected(message: str, head: str) -> Message | None:
    found = _RING_GDR.match(message)
    if found and found.group(2) is not None:
        return reading("ring-gdr", None, (int(found.group(2)),))
    return reading("connected", None)


def _gdr(message: str, head: str) -> Message | None:
    return gdr_event(message, None) if "GPU Direct RDMA" in message else None


def _trail(message: str, head: str) -> Message | None:
    if " -> " not in message:
        return None
    found = _TRAIL.match(message)
    if found:
        where, line, code, reason = found.groups()
        return reading("trail", None, (f"{where}:{line}", int(code), reason or ""), message)
    return None


#: (the starts of ``message[:8]`` a reader is for, the reader), tried in this order; ""
#: fits every message (a reader of what a message holds, not how it starts)
#: graph/topo.cc's topology dump (NCCL_DEBUG_SUBSYS=GRAPH): a GPU's NVLink to an
#: NVSwitch or another GPU, ``+ NVL[370.8] - NVS/0-0`` (the link's bandwidth in GB/s)
_TOPO_NVLINK = re.compile(r"^\s*\+ NVL\[([\d.]+)\] - (NVS|GPU)/")


#: a PCIe link of the dump that NCCL rates below 3 GB/s (only those are not noise:
#: hpnet.ncclog.passes), and what it leads to (``+ PCI[0.2] - PCI/0-65000 (104c...)``);
#: 2.6+ print GB/s with one decimal (``%2.1f``), 2.5 a constant width (``%2d``, 12)
_TOPO_PCI = re.compile(r"^\s*\+ PCI\[([0-2]\.\d+)\] - (GPU|PCI|NIC|NVS|CPU)/(\S+)")


def _topo_pci(message: str, head: str) -> Message | None:
    if "+ PCI[" not in message:
        return None
    found = _TOPO_PCI.match(message)
    return reading("topo-pci", None, found.groups()) if found else None


def _topo_nvlink(message: str, head: str) -> Message | None:
    if "+ NVL[" not in message:
        return None
    found = _TOPO_NVLINK.match(message)
    return reading("topo-nvlink", None, (found.group(1), found.group(2))) if found else None


_READERS: tuple[tuple[str | tuple[str, ...], _Reader], ...] = (
    (("Channel", "Ring "), _channel),
    (("CollNet ", "Coll "), _collnet),
    ("NCCL ver", _version),
    ("cudaDriv", _cuda_driver),
    ("Bootstra", _bootstrap),
    ("NET", _net),
    ("Failed t", _no_libibverbs),
    ("Count no", _no_verbs_library),
    ("Net/IB: ", _no_ib_devices),
    (("Using ne", "Using in", "Using ex"), _using_network),
    ("Assigned", _assigned),
    ("Sharp ra", _sharp),
    ("P2P plug", _p2p_plugin),
    (("Initiali", "Failed t", "Successf", "Disablin"), _plugin),
    ("NCCL_", _env),
    ("Loading ", _topology_file),
    ("", _comm_state),
    ("comm 0x", _comm_info),
    ("rank ", _comm_info_23),
    ("", _nvls),
    ("NVLS mul", _nvls_support),
    ("", _channels),
    ("Connecte", _connected),
    ("", _gdr),
    ("", _topo_nvlink),
    ("", _topo_pci),
    ("", _trail),
)
