"""The rendezvous port: where a job's ranks meet, chosen free when every node is this
machine, and named when another process holds it.

torchrun's agent on node 0 (its static or c10d rendezvous, a TCPStore) and rank 0 of
a torch ``env://`` job listen on MASTER_PORT. When another process already listens
there the job ends before any rank meets, and torch says so in its own words: ``The
server socket has failed to listen on any local network address. port: 29500,
useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use`` (torch
2.2 and later, ``torch/csrc/distributed/c10d/socket.cpp``) or ``... failed to bind to
[::]:29500 (errno: 98 - Address already in use)`` (before). :func:`port_taken` finds
that in a node's output, so that the error names the port and how to choose another
(``--master-port``), not only "node 0 exited with 1".

A launch whose nodes are all this machine does not need the well-known 29500: like
``torchrun --standalone``, it gets a port free here (:func:`choose_port`), so that two
jobs started on one machine do not meet each other's ranks. A ``--master-port`` the
user gives, and a port the platform sets (a PyTorchJob's MASTER_PORT), are used as
given.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable

from hpnet.errors import HpnetError
from hpnet.launch.context import Context
from hpnet.launch.engines import default_engine
from hpnet.launch.plan import LaunchRequest
from hpnet.launch.torchrun import is_local

__all__ = ["choose_port", "free_port", "port_taken", "port_taken_error"]

#: the engines whose ranks meet on MASTER_PORT on a node hpnet starts from here
_LOCAL_ENGINES = ("torchrun", "env", "mpirun")
#: the contexts that list the nodes (or have only this one) and set no port themselves
_LISTED = ("local", "hosts", "hostfile")
_IN_USE = re.compile(r"EADDRINUSE|address already in use", re.IGNORECASE)


def free_port() -> int:
    """A TCP port no process listens on, on any IPv4 address of this machine, now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        port: int = sock.getsockname()[1]
        return port


def choose_port(
    request: LaunchRequest,
    context: Context,
    *,
    local_names: frozenset[str],
    find: Callable[[], int] = free_port,
) -> int | None:
    """A free port for a launch that needs one: no ``--master-port``, no platform's
    port, and every node (and the rendezvous address) on this machine; None otherwise
    (the request's port, or 29500, is used).

    >>> from hpnet.launch.hosts import parse_hosts
    >>> here = Context(kind="hosts", hosts=parse_hosts("127.0.0.1,127.0.0.2"))
    >>> choose_port(LaunchRequest(command=("x",)), here, local_names=frozenset(), find=lambda: 4321)
    4321
    >>> away = Context(kind="hosts", hosts=parse_hosts("127.0.0.1,n2"))
    >>> print(choose_port(LaunchRequest(command=("x",)), away, local_names=frozenset()))
    None
    """
    if request.master_port is not None or context.master_port is not None:
        return None
    engine = request.engine or default_engine(context)
    if context.kind not in _LISTED or engine not in _LOCAL_ENGINES:
        return None
    if not all(is_local(host.name, local_names) for host in context.hosts):
        return None
    if request.master_addr is not None and not is_local(request.master_addr, local_names):
        return None
    return find()


def port_taken(text: str, port: int) -> bool:
    """Whether ``text`` (a node's output) says that ``port`` was in use when the
    rendezvous tried to listen on it.

    >>> port_taken("DistNetworkError: The server socket has failed to listen on any local "
    ...            "network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, "
    ...            "message: address already in use", 29500)
    True
    >>> port_taken("failed to bind to [::]:29501 (errno: 98 - Address already in use)", 29500)
    False
    """
    mention = re.compile(rf"(?:port:?\s*|:){port}(?!\d)")
    return any(_IN_USE.search(line) and mention.search(line) for line in text.splitlines())


def port_taken_error(port: int, *, node: str, log_path: str, chosen: bool) -> HpnetError:
    """The error for a rendezvous port another process holds. ``chosen``: hpnet chose
    it free a moment before (no ``--master-port``): another process took it since."""
    if chosen:
        what = (
            f"the rendezvous port {port}, free when hpnet chose it, was taken by another "
            f"process before {node} could listen on it (EADDRINUSE), so the ranks never met"
        )
        fix = "run the launch again (hpnet chooses a new free port), or pass --master-port PORT"
    else:
        what = (
            f"the rendezvous port {port} is taken: another process listens on it, so {node} "
            "could not start the rendezvous (EADDRINUSE) and the ranks never met"
        )
        fix = (
            f"pass another --master-port (leave it out when every node is this machine: "
            f"hpnet then chooses a free one), or end what listens there (ss -ltnp "
            f"'sport = :{port}')"
        )
    return HpnetError(what, code="port-taken", where=log_path, fix=fix)
