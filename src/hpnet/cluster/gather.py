"""What a rank's worker (:mod:`hpnet.cluster.spawn`) does with the job's other ranks
before its own measurements: share what each rank reports, as JSON, with every rank
(:func:`gather_json`), and group the ranks by node in the job's order
(:func:`ranks_by_node`); and where its NCCL debug log is (:func:`nccl_debug_file`).

Imports no torch itself: the worker's :class:`~hpnet.bench.backends.RankContext` does.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

__all__ = ["gather_json", "nccl_debug_file", "ranks_by_node"]


class _Ranks(Protocol):
    """The job's ranks, as far as :func:`gather_json` talks to them
    (:class:`hpnet.bench.backends.RankContext`)."""

    def gather_bytes(self, data: bytes) -> list[bytes]: ...


def gather_json(ctx: _Ranks, value: object) -> list[Any]:
    """Every rank's ``value`` (any JSON value), in rank order, on every rank."""
    return [json.loads(b.decode()) for b in ctx.gather_bytes(json.dumps(value).encode())]


def ranks_by_node(every: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Each node's ranks, from every rank's report (its ``"node"``, in rank order): the
    nodes in the order of their first rank.

    >>> ranks_by_node([{"node": "b"}, {"node": "a"}, {"node": "b"}])
    {'b': [0, 2], 'a': [1]}
    """
    nodes: dict[str, list[int]] = {}
    for rank, mine in enumerate(every):
        nodes.setdefault(mine["node"], []).append(rank)
    return nodes


def nccl_debug_file(environ: Mapping[str, str], pid: int) -> str | None:
    """The file NCCL writes its debug log to in the process ``pid``: NCCL_DEBUG_FILE
    with ``%h`` (the host name) and ``%p`` (the pid) filled in as NCCL fills them
    (src/debug.cc); None where it is not set.

    >>> nccl_debug_file({"NCCL_DEBUG_FILE": "/job/nccl.rank1.%p.log"}, 42)
    '/job/nccl.rank1.42.log'
    """
    pattern = environ.get("NCCL_DEBUG_FILE")
    if not pattern:
        return None
    return pattern.replace("%h", socket.gethostname()).replace("%p", str(pid))
