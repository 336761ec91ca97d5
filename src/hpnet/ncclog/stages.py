"""Where in NCCL's work a failed call was, read from its error trail: NCCL prints
``file.cc:line -> N`` at each function the error passes on its way up
(include/checks.h), so the files of one process's trail, innermost first, name the
stage it failed in (its bootstrap, a transport's setup, the proxy, a launch)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["ABORT_CAUSE", "ABORT_FIX", "ABORT_TRAIL", "Stage", "abort_trail", "trail_stage"]

#: a trail line's source file (``misc/socket.cc:564 -> 2``, 2.2's ``bootstrap.cu:28 -> 2``)
_FILE = re.compile(r"(([\w./-]+\.(?:cc|cu|h|c|cpp)):\d+) -> \d+")


class Stage(NamedTuple):
    """Where a trail failed: the trail line's ``file:line``, the stage's name (what a
    title says), what it was doing there (the name, and for bootstrap what that is), the
    ``NCCL_DEBUG_SUBSYS`` that shows its calls, and what a system error (code 2) there
    most often is, where that is known."""

    where: str
    name: str
    text: str
    subsystem: str = "INIT,NET"
    system_error: str = ""


#: a system call of a /dev/shm segment (include/shm.h up to 2.11, misc/shmutils.cc
#: from 2.12: shm_open, fallocate, mmap under SYSCHECK, ncclSystemError; the CUDA
#: registration after them returns ncclUnhandledCudaError, 1)
_SHM_SYSTEM = (
    "a system call failed there: most often creating or mapping its /dev/shm segment "
    "(shm_open, fallocate, mmap), which fails when /dev/shm is too small or full (a "
    "container's default is 64 MB); a CUDA call there would have returned 1. The WARN "
    "before the trail names the call (`df -h /dev/shm` shows the room)"
)


#: source file (a path's start) -> the stage it is the code of, what it does where the
#: name alone does not say, the debug subsystem that shows its calls (src/debug.cc: SHM
#: and GRAPH in every release covered) and what a system error there is; the first of a
#: trail's files, innermost first, that names one is where it failed (socket, group and
#: init code serve every stage, so they name none)
_STAGES: tuple[tuple[tuple[str, ...], str, str, str, str], ...] = (
    (
        ("bootstrap.c",),
        "bootstrap",
        "as the ranks exchanged their addresses over TCP (on the network NCCL_SOCKET_IFNAME "
        "picks) before any transport was set up",
        "INIT,NET",
        "",
    ),
    (("transport/net_ib", "transport/ib"), "the IB / RoCE network transport", "", "INIT,NET", ""),
    (("transport/net_socket",), "the Socket network transport", "", "INIT,NET", ""),
    (("transport/net.c", "transport/net."), "the network transport (NET)", "", "INIT,NET", ""),
    (("transport/shm",), "the shared-memory (SHM) transport", "", "INIT,SHM", _SHM_SYSTEM),
    (
        ("include/shm", "misc/shmutils"),
        "a shared-memory segment (/dev/shm)",
        "",
        "INIT,SHM",
        _SHM_SYSTEM,
    ),
    (("transport/p2p",), "the P2P (GPU to GPU) transport", "", "INIT", ""),
    (("transport/nvls",), "NVLink SHARP (NVLS)", "", "INIT", ""),
    (("transport/coll_net", "transport/collnet"), "CollNet", "", "INIT,NET", ""),
    (("proxy.c",), "the proxy thread that drives the network", "", "INIT,NET", ""),
    (("graph/",), "topology detection and the graph search", "", "INIT,GRAPH", ""),
    (("enqueue.c",), "a collective's launch", "", "INIT,COLL", ""),
)


def trail_stage(trail: Iterable[str]) -> Stage | None:
    """The first trail line (in the order printed: innermost first) whose file names a
    stage, a bootstrap line before any other.

    >>> trail_stage(["x [0] NCCL INFO misc/socket.cc:564 -> 2",
    ...              "x [0] NCCL INFO bootstrap.cc:270 -> 2", "x [0] NCCL INFO init.cc:1350 -> 2"])
    ... # doctest: +ELLIPSIS
    Stage(where='bootstrap.cc:270', name='bootstrap', text='bootstrap, as the ranks ...', ...)
    """
    named = []
    for text in trail:
        found = _FILE.search(text)
        if found is None:
            continue
        # a vendor build's full path (RCCL's ".../build/rccl/hipify/src/transport/p2p.cc")
        path = found.group(2).rsplit("/src/", 1)[-1]
        index = next((i for i, (starts, *_) in enumerate(_STAGES) if path.startswith(starts)), None)
        if index is not None:
            named.append((index, found.group(1)))
    if not named:
        return None
    # bootstrap runs over the socket code (2.2-2.3: over the NET transport's), never the
    # other way round: a trail through it failed in it
    index, where = min(named, key=lambda n: n[0] != 0)
    _starts, name, detail, subsystem, system_error = _STAGES[index]
    text = f"{name}, {detail}" if detail else name
    return Stage(where, name, text, subsystem, system_error)


#: NCCL's socket code returns ncclInternalError without a WARN where the communicator's
#: abort flag is set: socketProgressOpt after its INFO "socketProgressOpt: abort called"
#: (NET subsystem only; misc/socket.cc:54-56 @v2.26.2-1, os/linux.cc:275-277 @v2.29.2-1),
#: whose caller socketProgress in misc/socket.cc prints the trail's first line (a function
#: that returns an error prints nothing; NCCLCHECK prints at its caller). Its other
#: ncclInternalErrors follow a WARN, but ncclSocketGetAddr's on a socket not yet ready
#: and the abort checks of ncclSocketConnect / ncclSocketAccept, which their callers trace
_SOCKET_CODE = ("misc/socket.cc",)
#: what a process's conclusion says of such a trail
ABORT_TRAIL = (
    "its trail starts in NCCL's socket code with ncclInternalError and no WARN: there that "
    "is the communicator's abort flag (socketProgressOpt's 'abort called'), so the "
    "communicator was being aborted (ncclCommAbort: a framework's error handling or "
    "timeout, or a peer's failure); what made it abort is not in these lines"
)
#: the cause and fix of a finding whose every trail is one
ABORT_CAUSE = (
    "the communicator's abort flag was set (ncclCommAbort, or a destroy that aborts): "
    "socketProgressOpt then stops each socket call with ncclInternalError and an INFO "
    "'abort called' line shown only with NCCL_DEBUG_SUBSYS including NET, and every "
    "function above it prints 'file.cc:line -> 3' (include/checks.h)"
)
ABORT_FIX = (
    "find what aborted it: the framework's error or watchdog timeout, and every rank's "
    "lines before its first trail (the first rank to fail is the cause)"
)


def abort_trail(trail: Iterable[str], codes: Iterable[int], warned: bool) -> bool:
    """A process's trail is NCCL's socket code stopping on the communicator's abort:
    ncclInternalError (3) only, no WARN of the process, the innermost line in the socket
    code (:data:`ABORT_TRAIL`).

    >>> abort_trail(["h:1:2 [6] NCCL INFO misc/socket.cc:64 -> 3"], (3,), False)
    True
    >>> abort_trail(["h:1:2 [6] NCCL INFO misc/socket.cc:64 -> 3"], (3,), True)
    False
    """
    if warned or set(codes) != {3}:
        return False
    found = next((f for f in map(_FILE.search, trail) if f is not None), None)
    return found is not None and found.group(2).rsplit("/src/", 1)[-1].endswith(_SOCKET_CODE)
