"""One distinct NCCL log line -> one :class:`Event`.

Line shapes (NCCL ``src/debug.cc``; docs/nccl-log-formats.md lists them with the
releases that print each form)::

    [launcher tags] [timestamp] host:pid:tid [cudaDev] NCCL INFO <message>
    [launcher tags] [timestamp] host:pid:tid [cudaDev] file.cc:123 NCCL WARN <message>
    [launcher tags] NCCL version 2.11.4+cuda11.4        (rank 0, up to 2.21)

Launcher tags: Open MPI ``[1,3]<stdout>:``, srun ``-l`` ``3: ``, torchrun
``[rank3]:`` / ``[default3]:``, and a bare ``[3] `` some wrappers print. Hosts are
cut at the first dot by NCCL (``getHostName``), pids and tids are decimal.

Messages are matched by their first words and read with the format strings of the
NCCL releases that print them; a line this module does not know is counted as
``other`` and, if it reads like a failure, kept as ``notable`` evidence.
"""

from __future__ import annotations

import re

from hpnet.ncclog.formats import BARE_PREFIX_CHARS, load_table
from hpnet.ncclog.versions import VersionRange, hint_for

__all__ = ["LOCATED_KINDS", "Classifier", "Event", "ProcessRef", "classify"]

#: kinds printed per connection or communicator: their version hints are computed for
#: the first few of each process only (hpnet.ncclog.facts), their message kept in ``text``
LAZY_HINT_KINDS = frozenset({"connection", "comm"})
#: kinds whose repetition by the same process changes nothing in what is folded
IDEMPOTENT = frozenset(
    {
        "network", "env", "gdr", "plugin", "ib-no-device", "ib-failed", "version",
        "cuda-driver", "bootstrap", "net-list", "net-iface", "nvls", "ring-gdr",
        "connected", "trail", "provider", "channels", "nvls-support", "net-nic",
        "net-module", "gin", "collnet-device",
        # a connection a process reports again (a new communicator generation on the
        # same ranks and NIC) adds channels to a count nothing reads
        "connection",
    }
)  # fmt: skip
#: distinct prefixes, messages and repeated lines remembered per scan (a file, or a
#: worker's range); a full cache starts anew, so that memory stays flat however long the
#: log and a later phase of it is cached too
MAX_CACHED = 50_000
#: kinds whose lines are quoted as evidence: the scanner finds each one's line number and
#: keeps the input line (connections: the first line of each process and transport in a
#: block, :mod:`hpnet.ncclog.scan`)
LOCATED_KINDS = frozenset(
    {
        "warn", "signal", "notable", "bare-version", "version", "network", "net-list",
        "net-iface", "env", "gdr", "plugin", "ib-no-device", "ib-failed", "bootstrap",
        "trail", "provider", "ring-gdr", "cuda-driver", "channels", "nvls-support",
        "net-nic", "net-module", "gin", "collnet-device",
    }
)  # fmt: skip
#: the kinds an INFO message pasted without NCCL's prefix is taken for: their formats are
#: specific enough that a program's own output does not match them by chance
BARE_KINDS = frozenset(
    {
        "connection", "network", "net-list", "net-iface", "env", "gdr", "ib-no-device",
        "ib-failed", "bootstrap", "trail", "provider", "ring-gdr", "comm", "channels",
        "nvls-support", "version", "net-nic",
    }
)  # fmt: skip

#: (key, host, pid, launcher rank, cuda device) of the process that wrote a line
ProcessRef = tuple[str, "str | None", "int | None", "int | None", "int | None"]


class Event:
    """A classified line: ``kind``, who wrote it, how often, and what it says.

    ``data`` is a tuple whose shape depends on ``kind`` (see :func:`classify`);
    ``text`` is the message (after ``NCCL INFO`` / ``NCCL WARN``) for evidence.
    """

    __slots__ = (
        "count", "data", "hint", "kind", "line_number", "process", "raw", "source", "text",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,
        process: ProcessRef | None,
        data: tuple[object, ...] = (),
        text: str = "",
        source: str = "",
    ) -> None:
        self.kind = kind
        self.process = process
        self.data = data
        self.text = text
        self.source = source
        self.count = 1
        self.line_number = 0
        #: the input line as written (colour codes and CR removed), for kinds that are
        #: quoted as evidence (:data:`LOCATED_KINDS`); set by the scanner
        self.raw = ""
        #: the NCCL releases that print this line in this form (logversions)
        self.hint: VersionRange | None = None

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.process!r}, {self.data!r}, count={self.count})"

    def __reduce__(self) -> tuple[object, ...]:
        # picklable without __dict__, for blocks scanned in worker processes
        return (_rebuild, (self.kind, self.process, self.data, self.text, self.source,
                           self.count, self.line_number, self.hint, self.raw))  # fmt: skip


def _rebuild(  # noqa: PLR0917 - pickle calls it with the saved fields in order
    kind: str,
    process: ProcessRef | None,
    data: tuple[object, ...],
    text: str,
    source: str,
    count: int,
    line_number: int,
    hint: VersionRange | None,
    raw: str,
) -> Event:
    event = Event(kind, process, data, text, source)
    event.count = count
    event.line_number = line_number
    event.hint = hint
    event.raw = raw
    return event


# ---------------------------------------------------------------- the line prefix

#: ``host:pid:tid [dev]`` and, on WARN lines, `` file.cc:line`` (searched from the end
#: of the text before ``NCCL INFO``/``NCCL WARN``). 2.30.7 adds the function, ``file.cc:123
#: (func)`` ("[%d] %s:%d (%s) NCCL WARN %s\n", debug.cc:345 @2.30.7); aws-ofi-nccl passes
#: ``__PRETTY_FUNCTION__`` as the file, spaces and parentheses included (``int
#: nccl_net_ofi_rdma_connect(...):123``, include/nccl_ofi_log.h @v1.21.1)
_PREFIX = re.compile(
    # the host starts a run of host characters (the look-behind): tried from inside a
    # run too, a 200 kB run without a ':' took as many scans of it as it has characters
    r"(?<![^\s:\[\]])(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>-?\d+)\]"
    r"(?: (?P<where>[^\s\[\]](?:[^\[\]]*?[^\s\[\]])?:\d+)(?: \((?P<func>[^()\s]*)\))?)?\s*$"
)
#: a WARN's ``file.cc:123`` (or a plugin's function) where no host prefix stands before it:
#: what ``(?:^|\s)([^\s\[\]](?:[^\[\]]*?[^\s\[\]])?:\d+)\s*$`` finds, in two linear steps
#: (that pattern scanned to the end of the text from every space: minutes on a long line)
_WHERE_END = re.compile(r"(?<=[^\s\[\]]):(\d+)\s*$")
_WHERE_START = re.compile(r"(?<!\S)[^\s\[\]]")
#: timestamps that log collectors glue in front of the host (CloudWatch, kubectl
#: --timestamps, NCCL 2.26+'s ``[2026-11-21 23:50:29]``), removed before the host is read
_TIMESTAMP = re.compile(r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?")
_OMPI_TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>:")
#: torchrun ``[rank3]:`` / ``[default3]:``, TorchX ``[trainer3]:`` / ``[trainer0|3]:``
_TORCHRUN_TAG = re.compile(r"(?:^|\s)\[[A-Za-z_]*?(\d+)(?:\|\d+)?\]:")
_SRUN_TAG = re.compile(r"^\s*(\d+): ")
_BRACKET_RANK = re.compile(r"^\[(\d+)\] ")


#: what NCCL can print as a host: gethostname() cut at the first '.' (getHostName,
#: misc/utils.cc), with '%' and '/' made '-' from 2.29.2 (debug.cc:51 @2.29.2)
_HOSTNAME = re.compile(r"[A-Za-z0-9_-]+")
#: text before the host that is a launcher's tags and nothing else
_LAUNCHER_ONLY = re.compile(
    r"\s*(?:(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[[A-Za-z_]*\d+(?:\|\d+)?\]:|\[\d+\] )\s*)*"
)
#: hosts remembered per pid, to recover a host glued to text before it
MAX_HOSTS = 4096


def _launcher_rank(tags: str) -> int | None:
    for pattern in (_OMPI_TAG, _TORCHRUN_TAG, _SRUN_TAG, _BRACKET_RANK):
        found = pattern.search(tags)
        if found:
            return int(found.group(1))
    return None


# ---------------------------------------------------------------- messages


#: a connection after the channel number is erased (scan): ``Channel : 2[2] -> 3[3]
#: [send] via NET/IB/0/GDRDMA``; 2.4-2.6 say ``Ring`` and print NET peers without
#: brackets; some transcriptions drop the arrow. Bare messages keep their number.
_CONNECTION = re.compile(
    r"^(?:Channel|Ring)(?: \d+(?:/\d+)?)? : (\d+)(?:\[([0-9a-fA-Fx]+)\])?\s+(?:->\s+)?(\d+)"
    r"(?:\[([0-9a-fA-Fx]+)\])?(?: \[(send|receive)\])? via (.+?)$"
)
#: CollNet has no peer rank: ``CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA``
_COLLNET = re.compile(r"^(?:CollNet|Coll) \d+(?:/\d+)? : (\d+) \[(send|receive)\] via (.+?)$")
_RING_ORDER = re.compile(r"^(?:Channel|Ring)(?: \d+(?:/\d+)?)? :((?:\s+-?\d+)+)\s*$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-+.\w]*?\+cuda(\d+\.\d+))?")
_DRIVER = re.compile(r"^cudaDriverVersion (\d+)")
_BOOTSTRAP = re.compile(r"^Bootstrap ?: Using (?:\[\d+\])?(\S+)")
#: 2.4.8-2.7.8 list every interface: "Bootstrap : Using [0]eth0:10.0.0.1<0> [1]eth1:..."
_BOOTSTRAP_MORE = re.compile(r"\[\d+\](\S+)")
#: one device of an RDMA list: `` [%d]%s:%d/%s`` (net_ib.cc:247 @2.12.7), from 2.30.7 with
#: an optional ``:rail`` and ``:plane`` after the port (`` [0]mlx5_0:1:3/IB``, ``:`` + ``:2``
#: for a plane without rail: net_ib/init.cc:494-504 @2.30.7)
_NIC = re.compile(r"\[(\d+)\]([^\s:\[\]=]+):(\d+)(?::\d*(?::\d+)?)?(?:/(\w+))?(?:/\w+)*$")
#: one device a line: 2.3's "NET/IB: [%d] %s:%d/%s " (transport/net_ib.cu:137 @2.3.5), and
#: 2.27.3+'s "NET/IB: [%d] %s:%s:%d/%s provider=%s speed=%d ..." (device, uverbs, port,
#: link layer; NET subsystem, net_ib.cc @2.27.3)
_NIC_LINE = re.compile(
    r"^NET/(\w+): \[(\d+)\] ([^\s:\[\]]+):(?:[^\s:\[\]]+:)?(\d+)/(\w+)(?:\s+provider=.*)?\s*$"
)
#: "NET/IB : mlx5_0:1 Got async event : local access violation work queue error"
_ASYNC = re.compile(r"^NET/\w+ ?: ([^\s:]+):(\d+) Got async event")
#: one interface of a socket list, NCCL's or a TCP plugin's: `` [%d]%s:%s`` with the
#: address and port (``[0]eth0:10.0.0.1<0>``, ``[1]eth1:fe80::1%eth1<0>``)
_SOCKET_NIC = re.compile(r"\[(\d+)\]([^\s:\[\]]+):(\S+)")
#: NCCL_IB_MERGE_NICS (2.20.3-2.23.4): `` [%d]={`` + ``[%d] %s:%d/%s`` joined by ``, `` +
#: ``}`` (net_ib.cc:313 @2.20.3); the outer index is the one ``via NET/IB/N`` names
_MERGED_NIC = re.compile(r"\[(\d+)\]=\{([^}]*)\}")
_MERGED_PART = re.compile(r"\[\d+\] ([^\s:\[\],]+):(\d+)/(\w+)")
#: "NET/IB : Using [0]mlx5_0:1/RoCE ... ; OOB eth0:10.0.0.1<0>": the list, then the OOB
#: interface found from the end (one pattern ``Using (.*?)\s*(?:;\s*OOB (\S+))?\s*$`` tried
#: every split of a run of spaces: a 5000-space message took minutes)
_NET_LIST = re.compile(r"^NET/(\S+?) ?: Using (.*)")
_NET_LIST_OOB = re.compile(r";\s*OOB (\S+)\s*$")
_NET_OLD_IFACE = re.compile(r"^NET : Using interface (\S+)")
#: "Using network %s" (2.6.4+), 2.3's "Using internal Network %s" / "Using external
#: Network %s" (init.cu:74-77 @2.3.5)
_NETWORK = re.compile(r"^Using (?:internal |external )?[Nn]etwork (.+?)$")
#: a plugin's own lines: "NET/FastSocket : Connected after 1000 retries." (any module but
#: NCCL's IB and Socket, the plugin loader and aws-ofi-nccl's NET/OFI)
_MODULE_LINE = re.compile(r"^NET/(\w+) ?: ")
#: 2.27.3+: "Assigned NET plugin IB to comm" (the module a communicator uses; "Initialized
#: NET plugin X" only says X started, and a plugin that starts can still fail); a plugin
#: NCCL loaded: "NET/Plugin: Loaded net plugin AWS Libfabric (v8)" (plugin/net.cc)
_ASSIGNED = re.compile(r"^Assigned NET plugin (.+?) to comm")
_LOADED = re.compile(r"^NET/Plugin ?: Loaded (net|collnet|coll) plugin (.+?)(?: \(v\d+\))?$")
#: 2.28+: "Assigned GIN plugin %s to comm" (plugin/net.cc:249 @2.28.9), 2.29+ also "RMA"
_GIN = re.compile(r"^Assigned (GIN|RMA) plugin (\S+) to comm")
_SHARP_DEVICE = re.compile(r"^Sharp rank \d+/\d+ initialized on (\S+)")
#: nccl-rdma-sharp-plugins' p2p_plugin.c: "P2P plugin %s", "P2P plugin v10 %s"
_P2P_PLUGIN = re.compile(r"^P2P plugin (?:v\d+ )?(\S+)\s*$")
_PLUGIN_FAILED = re.compile(r"^Failed to initialize NET plugin (.+?)$")
#: "NCCL_IB_HCA set by environment to mlx5_0." (param.cc, 2.7.3+ for string values; the
#: integer form ends without a period), "NCCL_IB_HCA set to mlx5_0" (2.4-2.15, NET)
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment |by \S+ )?to (.*?)\.?$")
_LAST_VERBS_LIB = re.compile(r"^Count not open libibverbs\.so\.1\s*$")
_RING_GDR = re.compile(r"^Connected all rings(?:, use ring PXN (\d+) GDR (\d+))?")
#: the return-code trail of a failed call (include/checks.h: "%s:%d -> %d", with
#: " (%s)" for a system call's errno and " [Async thread]" / " [Progress Thread]")
#: 2.30.7 adds the function: "%s:%d (%s) -> %d" (debug.cc's location prefix)
_TRAIL = re.compile(
    r"^(\S+?\.(?:cc|cu|cpp|c|h|hpp)):(\d+)(?: \([^()\s]*\))? -> (\d+)(?: \(([^()]*)\))?"
)
#: GPUDirect RDMA decisions (graph/paths.cc, transport/net.cc, net_ib.cc, graph/topo.cc):
#: "GPU Direct RDMA Disabled for GPU %lx / HCA %d (distance %d > %d)" 2.8-2.26 (2.4:
#: "NET/%s : ... for GPU %d[%d] / HCA %d (distance %d >= %d)"; 2.27: "GPU %d / HCA %lx"),
#: "NET/IB : GPU Direct RDMA Disabled for HCA %d '%s' (no module)" 2.5-2.17,
#: "NET/%s : GPU Direct RDMA %s for HCA %d '%s'" 2.18+
_GDR_DISTANCE = re.compile(r"\(distance (\d+) (>=|>|<=|<) (\d+)\)")
_GDR_HCA_NAME = re.compile(r"HCA \S+ '([^']*)'")
_GDR_REASON = re.compile(r"'[^']*' \(([^()]+)\)\s*$")
_GDR_READ = re.compile(r"\bread (\d)")
#: aws-ofi-nccl's provider choice: "NET/OFI Selected Provider is efa (found 4 nics)"
#: (v1.1-v1.7), "NET/OFI Selected provider is efa, fabric is efa-direct (found 16 nics)"
_OFI_PROVIDER = re.compile(
    r"^NET/OFI Selected [Pp]rovider is ([^\s,]+),?(?: fabric is ([^\s,]+))?"
    r"(?:.*?\(found (\d+) nics?\))?\s*$"
)
#: aws-ofi-nccl starting: "NET/OFI Using aws-ofi-nccl 1.7.4-aws" (v1.7+), "NET/OFI
#: Initializing aws-ofi-nccl 1.4.0" (older); a plugin's "NET/FastSocket plugin initialized"
_OFI_VERSION = re.compile(r"^NET/OFI (?:Using|Initializing) aws-ofi-nccl \S+")
_PLUGIN_STARTED = re.compile(r"^NET/(\w+) plugin initialized")
#: "%d coll channels, [%d collnet channels, ]%d nvls channels, %d p2p channels, ..."
#: (init.cc, 2.17.1+)
_CHANNELS = re.compile(
    r"^(\d+) coll channels, (?:(\d+) collnet channels, )?(\d+) nvls channels, (\d+) p2p channels"
)
#: "NVLS multicast support is %savailable on dev %d" (transport/nvls.cc, 2.19+)
_NVLS_SUPPORT = re.compile(r"^NVLS multicast support is (not )?available on dev (\d+)")
#: Ray's log deduplication appends " [repeated 7x across cluster]" to a line
_RAY_REPEATED = re.compile(r"(?<!\s)\s*\[repeated \d+x across cluster\]\s*$")
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
#: failures NCCL logs at INFO level (``misc/ibvwrap.cc``, ``NET/IB : No device found``,
#: messages that NOWARN demoted from WARN)
_NOTABLE = re.compile(
    r"No device found|returned 0 devices|[Ff]ail|[Ee]rror|Could not|[Aa]bort|timed? ?out"
    r"|Disabled|not found|Unable|unable|not available|retrying|refused|unreachable"
    r"|No route to host"
)
#: "NET/IB : Made virtual device [%d] name=%s speed=%d ndevs=%d" (2.19+, NCCL_IB_MERGE_NICS
#: and the IBext plugins): the devices NCCL uses, made of one port or several
_VIRTUAL_NIC = re.compile(r"^NET/(\w+) ?: Made virtual device \[(\d+)\] name=(\S+)")
#: lines from frameworks and tools around NCCL that say a collective failed
_SIGNAL = re.compile(
    r"NCCL error|nccl\w*Error|ncclSystemError|ncclInternalError|ncclRemoteError"
    r"|ncclInvalidUsage|ncclUnhandledCudaError|Watchdog caught collective operation timeout"
    r"|Test NCCL failure|NCCL communicator was aborted|DistBackendError"
    # nccl-tests before its "Test" prefix: "NCCL failure all_reduce.cu:95 'unhandled cuda
    # error'", "Cuda failure common.cu:12 '...'" (src/common.h @b188a15)
    r"|(?:^|: )(?:NCCL|Cuda|CUDA) failure \S+\.(?:cu|cc|c|h):\d+ '"
    r"|unhandled system error|remote process exited or there was a network error"
    r"|NCCL WARN|<warn>"
)


#: what may stand before a bare ``NCCL version`` line: launcher tags and spaces only
_BARE_VERSION_PREFIX = re.compile(r"\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+: |\[\w+\]:?)?\s*")
#: longest text before a bare ``NCCL version`` that tags can be (the pattern above would
#: try every split of a long run of spaces between its two ``\s*``)
MAX_BARE_VERSION_PREFIX = 300
#: where an INFO message pasted without ``NCCL INFO`` may start: the first words of the
#: formats in :data:`BARE_KINDS` (anything before it is a launcher's or a log collector's);
#: a file name is at most 255 characters (``\S+`` ran to the end of the line from every
#: bracket of ``[0][0][0]...``)
_BARE_START = re.compile(
    r"(?:(?<=\s)|(?<=\])|^)"
    r"(?:Channel (?:\d+(?:/\d+)? )?: \d|Ring \d+ : \d|CollNet \d+(?:/\d+)? : \d"
    r"|NET/\S+? ?: (?:Using|No device|GPU Direct|Got completion)|NET/OFI Selected"
    r"|NET/IB: \[\d+\] |Using (?:internal |external )?[Nn]etwork "
    r"|Bootstrap ?: (?:Using|no socket)|NCCL_[A-Z0-9_]+ set (?:by \S+ )?to "
    r"|GPU Direct RDMA |comm 0x[0-9a-f]+ rank \d|ncclComm\w+ comm 0x"
    r"|\S{1,255}\.(?:cc|cu):\d+ -> \d|Connected all rings|\d+ coll channels,"
    r"|NVLS multicast support|(?:Assigned|Initialized) NET plugin|Failed to open libibverbs"
    r"|cudaDriverVersion \d|Call to ibv_\w+ failed|P2P plugin |Assigned (?:GIN|RMA) plugin)"
)
#: what may not stand right before a bare message: program text (a quoted string, an
#: assignment, a call), so that only pasted log lines are read
_BARE_PREFIX_REJECT = re.compile(r"[\"'=(,]\s*$")
#: what can stand before a message pasted alone: timestamps (ISO, syslog/journald with
#: host and program), launcher tags (``[1,0]<stdout>:``, ``[rank3]:``, srun's ``3: ``)
_BARE_TAGS_PATTERN = (
    r"^(?:\s*(?:\[[^\]\n]{0,60}\](?:<std(?:out|err)>)?:?"
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \S+ [^\s:]+:|\d+:))+\s*"
)
_BARE_TAGS = re.compile(_BARE_TAGS_PATTERN)
_BARE_TAGS_BYTES = re.compile(_BARE_TAGS_PATTERN.encode())
#: failures a message states whatever prefix it has: a completion error or a failed
#: verbs call pasted without ``NCCL WARN`` is still that failure
_BARE_FAILURE = re.compile(
    r"^NET/\S+? ?: Got completion|^Call to ibv_\w+ failed|^NET/IB ?: .*ibv_\w+ failed"
    r"|^Bootstrap ?: no socket interface found"
)


#: nccl-tests' device table: which process and host each rank runs in
_NCCL_TESTS_RANK = re.compile(
    r"#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)"
)
#: a line of program source in a traceback (``raise RuntimeError(f"NCCL error...")``)
_CODE_LINE = re.compile(r"\s*(?:raise |File \"|except |if |return |\^)")


def _fields(message: str) -> dict[str, str]:
    """``{"comm": "0x55d0", "rank": "3", ...}``: the first value of each name wins."""
    found: dict[str, str] = {}
    for hex_name, hex_value, name, value in _FIELDS.findall(message):
        found.setdefault(hex_name or name, hex_value or value)
    return found


#: what an INFO message says: (kind, data, text kept as evidence)
Message = tuple[str, tuple[object, ...], str]
_OTHER: Message = ("other", (), "")


def _m(kind: str, _process: None, data: tuple[object, ...] = (), text: str = "") -> Message:
    return (kind, data, text) if kind != "other" else _OTHER


def _message_event(message: str, process: None, source: str) -> Message:
    """Read an INFO message (what follows ``NCCL INFO``): ``(kind, data, text)``.

    Pure of the process that wrote it, so the reading of a message is cached and a
    message all processes print (``Using network IB``) is read once.
    """
    # without its trailing white space, the patterns end in ``(.+?)$``: one that ends in
    # ``(.+?)\s*$`` tries every run of spaces inside a message to its end (quadratic)
    message = message.rstrip()
    if message.endswith("cluster]"):
        message = _RAY_REPEATED.sub("", message)
    head = message[:8]
    if head.startswith(("Channel", "Ring ")):
        found = _CONNECTION.match(message)
        if found:
            src, src_dev, dst, dst_dev, direction, via = found.groups()
            return _m(
                "connection",
                process,
                (int(src), src_dev or "", int(dst), dst_dev or "", direction, via),
            )
        ring = _RING_ORDER.match(message)
        if ring:
            return _m("ring", process, tuple(int(r) for r in ring.group(1).split()))
        return _m("other", process)
    if head.startswith(("CollNet ", "Coll ")):
        found = _COLLNET.match(message)
        if found:
            rank, direction, via = found.groups()
            return _m("connection", process, (int(rank), "", -1, "", direction, via))
    if head.startswith("NCCL ver"):
        found = _VERSION.search(message)
        if found:
            return _m("version", process, found.groups())
    if head.startswith("cudaDriv"):
        found = _DRIVER.match(message)
        if found:
            number = int(found.group(1))
            return _m("cuda-driver", process, (f"{number // 1000}.{number % 1000 // 10}",))
    if head.startswith("Bootstra"):
        found = _BOOTSTRAP.match(message)
        if found:
            listed = _BOOTSTRAP_MORE.findall(message) or [found.group(1)]
            return _m("bootstrap", process, tuple(listed))
    if head.startswith("NET"):
        return _net_event(message, process)
    if head.startswith("Failed t") and "libibverbs" in message:
        return _m("ib-no-device", process, (), message)  # 2.11.4-2.29.7 INFO form
    if head.startswith("Count no") and _LAST_VERBS_LIB.match(message):
        # 2.30.3+: "Count not open %s" (sic) per library tried, NCCL_IBVERBS_LIB, then
        # libibverbs.so, then libibverbs.so.1 (ibvsymbols.cc:78-86 @2.30.7): only the
        # last one failing means no libibverbs (libibverbs.so is a -dev package's link)
        return _m("ib-no-device", process, (), message)
    if head.startswith("Net/IB: ") and "returned 0 devices" in message:
        return _m("ib-no-device", process, (), message)  # 2.3: call to devices() returned 0
    if head.startswith(("Using ne", "Using in", "Using ex")):
        found = _NETWORK.match(message)
        if found:
            return _m("network", process, (found.group(1), "using"))
    if head.startswith("Assigned"):  # 2.27.3+: "Assigned NET plugin IB to comm"
        found = _ASSIGNED.match(message)
        if found:
            return _m("network", process, (found.group(1), "assigned"))
        gin = _GIN.match(message)
        if gin:
            return _m("gin", process, (gin.group(1), gin.group(2)), message)
    if head.startswith("Sharp ra"):  # nccl-rdma-sharp-plugins: "Sharp rank %d/%d initialized on %s"
        found = _SHARP_DEVICE.match(message)
        if found:
            return _m("collnet-device", process, ("SHARP", found.group(1)), message)
    if head.startswith("P2P plug"):  # nccl-rdma-sharp-plugins: "P2P plugin [v10 ]IBext_v10"
        found = _P2P_PLUGIN.match(message)
        if found:
            return _m("net-module", process, (found.group(1),), message)
    if head.startswith(("Initiali", "Failed t", "Successf", "Disablin")) and "plugin" in message:
        failed = _PLUGIN_FAILED.match(message)
        if failed and failed.group(1) == "IB":
            return _m("ib-failed", process, (), message)  # 2.28.3+: IB found no device
        return _m("plugin", process, (), message)
    if head.startswith("NCCL_"):
        found = _ENV.match(message)
        if found:
            return _m("env", process, found.groups())
    if (
        "Init START" in message
        or "Init COMPLETE" in message
        or "- Abort" in message
        or ("- Destroy" in message)
    ):
        state = _STATE.search(message)
        fields = _fields(message)
        if state and "rank" in fields:
            return _m("comm", process, (state.group(1), state.group(2), fields))
    if head.startswith("comm 0x") and ("nRanks" in message or "nranks" in message):
        fields = _fields(message)
        if "rank" in fields:
            return _m("comm", process, ("Info", "", fields))
    if head.startswith("rank ") and "nranks" in message:  # 2.3: "rank 0 nranks 4"
        fields = _fields(message)
        return _m("comm", process, ("Info", "", fields))
    if message.startswith(("NVLS comm", "Connected NVLS")):
        return _m("nvls", process)
    if head.startswith("NVLS mul"):
        found = _NVLS_SUPPORT.match(message)
        if found:
            return _m("nvls-support", process, (found.group(1) is None,), message)
    if head[:1].isdigit() and " nvls channels" in message:
        found = _CHANNELS.match(message)
        if found:
            coll, collnet, nvls, p2p = found.groups()
            numbers = (int(coll), int(collnet) if collnet else -1, int(nvls), int(p2p))
            return _m("channels", process, numbers, message)
    if head.startswith("Connecte"):
        found = _RING_GDR.match(message)
        if found and found.group(2) is not None:
            return _m("ring-gdr", process, (int(found.group(2)),))
        return _m("connected", process)
    if "GPU Direct RDMA" in message:
        return _gdr_event(message, process)
    if " -> " in message:
        found = _TRAIL.match(message)
        if found:
            where, line, code, reason = found.groups()
            return _m("trail", process, (f"{where}:{line}", int(code), reason or ""), message)
    if _NOTABLE.search(message):
        return _m("notable", process, (), message)
    return _m("other", process)


def _gdr_event(message: str, process: None) -> Message:
    """``(enabled, distance, level, hca name, reason, read)`` of a GPUDirect RDMA line;
    what a form does not print is None."""
    decided = message.split("GPU Direct RDMA", 1)[1][:32]
    if " for " not in decided:  # "... would break GPU Direct RDMA protocol" (a hint)
        return (
            _m("notable", process, (), message)
            if _NOTABLE.search(message)
            else _m("other", process)
        )
    distance = _GDR_DISTANCE.search(message)
    name = _GDR_HCA_NAME.search(message)
    reason = _GDR_REASON.search(message)
    read = _GDR_READ.search(message)
    state = message.split("GPU Direct RDMA", 1)[1][:10]
    return _m(
        "gdr",
        process,
        (
            "Enabled" in state,
            int(distance.group(1)) if distance else None,
            int(distance.group(3)) if distance else None,
            name.group(1) if name else None,
            reason.group(1) if reason else None,
            int(read.group(1)) if read else None,
        ),
        message,
    )


def _nic_tokens(listing: str) -> list[tuple[int, str, int | None, str | None, str | None]]:
    """The devices of a ``NET/<name> : Using ...`` list: RDMA ports (``[0]mlx5_0:1/RoCE``)
    and interfaces with their address (``[0]eth1:10.0.0.2<0>``, a TCP plugin's list).

    >>> for nic in _nic_tokens(" [0]mlx5_0:1/RoCE [1]eth1:10.0.0.2<0> [2]efa0"):
    ...     print(nic)
    (0, 'mlx5_0', 1, 'RoCE', None)
    (1, 'eth1', None, None, '10.0.0.2<0>')
    (2, 'efa0', None, None, None)
    """
    found: list[tuple[int, str, int | None, str | None, str | None]] = []
    for token in listing.split():
        if not token.startswith("["):
            continue
        rdma = _NIC.match(token)
        if rdma:
            index, name, port, link = rdma.groups()
            found.append((int(index), name, int(port), link or None, None))
            continue
        iface = _SOCKET_NIC.match(token)
        if iface:
            index, name, address = iface.groups()
            found.append((int(index), name, None, None, address))
            continue
        alone = re.match(r"\[(\d+)\]([^\s:\[\]=]+)$", token)
        if alone:
            found.append((int(alone.group(1)), alone.group(2), None, None, None))
    return found


def _net_event(message: str, process: None) -> Message:
    if message.startswith("NET/Plugin"):
        loaded = _LOADED.match(message)
        if loaded and loaded.group(1) == "net":
            return _m("plugin", process, (loaded.group(2),), message)
        return _m("plugin", process, (), message)
    if message.startswith("NET/OFI "):
        provider = _OFI_PROVIDER.match(message)
        if provider:
            name, fabric, count = provider.groups()
            num_nics = int(count) if count else None
            return _m("provider", process, (name, fabric, num_nics), message)
        if _OFI_VERSION.match(message):
            return _m("net-module", process, ("AWS Libfabric",), message)
        if _NOTABLE.search(message):
            return _m("notable", process, (), message)
        return _m("other", process)
    if "No device found" in message:
        return _m("ib-no-device", process, (), message)
    if "GPU Direct RDMA" in message:
        return _gdr_event(message, process)
    single = _NIC_LINE.match(message)
    if single:
        network, index, name, port, link = single.groups()
        return _m("net-nic", process, (network, int(index), name, int(port), link))
    virtual = _VIRTUAL_NIC.match(message)
    if virtual:
        network, index, name = virtual.groups()
        return _m("net-nic", process, (network, int(index), name, None, None))
    old = _NET_OLD_IFACE.match(message)
    if old:  # 2.3: "NET : Using interface eth0:10.0.0.1<0>", one line per interface
        name, _, address = old.group(1).partition(":")
        return _m("net-iface", process, (name, address or None))
    found = _NET_LIST.match(message)
    if found:
        network, listing = found.groups()
        tail = _NET_LIST_OOB.search(listing)
        oob = tail.group(1) if tail else None
        listing = (listing[: tail.start()] if tail else listing).rstrip()
        nics: tuple[tuple[int, str, int | None, str | None, str | None], ...]
        if network == "Socket":  # [0]eth0:10.0.0.1<0>: an interface and its address
            nics = tuple(
                (int(i), name, None, None, address)
                for i, name, address in _SOCKET_NIC.findall(listing)
            )
        else:
            merged = []
            for found in _MERGED_NIC.finditer(listing):  # one device made of several ports
                parts = _MERGED_PART.findall(found.group(2))
                links = {link for _, _, link in parts}
                name = "+".join(f"{dev}:{port}" for dev, port, _ in parts) or found.group(0)
                link = links.pop() if len(links) == 1 else None
                merged.append((int(found.group(1)), name, None, link, None))
            if merged:
                listing = _MERGED_NIC.sub(" ", listing)
            nics = tuple(sorted(merged + _nic_tokens(listing), key=lambda nic: nic[0]))
        # "Using ; OOB ...": a list of no device; "NET/Socket: Using 2 threads and 8
        # sockets per thread" or "Using interface eth0 for sideband": not a list
        if nics or not listing.strip():
            return _m("net-list", process, (network, nics, oob))
    if _NOTABLE.search(message):
        return _m("notable", process, (), message)
    module = _MODULE_LINE.match(message) or _PLUGIN_STARTED.match(message)
    if module and module.group(1) not in ("IB", "Socket", "Plugin", "OFI"):
        return _m("net-module", process, (module.group(1),), message)
    return _m("other", process)


#: where a second NCCL line starts inside a message (`` | host:pid:tid [d] NCCL INFO``)
_GLUED = re.compile(r"(?:\s\|\s*|\s)\S*:\d+:\d+ \[-?\d+\](?: \S+:\d+)? NCCL (?:INFO|WARN) ")
#: the prefix of an NCCL line glued to the end of another (no newline between them):
#: the host is the run of host characters before ``:pid:tid``, possibly with the first
#: line's last word in front of it (``...via NET/IB/0/GDRDMAnode2:1008:1008 [0] NCCL INFO``)
_GLUED_PREFIX = re.compile(
    rb":(\d+):\d+ \[-?\d+\](?: [^\[\]\n]*?:\d+(?: \([^()\s]*\))?)? NCCL (?:INFO|WARN) "
)
#: the host characters a glued prefix's run can hold: found backwards from its ``:pid``
#: (a pattern starting with ``[\w-]*`` tried every position of a long word, and took
#: minutes on one line of 200 kB); a host is at most 255 characters, the rest is text
_HOST_RUN = re.compile(rb"[\w-]*")
MAX_HOST_RUN = 512
#: how a connection line ends (transport/net.cc, p2p.cc, shm.cc): a word glued to a host
#: after it is cut there when the host is not known yet
_TRANSPORT_TAIL = re.compile(rb"(?:GDRDMA(?:\(PCI\))?|Shared|read|CE|CUMEM|IPC|MNNVL|direct)")


def _where(text: str) -> str | None:
    """The ``file.cc:123`` that ends ``text``: from the first word after the last bracket
    before it (a plugin's function name holds spaces) to its line number.

    >>> _where("ts=1 net.cc:93"), _where("[x] int f(int a):12  "), _where("no place")
    ('ts=1 net.cc:93', 'int f(int a):12', None)
    """
    end = _WHERE_END.search(text)
    if end is None:
        return None
    colon = end.start()
    after_bracket = max(text.rfind("[", 0, colon), text.rfind("]", 0, colon)) + 1
    start = _WHERE_START.search(text, after_bracket, colon)
    return text[start.start() : end.end(1)] if start else None


def _first_line(message: str) -> str:
    """The message without another process's line glued to its end."""
    if "NCCL INFO " in message or "NCCL WARN " in message:
        glued = _GLUED.search(message)
        if glued:
            return message[: glued.start()].rstrip(" |")
    return message


class Classifier:
    """Classifies lines, remembering what each distinct prefix says."""

    __slots__ = ("_emitted", "_hosts", "_messages", "_prefixes", "quoted")

    def __init__(self) -> None:
        #: (process, transport) whose first connection line the scanner located already
        self.quoted: set[tuple[str, object]] = set()
        #: lines of IDEMPOTENT kinds already reported (a process repeating "Using network
        #: IB" for every communicator says nothing new)
        self._emitted: set[bytes] = set()
        #: pid -> hosts seen with it on lines nothing was glued to
        self._hosts: dict[int, set[str]] = {}
        self._prefixes: dict[tuple[bytes, str], tuple[ProcessRef | None, str | None]] = {}
        self._messages: dict[bytes, tuple[str, tuple[object, ...], str, VersionRange | None]] = {}

    def _emit(self, line: bytes) -> None:
        if len(self._emitted) >= MAX_CACHED:
            self._emitted.clear()  # repeats of forgotten lines are reported again: harmless
        self._emitted.add(line)

    def process(self, prefix: bytes, source: str) -> tuple[ProcessRef | None, str | None]:
        """The process a prefix names and, on WARN lines, the ``file.cc:line``."""
        cached = self._prefixes.get((prefix, source))
        if cached is not None:
            return cached
        text = prefix.decode("utf-8", "replace")
        if text[:1].isdigit() or "-" in text[:12] or "[" in text[:2]:
            text = _TIMESTAMP.sub(" ", text)
        found = _PREFIX.search(text)
        if found:
            tags = text[: found.start()]
            rank = _launcher_rank(tags) if tags.strip() else None
            pid = int(found.group("pid"))
            host = self._host(found.group("host"), pid, glued=not _LAUNCHER_ONLY.fullmatch(tags))
            ref: ProcessRef = (
                f"{host or '?'}:{pid}",
                host,
                pid,
                rank,
                int(found.group("dev")),
            )
            where = found.group("where")
            if where and found.group("func"):
                where = f"{where} ({found.group('func')})"
            value: tuple[ProcessRef | None, str | None] = (ref, where)
        else:
            rank = _launcher_rank(text)
            key = source if rank is None else f"{source}[rank {rank}]"
            value = ((key, None, None, rank, None), _where(text))
        if len(self._prefixes) >= MAX_CACHED:
            self._prefixes.clear()
        self._prefixes[(prefix, source)] = value
        return value

    def _host(self, host: str, pid: int, *, glued: bool) -> str | None:
        """The host of a prefix: program output glued in front of it (``loss=0.52node1``)
        is cut off where a host this pid printed before ends the text."""
        valid = bool(_HOSTNAME.fullmatch(host))
        if glued or not valid:
            # the same process's host first, then any host seen before: another line's
            # text glued in front of this prefix ("...66015g183:161258:...") ends in one
            for known in (self._hosts.get(pid, ()), self._hosts.get(-1, ())):
                ends = [h for h in known if host.endswith(h) and h != host]
                if ends:
                    return max(ends, key=len)
        if valid and len(self._hosts) < MAX_HOSTS:
            self._hosts.setdefault(pid, set()).add(host)
            self._hosts.setdefault(-1, set()).add(host)  # -1: every pid's
        return host or None

    def split(self, line: bytes) -> list[bytes]:
        """A line with another NCCL line glued to its end (no newline between them), cut
        into the lines it holds; a line of one NCCL line comes back alone.

        >>> parts = Classifier().split(
        ...     b"n1:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA"
        ...     b"n2:8:8 [0] NCCL INFO Using network IB"
        ... )
        >>> [part.split(b" NCCL INFO ")[1] for part in parts]
        [b'Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA', b'Using network IB']
        """
        # a loop over offsets, not recursion on the rest of the line: a line of thousands of
        # glued lines exhausted the stack, and the copies of its rest took a gigabyte. Every
        # glued line is read; the time is linear in the line, which is at most
        # MAX_LINE_BYTES (scan.py: a longer one is cut, and the cut is noted)
        parts: list[bytes] = []
        start = 0  # where the line not yet cut begins
        while (cut := self._glued_at(line, start)) is not None:
            parts.append(line[start:cut].rstrip(b" |"))
            start = cut
        parts.append(line[start:] if start else line)
        return parts

    def _glued_at(self, line: bytes, start: int) -> int | None:
        """Where the next NCCL line glued into ``line[start:]`` begins, if one is."""
        markers = [
            i for i in (line.find(b"NCCL INFO ", start), line.find(b"NCCL WARN ", start)) if i >= 0
        ]
        if not markers:
            return None
        first = min(markers)
        found = _GLUED_PREFIX.search(line, first + 10)
        if found is None:
            return None
        pid = int(found.group(1))
        # the run of host characters before ":pid", read backwards from there
        back = max(first + 10, found.start() - MAX_HOST_RUN)
        window = line[back : found.start()][::-1]
        host_run = _HOST_RUN.match(window)
        length = host_run.end() if host_run else 0
        run = window[:length][::-1]
        run_start = found.start() - length
        cut = run_start
        known = [h for h in self._hosts.get(pid, ()) if run.endswith(h.encode())]
        if not known:  # this pid's first line: any host seen before may end the run
            known = [h for h in self._hosts.get(-1, ()) if run.endswith(h.encode())]
        if known:  # the host this pid printed before
            cut = found.start() - len(max(known, key=len))
        else:  # a connection line's last word (GDRDMA, CUMEM, ...) before the host
            tail = _TRANSPORT_TAIL.match(run)
            if tail and tail.end() < len(run) and line.find(b" via ", start, cut) >= 0:
                cut += tail.end()
        return cut

    def __call__(self, line: bytes, source: str) -> Event | None:
        at = line.find(b"NCCL INFO ")
        if at >= 0:
            raw = line[at + 10 :]
            reading = self._messages.get(raw)
            if reading is None:
                message = _first_line(raw.decode("utf-8", "replace").rstrip("\r"))
                kind, data, text = _message_event(message, None, source)
                if kind == "notable":
                    text = message
                if kind in LAZY_HINT_KINDS:  # frequent: the folder asks for a few
                    text, hint = message, None
                else:
                    hint = hint_for(kind, message) if kind != "other" else None
                reading = (kind, data, text, hint)
                if len(self._messages) >= MAX_CACHED:
                    self._messages.clear()  # a new phase of the log: its own messages
                self._messages[raw] = reading
            kind, data, text, hint = reading
            if kind in IDEMPOTENT:
                if line in self._emitted:
                    return None
                self._emit(line)
            prefix = line[:at]
            if kind == "other":
                # the process exists even if all it said is irrelevant: say so once
                if (prefix, source) in self._prefixes:
                    return None
                kind = "seen"
            process, _ = self.process(prefix, source)
            event = Event(kind, process, data, text, source)
            event.hint = hint
            return event
        at = line.find(b"NCCL WARN ")
        if at >= 0:
            process, where = self.process(line[:at], source)
            message = _first_line(line[at + 10 :].decode("utf-8", "replace").rstrip("\r"))
            if message.endswith("cluster]"):
                message = _RAY_REPEATED.sub("", message)
            event = Event("warn", process, (where,), message, source)
            event.hint = hint_for("warn", message)
            return event
        text = line.decode("utf-8", "replace").rstrip("\r")
        at = text.find("NCCL version ")
        if at >= 0 and (
            (at <= MAX_BARE_VERSION_PREFIX and _BARE_VERSION_PREFIX.fullmatch(text[:at]))
            or (
                at < 300 and not _BARE_PREFIX_REJECT.search(text, 0, at) and "NCCL" not in text[:at]
            )
        ):
            version = _VERSION.match(text, at)
            if version:
                process, _ = self.process(line[: line.find(b"NCCL version")], source)
                return Event("bare-version", process, version.groups(), text.strip(), source)
        placement = _NCCL_TESTS_RANK.search(text)
        if placement:  # nccl-tests' "#  Rank  3 Group  0 Pid  4711 on  node1 device  3 [...]"
            rank, pid, host, device = placement.groups()
            return Event("placement", None, (int(rank), host, int(pid), int(device)), "", source)
        if _SIGNAL.search(text) and not _CODE_LINE.match(text):
            version = _VERSION.search(text)
            return Event("signal", None, version.groups() if version else (), text.strip(), source)
        return self._bare(line, text, source)

    def _bare(self, line: bytes, text: str, source: str) -> Event | None:
        """An NCCL message pasted without ``NCCL INFO`` (``Using network IB``, ``Channel
        00/0 : 0[0] -> 1[1] via NET/IB/0``), behind whatever tags or prefix: read when its
        format is one of :data:`BARE_KINDS`' (a program's own text does not match those
        by chance), or when it states a failure (:data:`_BARE_FAILURE`)."""
        start = _BARE_START.search(text)
        if start is None or _BARE_PREFIX_REJECT.search(text, 0, start.start()):
            return self._bare_warn(line, text, source)
        message = _first_line(text[start.start() :].strip())
        kind, data, kept = _message_event(message, None, source)
        if kind not in BARE_KINDS:
            if not _BARE_FAILURE.match(message):
                return self._bare_warn(line, text, source)
            # a failure with no process to pin it on: like a framework's error line
            return Event("signal", None, (), message, source)
        if kind in IDEMPOTENT:
            if line in self._emitted:
                return None
            self._emit(line)
        cut = len(text[: start.start()].encode())
        process, _ = self.process(line[:cut], source)
        event = Event(kind, process, data, kept or message, source)
        if kind not in LAZY_HINT_KINDS:
            event.hint = hint_for(kind, message)
        return event

    def _bare_warn(self, line: bytes, text: str, source: str) -> Event | None:
        """A WARN pasted without ``NCCL WARN`` (``Call to posix_fallocate failed : No
        space left on device``), behind a timestamp or launcher tag: read as a WARN when
        its text is a whole WARN format of NCCL or a plugin (hpnet.ncclog.formats), of the
        rank a launcher tag names, else of no known process; its ``file:line`` is not
        known."""
        tags = _BARE_TAGS.match(text)
        cut = tags.end() if tags else 0
        message = text[cut:].strip()
        if not message or not load_table().bare_warn(message):
            return None
        process = None
        if cut:
            named, _ = self.process(line[: len(text[:cut].encode())], source)
            # a launcher's rank tag names a process; a timestamp alone does not
            process = named if named is not None and named[3] is not None else None
        event = Event("warn", process, (None,), message, source)
        event.hint = hint_for("warn", message)
        return event


def bare_warn_start(line: bytes) -> bool:
    """Can ``line`` be a WARN pasted without its prefix (a cheap test for the scanner:
    the start of its message is the start of a WARN format)?"""
    tags = _BARE_TAGS_BYTES.match(line)
    rest = line[tags.end() :] if tags else line
    return rest.lstrip()[:BARE_PREFIX_CHARS] in load_table().bare_starts


def classify(line: bytes, source: str) -> Event | None:
    """Classify one line with a fresh :class:`Classifier` (tests and one-offs).

    >>> classify(b"vm:3177:3177 [0] NCCL INFO Using network Socket", "x").data
    ('Socket', 'using')
    >>> e = classify(b"[1,2]<stdout>:gpu1:41:41 [2] NCCL INFO NET/IB : No device found.", "x")
    >>> e.kind, e.process
    ('ib-no-device', ('gpu1:41', 'gpu1', 41, 2, 2))
    """
    return Classifier()(line, source)
