"""What the NET subsystem's ``INFO`` messages say: the network modules' device lists
(NCCL's IB and Socket, a plugin's, 2.3's one device a line, merged and virtual
devices), the plugin loader, aws-ofi-nccl's provider, and the GPUDirect RDMA decisions.
Pure functions of the message text, for :func:`hpnet.ncclog.messages.read_message`.
"""

from __future__ import annotations

import re

from hpnet.ncclog.reading import NOTABLE, Message, reading

__all__ = ["gdr_event", "net_event"]

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

#: a plugin's own lines: "NET/FastSocket : Connected after 1000 retries." (any module but
#: NCCL's IB and Socket, the plugin loader and aws-ofi-nccl's NET/OFI)
_MODULE_LINE = re.compile(r"^NET/(\w+) ?: ")

#: a plugin NCCL loaded: "NET/Plugin: Loaded net plugin AWS Libfabric (v8)" (plugin/net.cc)
_LOADED = re.compile(r"^NET/Plugin ?: Loaded (net|collnet|coll) plugin (.+?)(?: \(v\d+\))?$")

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
#: aws-ofi-nccl sets NCCL_TOPO_FILE (setenv, overwriting) to its platform's topology, or
#: to one it wrote (``/proc/self/fd/N``): "[Running on %s platform, ]Setting NCCL_TOPO_FILE
#: environment variable to %s" (nccl_ofi_net.c / nccl_ofi_topo.c)
_OFI_TOPO_FILE = re.compile(r"^NET/OFI .*?Setting NCCL_TOPO_FILE environment variable to (\S+)")

_PLUGIN_STARTED = re.compile(r"^NET/(\w+) plugin initialized")

#: "NET/IB : Made virtual device [%d] name=%s speed=%d ndevs=%d" (2.19+, NCCL_IB_MERGE_NICS
#: and the IBext plugins): the devices NCCL uses, made of one port or several
#: a queue pair NET/IB created, with the GID it uses (transport/net_ib.cc, every release:
#: "NET/IB: Dev %d Port %d qpn %d mtu %d GID %ld (%lX/%lX)", 2.20+ "NET/IB: %s %d IbDev
#: ..." with ECE and FIFO keys between): the GID's index and its two 64-bit halves as
#: the host's integers print them (hpnet.ncclog.gids reads the address out)
_QP_GID = re.compile(
    r"^NET/IB: .*?\bqpn \d+ mtu \d+\b.*? GID (\d+) \(([0-9A-Fa-f]+)/([0-9A-Fa-f]+)\)"
)
_VIRTUAL_NIC = re.compile(r"^NET/(\w+) ?: Made virtual device \[(\d+)\] name=(\S+)")


def net_event(message: str, process: None) -> Message:
    """Read a message that starts with ``NET``."""
    if message.startswith("NET/Plugin"):
        loaded = _LOADED.match(message)
        if loaded and loaded.group(1) == "net":
            return reading("plugin", process, (loaded.group(2),), message)
        return reading("plugin", process, (), message)
    if message.startswith("NET/OFI "):
        return _ofi_event(message)
    if "No device found" in message:
        return reading("ib-no-device", process, (), message)
    if "GPU Direct RDMA" in message:
        return gdr_event(message, process)
    qp = _QP_GID.match(message)
    if qp:
        index, prefix, interface = qp.groups()
        return reading("ib-qp", process, (int(index), prefix, interface), message)
    found = _net_nic_event(message)
    if found is None:
        found = _net_list_event(message)
    if found is not None:
        return found
    if NOTABLE.search(message):
        return reading("notable", process, (), message)
    module = _MODULE_LINE.match(message) or _PLUGIN_STARTED.match(message)
    if module and module.group(1) not in ("IB", "Socket", "Plugin", "OFI"):
        return reading("net-module", process, (module.group(1),), message)
    return reading("other", process)


def _ofi_event(message: str) -> Message:
    """aws-ofi-nccl's lines: the provider and fabric it chose, its version."""
    provider = _OFI_PROVIDER.match(message)
    if provider:
        name, fabric, count = provider.groups()
        num_nics = int(count) if count else None
        return reading("provider", None, (name, fabric, num_nics), message)
    if _OFI_VERSION.match(message):
        return reading("net-module", None, ("AWS Libfabric",), message)
    topology = _OFI_TOPO_FILE.match(message)
    if topology:
        return reading("env", None, ("NCCL_TOPO_FILE", topology.group(1)))
    if NOTABLE.search(message):
        return reading("notable", None, (), message)
    return reading("other", None)


def _net_nic_event(message: str) -> Message | None:
    """One device a line: 2.3's NICs and interfaces, 2.19+'s virtual devices."""
    single = _NIC_LINE.match(message)
    if single:
        network, index, name, port, link = single.groups()
        return reading("net-nic", None, (network, int(index), name, int(port), link))
    virtual = _VIRTUAL_NIC.match(message)
    if virtual:
        network, index, name = virtual.groups()
        return reading("net-nic", None, (network, int(index), name, None, None))
    old = _NET_OLD_IFACE.match(message)
    if old:  # 2.3: "NET : Using interface eth0:10.0.0.1<0>", one line per interface
        name, _, address = old.group(1).partition(":")
        return reading("net-iface", None, (name, address or None))
    return None


def _net_list_event(message: str) -> Message | None:
    """``NET/<name> : Using <devices>[ ; OOB <interface>]``: a network module's devices."""
    found = _NET_LIST.match(message)
    if not found:
        return None
    network, listing = found.groups()
    tail = _NET_LIST_OOB.search(listing)
    oob = tail.group(1) if tail else None
    listing = (listing[: tail.start()] if tail else listing).rstrip()
    nics: tuple[tuple[int, str, int | None, str | None, str | None], ...]
    if network == "Socket":  # [0]eth0:10.0.0.1<0>: an interface and its address
        nics = tuple(
            (int(i), name, None, None, address) for i, name, address in _SOCKET_NIC.findall(listing)
        )
    else:
        nics = _rdma_nics(listing)
    # "Using ; OOB ...": a list of no device; "NET/Socket: Using 2 threads and 8
    # sockets per thread" or "Using interface eth0 for sideband": not a list
    if nics or not listing.strip():
        return reading("net-list", None, (network, nics, oob))
    return None


def _rdma_nics(listing: str) -> tuple[tuple[int, str, int | None, str | None, str | None], ...]:
    """The devices of an RDMA module's list, a device made of several ports as one."""
    merged = []
    for found in _MERGED_NIC.finditer(listing):  # one device made of several ports
        parts = _MERGED_PART.findall(found.group(2))
        links = {link for _, _, link in parts}
        name = "+".join(f"{dev}:{port}" for dev, port, _ in parts) or found.group(0)
        link = links.pop() if len(links) == 1 else None
        merged.append((int(found.group(1)), name, None, link, None))
    if merged:
        listing = _MERGED_NIC.sub(" ", listing)
    return tuple(sorted(merged + _nic_tokens(listing), key=lambda nic: nic[0]))


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


def gdr_event(message: str, process: None) -> Message:
    """``(enabled, distance, level, hca name, reason, read)`` of a GPUDirect RDMA line;
    what a form does not print is None."""
    decided = message.split("GPU Direct RDMA", 1)[1][:32]
    if " for " not in decided:  # "... would break GPU Direct RDMA protocol" (a hint)
        return (
            reading("notable", process, (), message)
            if NOTABLE.search(message)
            else reading("other", process)
        )
    distance = _GDR_DISTANCE.search(message)
    name = _GDR_HCA_NAME.search(message)
    reason = _GDR_REASON.search(message)
    read = _GDR_READ.search(message)
    state = message.split("GPU Direct RDMA", 1)[1][:10]
    return reading(
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
