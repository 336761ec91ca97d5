"""A large file's process records merged in shards (hpnet.ncclog.shards) give the answer
the one-by-one merge gives, also where the caps on evidence lines decide what is kept."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from hpnet.ncclog import read as logread
from hpnet.ncclog import shards
from hpnet.ncclog.model import NcclLog
from hpnet.ncclog.process import MAX_EVIDENCE, MAX_WARNINGS_PER_PROCESS
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import analyse
from tests.conftest import DATA
from tests.unit.test_nccl_log import _InProcessPool


def _warn(process: int, number: int) -> str:
    return (
        f"node{process % 7}:{1000 + process}:{1000 + process} [0] misc/socket.cc:50 "
        f"NCCL WARN Net : Connection closed by remote peer 10.0.0.{number % 250}<{number}>"
    )


def _log(num_processes: int, warns: int, rounds: int) -> str:
    """Every process's NCCL version and ``warns`` WARNs of its own, ``rounds`` times
    over (later rounds repeat the first's lines and add new ones), interleaved."""
    lines = []
    for round_ in range(rounds):
        for process in range(num_processes):
            prefix = f"node{process % 7}:{1000 + process}:{1000 + process} [0]"
            lines.append(f"{prefix} NCCL INFO NCCL version 2.21.5+cuda12.4")
            lines.extend(_warn(process, round_ * warns + w) for w in range(warns))
            lines.append(_warn(process, 0))  # said again: counted on the kept line
        lines.append(f"WARN bare line of round {round_} NCCL WARN Cuda failure 'out of memory'")
    return "\n".join(lines) + "\n"


def _read(
    path: Path, monkeypatch: pytest.MonkeyPatch, range_bytes: int
) -> tuple[NcclLog, NcclLog, NcclLog]:
    """One pass; ranges merged one by one (as before shards); ranges merged in shards."""
    inputs, _ = collect_inputs([str(path)])
    one = read_logs(inputs, jobs=1)
    monkeypatch.setattr(logread, "RANGE_BYTES", range_bytes)
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(logread, "_pool", lambda _workers: _InProcessPool())
    sharded = read_logs(inputs, jobs=16)
    with monkeypatch.context() as patch:
        patch.setattr(shards.ShardedMerge, "result", lambda self, _pool: self._one_by_one())
        one_by_one = read_logs(inputs, jobs=16)
    return one, one_by_one, sharded


@pytest.mark.parametrize(
    ("num_processes", "warns", "rounds"),
    [(300, 3, 4), (40, 30, 3), (1100, 2, 2), (10, 3, 2)],
    ids=["cap-reached-in-a-later-range", "per-process-cap", "cap-in-the-first-round", "below"],
)
def test_shards_keep_and_drop_the_lines_the_one_by_one_merge_does(
    num_processes: int, warns: int, rounds: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "warns.log"
    path.write_text(_log(num_processes, warns, rounds))
    one, one_by_one, sharded = _read(path, monkeypatch, 64 << 10)
    assert sharded == one_by_one
    assert analyse(sharded) == analyse(one)
    total = num_processes * min(warns * rounds, MAX_WARNINGS_PER_PROCESS)
    assert (one.num_dropped > 0) == (total > MAX_EVIDENCE)


def test_a_merged_shard_is_what_the_folder_merge_gives(tmp_path: Path) -> None:
    """The pieces themselves: a range's records pickled apart, and as bytes where no
    directory is given (a disk that cannot be written)."""
    path = tmp_path / "warns.log"
    path.write_text(_log(30, 2, 2))
    folder = logread._scan_range(str(path), 0, path.stat().st_size, str(path), True)
    keys = tuple(folder._processes)
    parts = shards.split(folder, 3, None)
    assert parts.keys == keys and all(isinstance(p, bytes) for p in parts.shards)
    written = shards.split(
        logread._scan_range(str(path), 0, path.stat().st_size, str(path), True), 3, str(tmp_path)
    )
    assert all(isinstance(p, tuple) for p in written.shards)
    for shard in range(3):
        got = shards.merge_shard([written.shards[shard]], [0], None).frozen
        assert set(got) == {k for k in keys if shards.shard_of(k, 3) == shard}
        assert got == shards.merge_shard([parts.shards[shard]], [0], None).frozen


def test_every_recorded_log_pickles_back_to_itself() -> None:
    """The frozen records travel pickled by their fields (model._reduce_by_fields)."""
    for path in sorted((DATA / "nccl-logs").glob("*.log")):
        inputs, _ = collect_inputs([str(path)])
        log = read_logs(inputs, jobs=1)
        assert pickle.loads(pickle.dumps(log.processes)) == log.processes, path.name  # noqa: S301
