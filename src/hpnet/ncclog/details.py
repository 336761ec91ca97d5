"""What a failure signature's lines say besides the signature: the numbers and names in
them, read out for the finding's conclusions (:func:`line_details`)."""

from __future__ import annotations

import errno
import ipaddress
import os
import re
from collections.abc import Callable, Sequence

from hpnet.ncclog.model import RESULT_NAMES, LogLine
from hpnet.ncclog.recovery import ABSORBED

__all__ = ["line_details"]


#: ibv_wc_status (rdma-core libibverbs/verbs.h), as NCCL prints it: a number up to
#: 2.28.3, ``IBV_WC_..._ERR(N)`` from 2.28.7
_WC_STATUS = {
    1: "IBV_WC_LOC_LEN_ERR",
    2: "IBV_WC_LOC_QP_OP_ERR",
    3: "IBV_WC_LOC_EEC_OP_ERR",
    4: "IBV_WC_LOC_PROT_ERR",
    5: "IBV_WC_WR_FLUSH_ERR",
    6: "IBV_WC_MW_BIND_ERR",
    7: "IBV_WC_BAD_RESP_ERR",
    8: "IBV_WC_LOC_ACCESS_ERR",
    9: "IBV_WC_REM_INV_REQ_ERR",
    10: "IBV_WC_REM_ACCESS_ERR",
    11: "IBV_WC_REM_OP_ERR",
    12: "IBV_WC_RETRY_EXC_ERR",
    13: "IBV_WC_RNR_RETRY_EXC_ERR",
    14: "IBV_WC_LOC_RDD_VIOL_ERR",
    15: "IBV_WC_REM_INV_RD_REQ_ERR",
    16: "IBV_WC_REM_ABORT_ERR",
    17: "IBV_WC_INV_EECN_ERR",
    18: "IBV_WC_INV_EEC_STATE_ERR",
    19: "IBV_WC_FATAL_ERR",
    20: "IBV_WC_RESP_TIMEOUT_ERR",
    21: "IBV_WC_GENERAL_ERR",
}
_STATUS = re.compile(r"with (?:error |status=)(?:\w*\()?(\d+)")


_PEER = re.compile(r"from peer (\S+)")
_LOCAL_GID = re.compile(r"localGid (\S+)")
_REMOTE_GID = re.compile(r"remoteGids? ?(\S+)")
_HCA = re.compile(r"\bhca (\S+)")


def line_details(signature: str, lines: Sequence[LogLine]) -> tuple[str, ...]:
    """What a signature's lines say besides (a finding's conclusions): for completion
    errors, what each status number means and the NICs and peers the lines name (2.20+
    print the local HCA and both GIDs); for a connection that was not NCCL's, the bytes
    it sent; for a failed TCP connection, what its error says of the peer; and the
    others of :data:`_READERS`."""
    if signature in _SOCKET_SIGNATURES:
        return _socket_errors(lines)
    reader = _READERS.get(signature)
    if reader is not None:
        return reader(lines)
    if signature.startswith("completion"):
        return _completions(lines)
    return ()


def _completions(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """What each completion status means, and the NICs and peers the lines name."""
    codes = sorted({int(m.group(1)) for line in lines for m in [_STATUS.search(line.text)] if m})
    said = [
        f"status {code} is {_WC_STATUS[code]} (rdma-core's ibv_wc_status)"
        for code in codes
        if code in _WC_STATUS
    ]
    seen: dict[str, None] = {}
    for line in lines:
        hca, peer = _HCA.search(line.text), _PEER.search(line.text)
        local, remote = _LOCAL_GID.search(line.text), _REMOTE_GID.search(line.text)
        parts = []
        if hca:
            parts.append(f"on the local NIC {hca.group(1)}")
        if local:
            kind = " (IPv4-mapped: RoCE)" if local.group(1).startswith("::ffff:") else ""
            parts.append(f"local GID {local.group(1)}{kind}")
        if peer:
            parts.append(f"peer {peer.group(1)}")
        if remote:
            parts.append(f"remote GID {remote.group(1)}")
        if parts:
            seen.setdefault("the failed transfer: " + ", ".join(parts), None)
    if any(line.text.rstrip().endswith("(Flush)") for line in lines):
        said.append(_FLUSH)
    return tuple(said + list(seen)[:3])


#: NCCL names the request a completion belongs to (net_ib.cc reqTypeStr: Send, Recv,
#: Flush); a flush is an RDMA read over a queue pair connected to itself (ncclIbIflush,
#: the gpuFlush QP, @v2.20.5-1)
_FLUSH = (
    "(Flush) is NCCL's GPUDirect flush, this NIC reading this host's own GPU memory over a "
    "queue pair connected to itself: the failure lies between this host's NIC and GPU (the "
    "PCIe path, ACS or the IOMMU, the peer-memory driver), not in the network nor at the "
    "peer the line names; NCCL_GDR_FLUSH_DISABLE=1 takes the flush away to confirm"
)


#: NCCL 2.16.2-2.26.6, src/misc/socket.cc socketFinalizeAccept: ``WARN("socketFinalizeAccept:
#: wrong magic %lx != %lx", magic, sock->magic)``, the 8 bytes received first
_MAGIC = re.compile(r"wrong magic ([0-9a-fA-F]{1,16}) != ([0-9a-fA-F]{1,16})")
_HTTP = ("GET ", "POST", "HEAD", "PUT ", "OPTI", "HTTP")


def _foreign_bytes(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """The bytes a foreign connection sent instead of NCCL's magic, as text where they
    are printable: NCCL read them into a 64-bit number on a little-endian host (x86,
    Arm) and printed it in hex, so the first byte is the number's lowest.

    >>> _foreign_bytes([LogLine(source="a", line_number=1,
    ...     text="x NCCL WARN socketFinalizeAccept: wrong magic 74656d2f20544547 != 7970663b")])
    ("its first 8 bytes read 'GET /met': an HTTP request (a metrics scraper or health check)",)
    """
    said: dict[str, None] = {}
    for line in lines:
        found = _MAGIC.search(line.text)
        if found is None:
            continue
        sent = int(found.group(1), 16).to_bytes(8, "little")
        if not all(0x20 <= byte < 0x7F for byte in sent):
            said.setdefault(f"it sent {found.group(1)} where NCCL's magic was {found.group(2)}")
            continue
        text = sent.decode("ascii")
        http = (
            ": an HTTP request (a metrics scraper or health check)"
            if text.startswith(_HTTP)
            else ""
        )
        said.setdefault(f"its first 8 bytes read '{text}'{http}")
    return tuple(said)[:3]


#: the findings of TCP connections (bootstrap, proxy, NET/Socket) whose lines may hold
#: the system's error text
_SOCKET_SIGNATURES = frozenset(
    {"connection-refused", "net-socket-error", "socket-bind-failed", "socket-failed"}
)
#: strerror texts of connect / send / recv errors (Linux errno), as NCCL prints them after
#: 'failed : ' or in '<code>(<text>)', and what each says of the other end
_SOCKET_ERRNO = (
    (
        "No route to host",
        "'No route to host' (EHOSTUNREACH): the peer's host did not answer at that address "
        "(down, or a wrong address), or a firewall rejected the connection "
        "(iptables/firewalld REJECT with icmp-host-prohibited gives this error; ping may "
        "still work)",
    ),
    (
        "Network is unreachable",
        "'Network is unreachable' (ENETUNREACH): this host has no route to the peer's "
        "network: the address is on an interface the hosts do not share",
    ),
    (
        "Connection refused",
        "'Connection refused' (ECONNREFUSED): the peer's host answered but nothing listened "
        "on that port: the peer process had exited or not started yet, or the address is "
        "another host's",
    ),
    (
        "Connection timed out",
        "'Connection timed out' (ETIMEDOUT): nothing answered at all: a firewall dropping "
        "the packets, or an address this host cannot reach (a wrong interface)",
    ),
    (
        "Connection reset by peer",
        "'Connection reset by peer' (ECONNRESET): the other end dropped the connection at "
        "once: its process exited or closed the socket (an aborting rank does), or something "
        "other than the NCCL peer owns that address and port",
    ),
    (
        "Cannot assign requested address",
        "'Cannot assign requested address' (EADDRNOTAVAIL): the address is on no interface "
        "of this host or container: another host's (NCCL_COMM_ID), or an IPv6 link-local one "
        "without its interface",
    ),
    (
        "Address already in use",
        "'Address already in use' (EADDRINUSE): another process holds the port (a fixed "
        "NCCL_COMM_ID port shared by two jobs, or one that did not exit)",
    ),
    (
        "Software caused connection abort",
        "'Software caused connection abort' (ECONNABORTED): NCCL before 2.24 could retry a "
        "refused or timed-out connect on the same socket, which then fails so: the first "
        "error was most likely a refused or timed-out connection, not shown "
        "(NVIDIA/nccl#1515)",
    ),
)


def _socket_errors(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """What each system error in the lines says of the connection's other end.

    >>> _socket_errors([LogLine(source="a", line_number=1, text="x NCCL WARN "
    ...     "socketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) "
    ...     "errno 115(Operation now in progress)")])[0][:45]
    "'No route to host' (EHOSTUNREACH): the peer's"
    """
    said = []
    for text, meaning in _SOCKET_ERRNO:
        found = [t for line in lines if text in (t := line.message or line.text)]
        if not found:
            continue
        open_only = text == "Connection timed out" and all(_OPEN_CALL.search(t) for t in found)
        said.append(_TIMED_OUT_OPEN if open_only else meaning)
    return (*_local_peer(lines), *_unroutable(lines), *said)[:3]


#: the process's own host (its prefix) and the peer a closed connection names
_PREFIX_HOST = re.compile(r"^(?:\S*\s)?([\w.-]+):\d+:\d+ ")
_CLOSED_PEER = re.compile(r"(?:remote peer|Call to recv from) ([\w.-]+)<\d+>")


def _local_peer(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """A connection closed by a peer on the process's own host: a process of that node
    (a local rank, or the proxy thread of one) closed it, most often after its own
    failure, which its lines show first; no network was in the way."""
    for line in lines:
        host, peer = _PREFIX_HOST.match(line.text), _CLOSED_PEER.search(line.text)
        if host and peer and host.group(1) == peer.group(1):
            return (
                f"the peer {peer.group(1)} that closed the connection is this process's own "
                f"host (line {line.line_number}): a process of that node (a local rank, or "
                "its proxy thread) closed it, most often after its own failure, which its "
                "lines show first; not the network",
            )
    return ()


#: a send or receive on a connection that was up (socket.cc's "Call to recv from X
#: failed", printed for sends too up to 2.12): not a connect
_OPEN_CALL = re.compile(r"Call to (?:recv|send)\b")
_TIMED_OUT_OPEN = (
    "'Connection timed out' (ETIMEDOUT) on a connection that was up: the peer stopped "
    "acknowledging until this host's kernel gave up retransmitting: the peer's host, or "
    "the path between them, went down (a node lost, a network partition, a pod moved)"
)


#: the address a connect went to, as NCCL's socket.cc prints it: ``Connect to
#: 10.0.0.4<56849>``, ``Connect to [fe80::1%eth0]<43369>`` (ncclSocketToString)
_CONNECT_TO = re.compile(r"Connect to \[?([0-9A-Fa-f:.]+)(?:%[^\]<]*)?\]?<\d+>")


def _unroutable(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """A connect to an address that is not routed between hosts: link-local or loopback.

    >>> _unroutable([LogLine(source="a", line_number=1, text="x NCCL WARN socketStartConnect:"
    ...     " Connect to 169.254.20.10<43369> failed : Software caused connection abort")])[0][:52]
    'the address connected to, 169.254.20.10, is link-loc'
    """
    found: dict[str, bool] = {}  # address -> loopback (else link-local)
    for line in lines:
        for text in _CONNECT_TO.findall(line.message or line.text):
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                continue
            if address.is_link_local or address.is_loopback:
                found[text] = address.is_loopback
    said = []
    for text, loopback in found.items():
        kind = (
            "loopback (this host only)"
            if loopback
            else "link-local (a NodeLocal DNS cache's, a CNI's or a cloud's metadata link)"
        )
        said.append(
            f"the address connected to, {text}, is {kind}: it is not routed between hosts, "
            "so the process that published it (for bootstrap.cc, the root: the rank that "
            "made the unique id) listened on an interface the other hosts cannot reach: set "
            "NCCL_SOCKET_IFNAME to the interface the hosts share, on every host"
        )
    return tuple(said)


#: Open MPI's and UCX's signal handlers name the process they run in: ``[host:pid] ***
#: Process received signal ***``, ``[host:pid :0:tid] Caught signal`` (NCCL's host:pid)
_CRASHED = re.compile(
    r"\[([\w.-]+):(\d+)\] \*\*\* Process received signal"
    # UCX's handler: "[host:pid :0:tid] Caught signal 7 (...)"
    r"|\[([\w.-]+):(\d+) ?:\d+:\d+\] Caught signal"
)


#: a WARN's own site, ``WARN misc/cudawrap.cc:36 Cuda failure ...``
_SITE = re.compile(r"WARN (\S+?\.(?:cc|cu|c|h|cpp):\d+) ")


def _cumem_probe(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """A CUDA call that failed in NCCL's cuMem probe (recovery.ABSORBED's cudawrap.cc
    sites, ncclIsCuMemSupported / ncclCuMemHostEnable): NCCL went on without cuMem."""
    sites = {m.group(1) for line in lines for m in [_SITE.match(line.message)] if m}
    probed = sorted(s for s in sites if s.rsplit("/", 1)[-1] in ABSORBED and "cudawrap" in s)
    if not probed:
        return ()
    return (
        f"{', '.join(probed)} is a check in NCCL's cuMem probe (ncclIsCuMemSupported, or "
        "ncclCuMemHostEnable for host memory) in every release that prints it there: the "
        "probe answers 'not supported' and NCCL goes on without cuMem in that process "
        "('initialization error': CUDA's driver API was not initialised there); ranks "
        "that disagree on cuMem can fail later when they exchange buffers: "
        "NCCL_CUMEM_ENABLE=0 (or 1) on every rank keeps them alike",
    )


#: rdma-core's ibv_event_type_str (libibverbs/enum_strs.c): the text NCCL prints, the
#: event, what it means
_ASYNC_EVENTS = {
    "CQ error": ("IBV_EVENT_CQ_ERR", "a completion queue overran or failed"),
    "local work queue catastrophic error": (
        "IBV_EVENT_QP_FATAL", "a queue pair hit an error it cannot report in a completion"),
    "invalid request local work queue error": (
        "IBV_EVENT_QP_REQ_ERR", "the responder saw a request the queue pair's state or "
        "attributes do not allow (a transport protocol violation)"),
    "local access violation work queue error": (
        "IBV_EVENT_QP_ACCESS_ERR", "a request touched memory it may not (a registration, "
        "GPUDirect RDMA)"),
    "local catastrophic error": ("IBV_EVENT_DEVICE_FATAL", "the NIC itself failed"),
    "port error": ("IBV_EVENT_PORT_ERR", "the port's link went down"),
    "port active": ("IBV_EVENT_PORT_ACTIVE", "the port's link came (back) up"),
    "GID table change": ("IBV_EVENT_GID_CHANGE", "an address of the port changed"),
    "client reregistration": (
        "IBV_EVENT_CLIENT_REREGISTER", "the subnet manager asked the port to register again"),
    "SM change": ("IBV_EVENT_SM_CHANGE", "another subnet manager took over"),
    "LID change": ("IBV_EVENT_LID_CHANGE", "the subnet manager gave the port a new LID"),
}  # fmt: skip
_ASYNC = re.compile(
    r"NET/IB ?: (?:(\S+):(\d+) )?(.*?(?:event|event on \w+ \([^)]*\))) ?: ?(.+?)\s*$"
)


def _async_events(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """Which event each line names (rdma-core's enum), on which NIC port, and what NCCL
    does after it: from 2.23 a queue pair's, a completion queue's or the device's is
    fatal to the communicator."""
    said: dict[str, None] = {}
    for line in lines:
        found = _ASYNC.search(line.message or line.text)
        if found is None:
            continue
        nic, port, form, text = found.groups()
        known = _ASYNC_EVENTS.get(text.split("(")[0].strip())
        if known is None:
            continue
        on = f" on {nic} port {port}" if nic else ""
        sentence = f"'{text}' is {known[0]}{on}: {known[1]}"
        if "fatal event" in form and "SRQ" not in form:
            sentence += (
                "; NCCL (2.23+) counts it fatal: the communicator's next call on that "
                "connection fails ('communicator encountered a fatal error'), unless "
                "NCCL_IB_RETURN_ASYNC_EVENTS=0"
            )
        said.setdefault(sentence, None)
    return tuple(list(said)[:3])


#: proxy.cc's service thread (@v2.14.3-1 on): the operation a local rank asked for failed;
#: the thread then closes that rank's connection
_SERVICE = re.compile(
    r"\[Proxy Service (\d+)\] Failed to execute operation (\w+) from rank (\d+), retcode (\d+)"
)


def _proxy_service(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """What a proxy service's failure returned, and what its close did."""
    said: dict[str, None] = {}
    for line in lines:
        found = _SERVICE.search(line.message or line.text)
        if found is None:
            continue
        rank, operation, asked, code = found.groups()
        name = RESULT_NAMES.get(int(code), "an error")
        said.setdefault(
            f"rank {rank}'s proxy thread failed the {operation} rank {asked} asked of it with "
            f"{name} ({code}) and closed rank {asked}'s connection to it: a 'Connection "
            f"closed by remote peer' or 'Proxy Call to rank {asked} failed' of rank {asked} "
            "after it is that close; why the operation failed, the proxy thread's lines "
            "before it say",
            None,
        )
    return tuple(list(said)[:3])


def _launcher(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """Which processes the launcher's lines name, and how each ended."""
    from hpnet.hang.endings import ended  # noqa: PLC0415 - hang reads ncclog
    from hpnet.hang.exits import read_exits  # noqa: PLC0415

    numbered = [(line.line_number or 0, line.message or line.text) for line in lines]
    return tuple(
        f"{found.who()} {ended(found.status)}"
        + (" (the first failure it saw)" if found.first else "")
        for found in read_exits("", numbered)[:3]
    )


def _crashed(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """The processes the banners name.

    >>> _crashed([LogLine(source="a", line_number=10,
    ...     text="[rtptest1621:405884] *** Process received signal ***")])
    ('the process that crashed: rtptest1621:405884 (its NCCL lines are those of that host:pid)',)
    """
    found = dict.fromkeys(
        f"{m.group(1) or m.group(3)}:{m.group(2) or m.group(4)}"
        for line in lines
        for m in [_CRASHED.search(line.message or line.text)]
        if m
    )
    said = [
        f"the process that crashed: {key} (its NCCL lines are those of that host:pid)"
        for key in list(found)[:3]
    ]
    texts = " ".join(line.message or line.text for line in lines)
    if "Bus error" in texts:
        said.append(
            "a bus error (SIGBUS) in an NCCL process is most often /dev/shm out of room: NCCL "
            "up to 2.18 made its shared-memory segments sparse (ftruncate), so a full tmpfs "
            "faults when a page is first touched (2.19 on fallocate them and fail with an "
            "error instead): `df -h /dev/shm`; a container needs --shm-size=1g or --ipc=host"
        )
    if _KILLED.search(texts):
        said.append(
            "Killed is SIGKILL: most often the kernel's OOM killer or a scheduler's memory "
            "limit (`dmesg | grep -i oom` on the host, the job's memory limit)"
        )
    return tuple(said)


_KILLED = re.compile(r"(?:^|\d +)Killed(?: |$)")


#: the EFA provider's completion errors aws-ofi-nccl prints as 'Error: N (...)' (libfabric
#: prov/efa/src/efa_errno.h, and the help text efa_strerror's callers log for each)
_EFA_ERRORS = {
    10: "10 (EFA_IO_COMP_STATUS_REMOTE_ERROR_RNR): the receiver had no buffer posted for the "
    "message: a receiver outrun, a fault only where it persists",
    13: "13 (EFA_IO_COMP_STATUS_LOCAL_ERROR_UNRESP_REMOTE): the peer stopped answering",
    4124: "4124 (FI_EFA_ERR_ESTABLISHED_RECV_UNRESP): the peer had completed the handshake "
    "and then stopped answering: its process is gone or its host failed (libfabric's own "
    "reading): look at that peer, not at settings",
    4126: "4126 (FI_EFA_ERR_UNESTABLISHED_RECV_UNRESP): the peer's EFA device is reachable "
    "but the connection's handshake never completed: most likely the peer process was not "
    "there (exited, never started, crashed while starting), libfabric's reading; a security "
    "group without its self-rule is the other cause to rule out",
}
_EFA_ERROR = re.compile(r"completed with error\. RC: (-?\d+)\. Error: (\d+)")
_PEER_HOST = re.compile(r"Peer host id: ([\w./-]+)")


def _efa_errors(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """What the EFA provider's error numbers in aws-ofi-nccl's lines mean, and whether a
    peer's host is named ('Peer host id: N/A': the peer never identified itself)."""
    said: dict[str, None] = {}
    for line in lines:
        text = line.message or line.text
        found = _EFA_ERROR.search(text)
        if found is not None:
            # RC: the completion's err, a libfabric error number: FI_E* are the errno
            # values (libfabric include/rdma/fi_errno.h), printed negated by some releases
            if int(found.group(2)) in _EFA_ERRORS:
                said.setdefault(f"error {_EFA_ERRORS[int(found.group(2))]}")
            code = abs(int(found.group(1)))
            if code in errno.errorcode:
                said.setdefault(
                    f"RC {found.group(1)}: {errno.errorcode[code]} ({os.strerror(code)})"
                )
        host = _PEER_HOST.search(text)
        if host is not None:
            said.setdefault(
                "the peer's host is not known (no handshake reached it)"
                if host.group(1) == "N/A"
                else f"the peer's host: {host.group(1)}"
            )
    return tuple(said)[:3]


#: a signature's own reader of its lines (:func:`line_details`)
_READERS: dict[str, Callable[[Sequence[LogLine]], tuple[str, ...]]] = {
    "foreign-connection": _foreign_bytes,
    "efa-completion-error": _efa_errors,
    "process-crashed": _crashed,
    "launcher-reported-failure": _launcher,
    "cuda-failure": _cumem_probe,
    "ib-async-event": _async_events,
    "proxy-connect-failed": _proxy_service,
}
