"""A large file's ranges merged in the workers, a shard of the job's processes each.

With many workers, the main process's serial tail was most of ``hpnet verify``'s time
on a large job (issue 28): each range meets every process again, and each range's
record of each process was unpickled, merged and, at the end, frozen there, one after
another (12 of 17 s on 0.63 GB of 12,288 processes with 16 workers). Here a worker
returns its range's folder without its process records, and the records pickled apart
in shards: a process's shard is the same in every range (a CRC of its key). Once every
range is scanned, each shard's records are merged range by range and frozen in a
worker (:func:`merge_shard`); the main process merges only the folders' own parts and
receives each process once, frozen.

The answer is the one-by-one merge's (:meth:`hpnet.ncclog.facts.LogFolder.merge`): a
process's record depends on its own records only, in range order, the order a shard
merges them in; the processes keep the order they first appeared in (each range's
keys). Two things depend on more than one process. The cap on evidence lines kept in
all (``MAX_EVIDENCE``; a 12,288-process job reaches it) decides which process's new
warning is the first not kept: the main process counts each range's warnings in input
order, as the one-by-one merge keeps them, and tells the shards where the cap was
reached (:data:`Cap`). Hosts guessed from glued lines may join two processes' records:
where a range guessed one, the same pieces are merged one by one instead.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import tempfile
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.facts import LogFolder, shifter
from hpnet.ncclog.model import NcclLog, ProcessLog
from hpnet.ncclog.process import MAX_EVIDENCE, MAX_WARNINGS_PER_PROCESS, ProcessFacts

if TYPE_CHECKING:  # imported where a pool is made (hpnet.ncclog.read)
    from concurrent.futures import Executor

__all__ = ["RangeParts", "ShardedMerge", "merge_shard", "split"]


#: a shard of a range's records, pickled: the bytes, or where a worker wrote them (a
#: file of its range, the offset and the length), so that the main process neither
#: holds nor sends them (a 12,288-process job's ranges write 210 MB)
Piece = bytes | tuple[str, int, int]


@dataclasses.dataclass
class RangeParts:
    """What a worker returns for its range: the folder without its process records,
    the processes' keys in the order they appeared, and their records in shards."""

    folder: LogFolder
    keys: tuple[str, ...]
    shards: tuple[Piece, ...]
    #: each process's warnings, by what keeps them apart (LogFolder.keep_line), in order:
    #: the main process places the cap on evidence lines with them
    warnings: dict[str, tuple[str, ...]]


#: where the cap on evidence lines kept in all was reached, in input order: the range's
#: index, and for its processes from there on how many new lines each may keep (the
#: ranges after it keep none); None: never
Cap = tuple[int, dict[str, int]] | None


@dataclasses.dataclass
class ShardResult:
    """A shard's processes merged over every range and frozen, and what the main
    process adds up: lines not kept, memberships over the per-process cap."""

    frozen: dict[str, ProcessLog]
    num_dropped: int
    num_dropped_memberships: int


def shard_of(key: str, num_shards: int) -> int:
    """The shard of the process ``key``: the same in every worker and every run."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % num_shards


def split(folder: LogFolder, num_shards: int, directory: str | None) -> RangeParts:
    """A range's folder as its parts (in the worker that scanned it); its records are
    written to a file of ``directory`` where it can be written, else kept as bytes."""
    processes, folder._processes = folder._processes, {}
    shards: list[dict[str, ProcessFacts]] = [{} for _ in range(num_shards)]
    for key, record in processes.items():
        shards[shard_of(key, num_shards)][key] = record
    pickled = [pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL) for s in shards]
    pieces: list[Piece] = list(pickled)
    if directory is not None:
        try:
            fd, path = tempfile.mkstemp(dir=directory, suffix=".range")
            with os.fdopen(fd, "wb") as handle:
                offset = 0
                for index, data in enumerate(pickled):
                    handle.write(data)
                    pieces[index] = (path, offset, len(data))
                    offset += len(data)
        except OSError:  # a full or read-only disk: the bytes go back through the pool
            pieces = list(pickled)
    return RangeParts(
        folder=folder,
        keys=tuple(processes),
        shards=tuple(pieces),
        warnings={
            key: tuple(line.message or line.text for line in record.warnings.values())
            for key, record in processes.items()
            if record.warnings
        },
    )


def _load(piece: Piece) -> dict[str, ProcessFacts]:
    if isinstance(piece, tuple):
        path, offset, length = piece
        with open(path, "rb") as handle:
            handle.seek(offset)
            piece = handle.read(length)
    return pickle.loads(piece)  # type: ignore[no-any-return]  # noqa: S301 - our workers'


def merge_shard(pieces: Sequence[Piece], line_offsets: Sequence[int], cap: Cap) -> ShardResult:
    """One shard's records from every range (in order), merged and frozen (a worker's
    job). ``line_offsets``: each range's lines before it in its source; ``cap``: where
    the evidence lines kept in all reached their cap (:data:`Cap`)."""
    counter = LogFolder()  # keep_line's count of new lines, per range and process
    records: dict[str, ProcessFacts] = {}
    for index, (piece, line_offset) in enumerate(zip(pieces, line_offsets, strict=True)):
        shift = shifter(line_offset)
        room = cap[1] if cap is not None and index == cap[0] else {}
        after = cap is not None and index > cap[0]  # the ranges after it keep no new line
        for key, process in _load(piece).items():
            mine = records.get(key)
            if mine is None:
                mine = records[key] = ProcessFacts(
                    (process.key, process.host, process.pid, process.launcher_rank, None)
                )
            counter._num_evidence = 0
            counter.max_evidence = 0 if after else room.get(key, sys.maxsize)
            mine.merge(process, shift, counter)
    return ShardResult(
        frozen={key: record.freeze() for key, record in records.items()},
        num_dropped=counter.num_dropped,
        num_dropped_memberships=sum(r.dropped_memberships for r in records.values()),
    )


class ShardedMerge:
    """The main process's side: sources and ranges in input order, then the result."""

    def __init__(self, notes: Sequence[str], num_shards: int) -> None:
        self._notes = tuple(notes)
        self.num_shards = num_shards
        #: the input in order: a source's name, or a range's parts and line offset
        self._steps: list[str | tuple[RangeParts, int]] = []

    def add_source(self, name: str) -> None:
        self._steps.append(name)

    def add(self, parts: RangeParts, line_offset: int) -> None:
        self._steps.append((parts, line_offset))

    def result(self, pool: Executor) -> NcclLog:
        ranges = [step for step in self._steps if not isinstance(step, str)]
        if any(parts.folder._guessed for parts, _ in ranges):
            return self._one_by_one()
        folder, order, cap = self._place()
        offsets = [offset for _, offset in ranges]
        futures = [
            pool.submit(merge_shard, [parts.shards[shard] for parts, _ in ranges], offsets, cap)
            for shard in range(self.num_shards)
        ]
        frozen: dict[str, ProcessLog] = {}
        for future in futures:
            shard: ShardResult = future.result()
            frozen.update(shard.frozen)
            folder.num_dropped += shard.num_dropped
            folder.num_dropped_memberships += shard.num_dropped_memberships
        return folder.result([frozen[key] for key in order])

    def _place(self) -> tuple[LogFolder, dict[str, None], Cap]:
        """The folders' own parts merged in input order, and each range's processes'
        warnings counted after them as the one-by-one merge keeps them: the processes'
        order, and where the cap on evidence lines kept in all was reached, if it was."""
        folder = self._folder()
        order: dict[str, None] = {}
        kept: dict[str, set[str]] = {}  # each process's warnings kept so far
        cap: Cap = None
        index = 0
        for step in self._steps:
            if isinstance(step, str):
                folder.add_source(step)
                continue
            parts, line_offset = step
            folder.merge(parts.folder, line_offset=line_offset)
            order.update(dict.fromkeys(parts.keys))
            for key, warnings in parts.warnings.items():
                mine = kept.setdefault(key, set())
                num_kept = 0
                for warning in warnings:
                    if warning in mine or len(mine) >= MAX_WARNINGS_PER_PROCESS:
                        continue
                    if folder._num_evidence >= MAX_EVIDENCE:
                        cap = cap or (index, {})
                        if cap[0] == index:
                            cap[1].setdefault(key, num_kept)
                        continue
                    mine.add(warning)
                    num_kept += 1
                    folder._num_evidence += 1
            index += 1
        return folder, order, cap

    def _folder(self) -> LogFolder:
        folder = LogFolder()
        for note in self._notes:
            folder.note(note)
        return folder

    def _one_by_one(self) -> NcclLog:
        folder = self._folder()
        for step in self._steps:
            if isinstance(step, str):
                folder.add_source(step)
                continue
            parts, line_offset = step
            records: dict[str, ProcessFacts] = {}
            for piece in parts.shards:
                records.update(_load(piece))
            parts.folder._processes = {key: records[key] for key in parts.keys}
            folder.merge(parts.folder, line_offset=line_offset)
        return folder.result()
