"""How much host memory ``hpnet bench``'s CPU ranks need, whether the machine has it,
and whether the kernel's out-of-memory killer ended a rank.

A gloo rank holds two buffers of its op's largest size (the send and the receive
buffer, :func:`hpnet.bench.worker._sweep_op`), the correctness check's pieces of a few
MiB (:data:`hpnet.bench.worker.CHUNK_ELEMENTS`), and what gloo copies: all_gather's
and alltoall's flat copy of the output, one more buffer. :data:`RANK_BUFFERS` of the
largest size plus :data:`RANK_BASE_BYTES` (Python, torch, gloo) is what one rank is
counted to need; measured in benchmarks/README.md (issue 23).

On GPUs the buffers are in GPU memory and the host holds none of them: the check of
:func:`fits` is for CPU ranks only.

Reads go through :class:`~hpnet.node.sysfs.FsRoot`, so tests plant a small
``proc/meminfo`` or an ``oom_kill`` counter under a directory of their own.
"""

from __future__ import annotations

import dataclasses
import os
import re

from hpnet.bench.formulas import DTYPES, shape
from hpnet.errors import InputError
from hpnet.node.sysfs import FsRoot

__all__ = [
    "RANK_BASE_BYTES",
    "RANK_BUFFERS",
    "OomCounter",
    "check_fits",
    "gib",
    "killed_note",
    "mem_available_bytes",
    "oom_kills",
    "parse_meminfo",
    "rank_need_bytes",
]

#: buffers of the largest size one CPU rank holds at its peak: send and receive, and
#: gloo's copy of one (all_gather, reduce_scatter); measured at 2.6 to 3.3 above an
#: idle rank at 256 MiB (benchmarks/README.md, issue 23), the rest in the base below
RANK_BUFFERS = 3
#: a rank's memory at a tiny size: Python, torch and gloo loaded (~220 MiB measured),
#: and the check's pieces
RANK_BASE_BYTES = 320 << 20


def rank_need_bytes(ops: tuple[str, ...], sizes: tuple[int, ...], dtype: str, nranks: int) -> int:
    """Host memory one CPU rank needs for this sweep: :data:`RANK_BUFFERS` times its
    largest buffer (that of the op with the largest one, at the largest size), plus
    :data:`RANK_BASE_BYTES`.

    >>> rank_need_bytes(("all_reduce",), (8, 1 << 30), "float", 2) / 2**30
    3.3125
    """
    typesize = DTYPES[dtype]
    largest = 0
    for op in ops:
        geometry = shape(op, max(sizes), nranks, typesize)
        largest = max(largest, max(geometry.send_count, geometry.recv_count) * typesize)
    return RANK_BUFFERS * largest + RANK_BASE_BYTES


def gib(size_bytes: int) -> str:
    """``3.3 GiB``: a memory amount as the messages print it.

    >>> gib(3 << 30), gib(320 << 20)
    ('3.0 GiB', '0.3 GiB')
    """
    return f"{size_bytes / 2**30:.1f} GiB"


def parse_meminfo(text: str) -> int | None:
    """MemAvailable of /proc/meminfo's text, in bytes; None if it is not there
    (kernels before 3.14).

    >>> parse_meminfo("MemTotal:  24000000 kB\\nMemAvailable:  1048576 kB\\n")
    1073741824
    """
    found = re.search(r"^MemAvailable:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else None


def mem_available_bytes(root: FsRoot) -> int | None:
    """The kernel's estimate of memory available to new work (``proc/meminfo`` under
    ``root``); None when it cannot be read."""
    text = root.read("proc/meminfo")
    return None if text is None else parse_meminfo(text)


def check_fits(
    ops: tuple[str, ...], sizes: tuple[int, ...], dtype: str, *, nproc: int, root: FsRoot
) -> None:
    """Refuse (InputError ``not-enough-memory``) a CPU sweep whose ``nproc`` local
    ranks need more host memory than MemAvailable: the kernel would kill one part-way
    (issue 23). Nothing is refused when MemAvailable cannot be read."""
    available = mem_available_bytes(root)
    if available is None:
        return
    need = rank_need_bytes(ops, sizes, dtype, nproc)
    if need * nproc <= available:
        return
    # the largest -e whose ranks would fit, as a power of two nccl-tests' syntax reads
    room = available // nproc - RANK_BASE_BYTES
    most = 1 << (max(room // RANK_BUFFERS, 1).bit_length() - 1) if room > 0 else 0
    fix = "fewer --nproc"
    if most >= 1024:
        fix = f"-e {_size_text(most)} or less, or " + fix
    raise InputError(
        f"{nproc} CPU rank(s) sweeping up to {_size_text(max(sizes))} need about "
        f"{gib(need * nproc)} "
        f"({gib(need)} per rank: {RANK_BUFFERS} buffers of the largest size and "
        f"{gib(RANK_BASE_BYTES)} for torch), but only {gib(available)} is available: "
        "the kernel's out-of-memory killer would end a rank part-way",
        code="not-enough-memory",
        where=f"MemAvailable in {root.display('proc/meminfo')}",
        fix=fix + " (or free memory on this machine)",
    )


def _size_text(size_bytes: int) -> str:
    """``256M``: a size in nccl-tests' -e syntax where it is a whole K, M or G."""
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if size_bytes >= 1 << shift and size_bytes % (1 << shift) == 0:
            return f"{size_bytes >> shift}{unit}"
    return str(size_bytes)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class OomCounter:
    """How many processes of this cgroup the out-of-memory killer has ended so far."""

    path: str  # the file it was read from, as shown to the user
    kills: int


def oom_kills(root: FsRoot) -> OomCounter | None:
    """The ``oom_kill`` counter of this process's memory cgroup: cgroup v2's
    memory.events (counts kills by any OOM killer, the kernel's global one included:
    Documentation/admin-guide/cgroup-v2.rst) or cgroup v1's memory.oom_control. The
    ranks hpnet starts stay in its cgroup, so a rise while they ran is theirs. None
    when neither can be read (no cgroup, no permission, a kernel before 4.13)."""
    candidates = []
    for line in (root.read("proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        path = parts[2].strip("/")
        if parts[0] == "0" and not parts[1]:  # cgroup v2
            candidates += [os.path.join("sys/fs/cgroup", path, "memory.events")]
        elif "memory" in parts[1].split(","):  # cgroup v1
            candidates += [os.path.join("sys/fs/cgroup/memory", path, "memory.oom_control")]
    # inside a container the cgroup's own files are at the mount's top
    candidates += ["sys/fs/cgroup/memory.events", "sys/fs/cgroup/memory/memory.oom_control"]
    for rel in candidates:
        text = root.read(os.path.normpath(rel))
        found = re.search(r"^oom_kill\s+(\d+)", text or "", re.MULTILINE)
        if found:
            return OomCounter(path=root.display(os.path.normpath(rel)), kills=int(found.group(1)))
    return None


def killed_note(
    before: OomCounter | None, after: OomCounter | None, need: str | None
) -> str | None:
    """Why a rank hpnet did not end was killed by SIGKILL: the out-of-memory killer
    for certain when the cgroup's ``oom_kill`` counter rose while the ranks ran, most
    likely when the counter cannot be read (nothing else sends SIGKILL unasked as
    often). None when the counter is there and did not move. ``need``: the sweep's
    memory per rank, in words.

    >>> killed_note(OomCounter(path="memory.events", kills=0),
    ...             OomCounter(path="memory.events", kills=1), None)
    "the kernel's out-of-memory killer (oom_kill in memory.events went from 0 to 1)"
    >>> killed_note(None, None, "about 3.3 GiB per rank")
    "most likely the kernel's out-of-memory killer (the sweep needs about 3.3 GiB per rank)"
    """
    if before is not None and after is not None and before.path == after.path:
        if after.kills <= before.kills:
            return None
        note = (
            f"the kernel's out-of-memory killer (oom_kill in {after.path} went from "
            f"{before.kills} to {after.kills}"
        )
        return note + (f"; the sweep needs {need})" if need else ")")
    note = "most likely the kernel's out-of-memory killer"
    return note + (f" (the sweep needs {need})" if need else "")
