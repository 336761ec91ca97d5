"""What a failed test's error is evidence of, pure.

``hpnet isolate`` may blame a node only on evidence about the node: a measured
slowdown, or an error that NCCL or the transport between the test's members raised on
their link. Everything else that stops a test is the harness's failure (the group that
never formed because a member was late or gone, the rendezvous store timing out, a
buffer that could not be allocated, an error of Python or torch itself): it makes the
verdict inconclusive for the nodes involved, never a culprit, never a drain.

The rules read the exception's class name and its message, as torch raises them:

* ``DistBackendError`` is what torch raises for an NCCL (or gloo) backend failure,
  ``DistNetworkError`` for a socket error (torch/csrc/distributed/c10d/exception.h);
  NCCL's own messages name ``ncclSystemError`` / ``ncclRemoteError`` / ``ncclInternalError``
  or "NCCL error"; gloo's transport says "Connection closed by peer", "Connection reset
  by peer", "Connection refused", "Broken pipe", or "Timed out waiting ... for recv
  operation" / "for send operation" (gloo/transport/tcp/pair.cc, unbound_buffer.cc).
* NCCL's ``ncclInvalidUsage`` / ``ncclInvalidArgument``: how NCCL was called, the harness.
* ``DistStoreError`` (and a store's "wait timeout" / "Socket Timeout" while the group
  forms) is the rendezvous store: the harness.

A store error outranks a network word in the same message: a group that could not
form because the store timed out says nothing about the link.
"""

from __future__ import annotations

import re

from hpnet.isolate.model import ErrorSource

__all__ = ["error_source"]

_STORE = re.compile(r"DistStoreError|\bwait timeout\b|\bstore\b.*\btime(d)? ?out", re.IGNORECASE)
#: NCCL refusing how it was called (two ranks on one GPU of one host, a bad argument)
#: is the harness's mistake, whatever class torch wraps it in
_USAGE = re.compile(r"ncclInvalid(Usage|Argument)|\binvalid (usage|argument)\b", re.IGNORECASE)
_NETWORK_TYPES = frozenset({"DistBackendError", "DistNetworkError"})
_NETWORK = re.compile(
    r"nccl(System|Remote|Internal|Unhandled\w*)Error|NCCL (error|WARN)"
    r"|Connection (closed|reset) by peer|Connection refused|Broken pipe"
    r"|Timed out waiting \S+ for (recv|send) operation|connectFullMesh failed"
    r"|No route to host|Network is unreachable",
    re.IGNORECASE,
)


def error_source(type_name: str, message: str) -> ErrorSource:
    """What an exception raised by a test is evidence of.

    >>> error_source("DistStoreError", "wait timeout after 300000ms, keys: /x/0")
    <ErrorSource.HARNESS: 'harness'>
    >>> error_source("DistBackendError", "NCCL error in: ProcessGroupNCCL.cpp:2011, "
    ...     "remote process exited or there was a network error")
    <ErrorSource.NETWORK: 'network'>
    >>> error_source("RuntimeError", "[../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
    ...     "Connection closed by peer [127.0.0.1]:4221")
    <ErrorSource.NETWORK: 'network'>
    >>> error_source("OutOfMemoryError", "CUDA out of memory. Tried to allocate 64.00 MiB")
    <ErrorSource.HARNESS: 'harness'>
    """
    if _STORE.search(type_name) or _STORE.search(message) or _USAGE.search(message):
        return ErrorSource.HARNESS
    if type_name in _NETWORK_TYPES or _NETWORK.search(message):
        return ErrorSource.NETWORK
    return ErrorSource.HARNESS
