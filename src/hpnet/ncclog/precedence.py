"""Cause before effect: the order of ``hpnet verify``'s findings.

:data:`EXPLAINS` is the cause -> effect precedence: a finding explains the later
findings it lists (an IB async event the completion errors after it, a NET plugin that
failed to load the "network X not found" after it, a watchdog timeout the socket error
trail of the teardown after it). :func:`order_findings` puts causes first, the earliest
in time first, and effects after. Pure functions and literal data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from hpnet.ncclog.causes import SUBSYSTEMS
from hpnet.result import Finding, Severity

__all__ = ["BY_STAGE", "EXPLAINS", "FAILED_FIRST", "explains", "order_findings"]

#: cause -> the findings it explains when it comes first (ids; a trailing ``*`` is a
#: prefix). Why: an async event puts the NIC's queue pairs in error, so transfers on
#: them complete with errors (rdma-core ibv_get_async_event(3)); a NET plugin that did
#: not load leaves NCCL_NET naming nothing (plugin/net.cc); a watchdog timeout aborts
#: the communicator, whose teardown fails its sockets (PyTorch ProcessGroupNCCL);
#: a failed subsystem passes its error up (trails, "unhandled ... error").
_EFFECTS_OF_FAILURE = (
    "error-trail",
    "abort-trail",
    "system-error",
    "internal-error",
    "remote-error",
    "invalid-usage",
    "comm-aborted",
    "cuda-failure",
    "nccl-tests-failure",
    "proxy-connect-failed",
    "nccl-failure",
    "init-incomplete",
    # the launcher's report that a process failed: what failed in it explains it
    "launcher-reported-failure",
)
EXPLAINS: dict[str, tuple[str, ...]] = {
    "ib-async-event": ("completion-*", "collective-timeout", "net-socket-error",
                       "ib-failed", *_EFFECTS_OF_FAILURE),
    "net-plugin-load-failed": ("net-plugin-failed", "no-net-plugin", "ofi-plugin-error",
                               *_EFFECTS_OF_FAILURE),
    "collective-timeout": ("net-socket-error", "socket-failed", "connection-refused",
                           "peer-exited", "retries-exhausted", *_EFFECTS_OF_FAILURE),
    "completion-*": ("collective-timeout", "net-socket-error", "socket-failed", "peer-exited",
                     "ib-failed", *_EFFECTS_OF_FAILURE),
    # a NET plugin's own failure (aws-ofi-nccl's WARNs, EFA completion errors) is
    # returned to NCCL as an error code: the trails and "internal error" after it
    "ofi-plugin-error": _EFFECTS_OF_FAILURE,
    "efa-completion-error": ("collective-timeout", "net-socket-error", "peer-exited",
                             "ofi-plugin-error", *_EFFECTS_OF_FAILURE),
    "cuda-out-of-memory": ("net-socket-error", "proxy-connect-failed", "cuda-call-failed",
                           *_EFFECTS_OF_FAILURE),
    # a CUDA call NCCL refuses or the driver fails, returned up as an error code
    "graph-capture-unsupported": _EFFECTS_OF_FAILURE,
    "socket-family-unsupported": ("socket-failed", *_EFFECTS_OF_FAILURE),
    "comm-used-after-destroy": ("api-usage", "init-failed", *_EFFECTS_OF_FAILURE),
    "ib-collective-mismatch": ("ib-failed", *_EFFECTS_OF_FAILURE),
    "shm-cuda-register-failed": ("cuda-failure", "cuda-call-failed", *_EFFECTS_OF_FAILURE),
    "cuda-too-many-peers": ("cuda-call-failed", "cumem-alloc-failed", *_EFFECTS_OF_FAILURE),
    # MNNVL's probe of a fabric handle is a cuMem allocation: without IMEX it fails first
    "mnnvl-failed": ("cumem-alloc-failed", *_EFFECTS_OF_FAILURE),
    # a peer's cuMem host handle read as a /dev/shm name: the open of that file fails
    "shm-cumem-host-disagree": ("shm-setup-failed", *_EFFECTS_OF_FAILURE),
    # the watchdog aborts the communicators: their sockets' and proxies' return codes
    "watchdog-teardown": ("error-trail", "abort-trail", "comm-aborted", "internal-error"),
    **{s.id: _EFFECTS_OF_FAILURE for s in SUBSYSTEMS if not s.generic},
}  # fmt: skip

#: (cause, effect) pairs in NCCL's own fixed sequence, so the cause comes first whatever
#: the line order of different processes: every process loads its NET plugins at its
#: first NCCL call, before any communicator picks NCCL_NET (plugin/net.cc
#: ncclNetPluginLoad, then ncclNetInit's selection)
#: ncclIbAsyncThreadMain prints the NIC's event from its own thread while the thread
#: that hits the failed queue pair prints its error: their line order is a race; a
#: process whose proxy ran out of GPU memory fails and closes the proxy connections its
#: peers wait on, which they report closed, each from its own process: a race too
#: (NVIDIA/nccl#1235: the peer's "Connection closed by remote peer" printed first)
BY_STAGE: frozenset[tuple[str, str]] = frozenset(
    {
        ("net-plugin-load-failed", "net-plugin-failed"),
        ("net-plugin-load-failed", "no-net-plugin"),
        ("ib-async-event", "ib-failed"),
        ("cuda-out-of-memory", "net-socket-error"),
        ("cuda-out-of-memory", "proxy-connect-failed"),
        # NCCL says MNNVL is not working after the cuMem call that failed (mnnvl.cc)
        ("mnnvl-failed", "cumem-alloc-failed"),
        # ncclShmOpen's open() WARNs ("Call to open failed"), then its fail label names the
        # segment (size 0, a garbage name: misc/shmutils.cc:93, :129 @v2.27.3-1): one
        # failure, the second line says which
        ("shm-cumem-host-disagree", "shm-setup-failed"),
        # PyTorch prints its teardown after the abort it made
        ("watchdog-teardown", "comm-aborted"),
        # 2.30's ncclIbTest says "Got CQE with error" and then what the completion said
        # (transport/net_ib/p2p.cc, ncclIbLogCompletionWithError): one event, the second
        # line names it
        *(
            (completion, "ib-failed")
            for completion in (
                "completion-retry-exceeded",
                "completion-local-protection",
                "completion-error",
            )
        ),
    }
)


def _matches(effect: str, pattern: str) -> bool:
    return effect.startswith(pattern[:-1]) if pattern.endswith("*") else effect == pattern


def explains(cause: str, effect: str) -> bool:
    """Does a finding ``cause`` explain a later finding ``effect`` (:data:`EXPLAINS`)?

    >>> explains("ib-async-event", "completion-error")
    True
    """
    return any(
        _matches(cause, key) and any(_matches(effect, p) for p in effects)
        for key, effects in EXPLAINS.items()
    )


def _position(finding: Finding, sources: Sequence[str]) -> tuple[int, int]:
    """(input, line) of the finding's earliest evidence line; last when it quotes none."""
    best = (len(sources) + 1, 0)
    for quote in finding.evidence:
        for index, source in enumerate(sources):
            head = quote[len(source) + 1 :] if quote.startswith(source + ":") else None
            number = head.split(":", 1)[0] if head else ""
            if number.isdigit():
                best = min(best, (index, int(number)))
                break
    return best


_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _closed_by_teardown(
    teardown: Finding, closed: Finding, where: dict[int, tuple[int, int]]
) -> bool:
    """A socket an NCCL process saw closed after a watchdog's teardown line: the peer the
    teardown took down closed it. PyTorch prints the error it tore down for after its
    own teardown message ("Last error: ... Broken pipe"), a line of no NCCL process:
    that one is the cause, not a consequence."""
    return (
        teardown.id == "watchdog-teardown"
        and closed.id == "net-socket-error"
        and bool(closed.processes)
        and where[id(teardown)] <= where[id(closed)]
    )


#: what the error trail's finding says of a process whose first trail line comes before
#: any WARN of it (hpnet.ncclog.findings): it failed first, its cause not in the input
FAILED_FIRST = "it failed before any WARN of it"


def _first_unexplained(trail: Finding, other: Finding, where: dict[int, tuple[int, int]]) -> bool:
    """An error trail of a process that failed before any WARN of it, earlier in the same
    input than ``other``: line order is time order there, and what it passed up began
    first. (A process with no WARN at all is most often a peer failing with the one that
    says why: its trail still follows that cause.)"""
    at, then = where[id(trail)], where[id(other)]
    return (
        not trail.consequence
        and at[0] == then[0]
        and at < then
        and any(FAILED_FIRST in c for c in trail.conclusions)
    )


def order_findings(findings: Iterable[Finding], sources: Sequence[str]) -> list[Finding]:
    """Causes first, earliest in time first; effects after what explains them.

    A finding that explains a fatal error after it (:data:`EXPLAINS`: a NET plugin that
    did not load, before "network X not found") is itself an error and fatal: it is why
    the job failed. Line order is time order within an input (NCCL writes a process's
    lines in order); findings quoting no line go last among their kind.
    """
    items = list(findings)
    where = {id(f): _position(f, sources) for f in items}
    explained: set[int] = set()
    promoted: dict[int, Finding] = {}
    for cause in items:
        for effect in items:
            # the error going up (a trail) follows its cause whatever the line order, and so
            # does PyTorch's teardown (it prints the error it tore down for after it); but
            # a trail of a process no earlier line explains, earlier in the same input,
            # is a failure of its own that came first
            staged = (
                (cause.id, effect.id) in BY_STAGE
                or effect.id == "watchdog-teardown"
                or (
                    effect.id in ("error-trail", "abort-trail")
                    and not _first_unexplained(effect, cause, where)
                )
            )
            if cause is effect or (where[id(cause)] > where[id(effect)] and not staged):
                continue
            # any failure that is not itself a generic consequence explains the generic
            # consequences (trails, "unhandled ... error", aborts)
            # and a failure named (not a generic one) explains the framework's teardown
            root = (
                cause.fatal
                and not cause.consequence
                and (
                    effect.id in _EFFECTS_OF_FAILURE
                    or (
                        effect.id == "watchdog-teardown"
                        and cause.id not in _EFFECTS_OF_FAILURE
                        and not _closed_by_teardown(effect, cause, where)
                    )
                )
            )
            if not (
                root or explains(cause.id, effect.id) or _closed_by_teardown(cause, effect, where)
            ):
                continue
            explained.add(id(effect))
            if effect.fatal and effect.severity == "error" and not cause.fatal:
                promoted[id(cause)] = dataclasses.replace(
                    cause, severity=Severity.ERROR, fatal=True, consequence=False
                )
    ordered = [promoted.get(id(f), f) for f in items]
    keys = {
        id(new): (
            _SEVERITY[new.severity],
            not new.fatal,
            id(old) in explained,
            new.consequence,
            where[id(old)] if new.severity == "error" else (0, 0),
        )
        for old, new in zip(items, ordered, strict=True)
    }
    return sorted(ordered, key=lambda f: keys[id(f)])
