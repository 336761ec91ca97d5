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

__all__ = ["RAY_REPEATED", "VERSION", "Message", "read_message"]


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
VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-+.\w]*?\+cuda(\d+\.\d+))?")
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
        found = VERSION.search(message)
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
