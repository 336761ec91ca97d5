"""A failure line read with what its own process says around it.

:func:`one_host`: every communicator of a process lies on one host (NCCL's ``nNodes 1``),
so a network module that gave up there cost the job nothing (:func:`unneeded` says so).
:func:`closed_by_own_proxy`: a socket a process's main thread found closed right after
that process's own proxy service failed an operation is the proxy's close, not a peer's
or the network's. :func:`in_context` gives a line the signatures these and
:func:`hpnet.ncclog.signatures.in_context` read it by, for :mod:`hpnet.ncclog.findings`;
:func:`crash_places` says where a crash line's own report says its signal stopped it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from hpnet.ncclog import signatures
from hpnet.ncclog.crashes import crash_site
from hpnet.ncclog.model import LogLine, NcclLog, ProcessLog
from hpnet.ncclog.recovery import thread_of
from hpnet.ncclog.signatures import SIGNATURES, Signature

__all__ = ["closed_by_own_proxy", "crash_places", "in_context", "one_host", "unneeded"]


def one_host(process: ProcessLog | None) -> bool:
    """Does every communicator of ``process`` lie on one host, by NCCL's own count
    (``nNodes 1``, 2.20.3+)? Its traffic then needed no network."""
    return (
        process is not None
        and bool(process.memberships)
        and all(m.nnodes == 1 for m in process.memberships)
    )


def unneeded(keys: Collection[str], log: NcclLog) -> tuple[str, ...]:
    """Why a network module that gave up in the processes ``keys`` is only a warning:
    each kept its communicators on one host; and what NCCL went on with instead."""
    processes = [p for p in log.processes if p.key in keys]
    if not processes or not all(one_host(p) for p in processes):
        return ()
    networks = sorted({n for p in processes for n in p.networks})
    instead = f" NCCL went on with {', '.join(networks)}:" if networks else ""
    return (
        "every communicator of these processes lies on one host (NCCL's 'nNodes 1'), so "
        f"their traffic needed no network and this job lost nothing;{instead} a job across "
        "hosts here would carry its traffic between them over that instead",
    )


#: proxy.cc's service thread, when an operation a local rank asked for fails: it WARNs
#: and closes that rank's connection (``closeConn``, @v2.14.3-1 and on); the rank's
#: ncclProxyCall then finds the socket closed and WARNs "Proxy Call to rank %d failed"
_SERVICE_FAILED = re.compile(r"\[Proxy Service \d+\] Failed to execute operation")
_CALL_FAILED = re.compile(r"Proxy Call to rank \d+ failed")
_CLOSED = re.compile(r"Connection closed by remote peer|Call to recv from \S+ failed")


def closed_by_own_proxy(process: ProcessLog | None, line: LogLine) -> bool:
    """Is ``line`` a socket closed under a thread of ``process`` whose own proxy service
    had failed an operation (on another thread, earlier in the same input) and closed
    the connection, as that thread's "Proxy Call to rank N failed" after it says?"""
    if process is None or not _CLOSED.search(line.text):
        return False
    thread = thread_of(line, process.key)
    if thread is None:
        return False
    at = (line.source, line.line_number)

    def other_thread_before(w: LogLine) -> bool:
        return (
            w.source == line.source
            and w.line_number < line.line_number
            and thread_of(w, process.key) not in (None, thread)
        )

    return any(
        _SERVICE_FAILED.search(w.text) and other_thread_before(w) for w in process.warnings
    ) and any(
        _CALL_FAILED.search(w.text)
        and (w.source, w.line_number) > at
        and thread_of(w, process.key) == thread
        for w in process.warnings
    )


#: what a socket its own proxy closed is read as (:func:`closed_by_own_proxy`)
_PROXY_CONNECT = next(sig for sig in SIGNATURES if sig.id == "proxy-connect-failed")


def in_context(
    known: Sequence[Signature],
    message: str,
    process: ProcessLog | None,
    line: LogLine,
    log: NcclLog,
) -> Sequence[Signature]:
    """A line's signatures as its log reads them (:func:`signatures.in_context`); a
    socket its own process's proxy closed (:func:`closed_by_own_proxy`) is that proxy's
    failure, not a broken TCP connection between ranks."""
    found = signatures.in_context(known, message, process, log)
    if not closed_by_own_proxy(process, line):
        return found
    return [_PROXY_CONNECT if sig.id == "net-socket-error" else sig for sig in found]


def crash_places(lines: Sequence[LogLine], log: NcclLog) -> tuple[str, ...]:
    """Where each crash line's own report says the signal stopped its process
    (:func:`hpnet.ncclog.crashes.crash_site`: what ``hpnet hang`` says of it too)."""
    said = {
        f"the signal stopped the process of line {line.line_number} in {inside} (its "
        "report's frames)": None
        for line in lines
        if (inside := crash_site(log, line)) is not None
    }
    return tuple(list(said)[:3])
