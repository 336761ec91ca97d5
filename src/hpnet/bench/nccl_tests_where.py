"""Where nccl-tests output says it ran: nccl-tests' version, NCCL's, the GPUs and hosts
of its device tables. For :mod:`hpnet.bench.nccl_tests`, fed the same lines (launcher
prefixes already stripped).

The device table (src/common.cu, every tag: ``#  Rank %2d Group %2d Pid %6d on %10s device
%2d [%s] %s``; before 2.13 without ``Group``) is printed once per run: a file of ten runs
over 16 GPUs lists 160 device lines and has 16 GPUs, so GPUs are counted per table.
"""

from __future__ import annotations

import re

__all__ = ["NRANKS", "Where"]

#: a device line's rank: ``#  Rank  3 Group  0 Pid ...`` (``#   Rank  3 Pid`` before 2.13)
NRANKS = re.compile(r"#\s+Rank\s+(\d+)\s")
_TESTS_VERSION = re.compile(r"#\s*nccl-tests version (\S+)(?:.*?nccl-library=(\d+))?")
_NCCL_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")
#: a device line's host, device and GPU name: "... on  node1 device  3 [0x1b] NVIDIA A100"
_DEVICE = re.compile(r"\bon\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+?)\s*$")


class Where:
    """What the output says of where it ran, fed one line at a time; :meth:`meta` leaves
    out an item the output does not say.

    >>> where = Where()
    >>> for run in range(2):
    ...     for rank in range(2):
    ...         where.feed(f"#  Rank {rank} Group 0 Pid 1 on n1 device {rank} [0x1b] NVIDIA A100")
    >>> where.meta()["gpus"]
    ['2 x NVIDIA A100']
    """

    def __init__(self) -> None:
        self.tests_version: str | None = None
        self.gpus: dict[str, int] = {}
        self.hosts: dict[str, None] = {}
        self.nccl: dict[str, None] = {}
        #: the device table being read: its GPUs, and the ranks it listed so far
        self.table_gpus: dict[str, int] = {}
        self.table_ranks: set[int] = set()

    def feed(self, line: str) -> None:
        version = _TESTS_VERSION.search(line)
        if version:
            if self.tests_version is None:
                self.tests_version = version.group(1)
            if version.group(2):
                code = int(version.group(2)[:9])  # NCCL_VERSION_CODE: 22907 = 2.29.7
                self.nccl.setdefault(f"{code // 10000}.{code // 100 % 100}.{code % 100}", None)
            return
        found = _NCCL_VERSION.search(line)
        if found:
            self.nccl.setdefault(found.group(1), None)
        ranks = NRANKS.search(line)
        if ranks:
            device = _DEVICE.search(line)
            if device:
                rank = int(ranks.group(1)[:9])
                if rank in self.table_ranks:  # a rank again: the next run's device table
                    self._count_table()
                self.table_ranks.add(rank)
                self.hosts.setdefault(device.group(1), None)
                self.table_gpus[device.group(2)] = self.table_gpus.get(device.group(2), 0) + 1

    def _count_table(self) -> None:
        """The device table just read counts once: the most GPUs of a kind any run had."""
        for name, count in self.table_gpus.items():
            self.gpus[name] = max(self.gpus.get(name, 0), count)
        self.table_gpus = {}
        self.table_ranks = set()

    def meta(self) -> dict[str, object]:
        self._count_table()
        meta: dict[str, object] = {}
        if self.tests_version is not None:
            meta["nccl_tests_version"] = self.tests_version
        if self.nccl:
            meta["nccl_version"] = ", ".join(self.nccl)
        if self.gpus:
            meta["gpus"] = [f"{count} x {name}" for name, count in self.gpus.items()]
        if self.hosts:
            meta["hosts"] = list(self.hosts)
        return meta
