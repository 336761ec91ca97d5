"""`hpnet verify`: the review's defects at the input edge (gzip, FIFOs, NUL bytes,
over-long lines, standard input) and in `--run`'s probe, each pinned by a test.

The analysis defects are in test_verify_review.py, whose helpers these share.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse
from tests.unit.test_verify_review import GOOD

# ------------------------------------------------------------------ 6, 8, 17, 22 and streams


def read(paths: Sequence[str], jobs: int = 1) -> VerifyReport:
    inputs, notes = collect_inputs(paths)
    return analyse(read_logs(inputs, jobs=jobs, notes=notes))


def test_a_truncated_or_corrupt_gzip_is_analysed_up_to_where_it_breaks(tmp_path: Path) -> None:
    """EOFError / BadGzipFile / zlib.error escaped as exit 3."""
    packed = gzip.compress(GOOD.read_bytes())
    whole = read([str(GOOD)])
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) * 2 // 3])
    result = read([str(cut)])
    assert result.ranks and any("truncated or corrupt gzip" in u for u in result.unknowns)
    assert 0 < result.num_lines < whole.num_lines
    corrupt = tmp_path / "corrupt.log.gz"
    corrupt.write_bytes(packed[:-8] + b"\0" * 8)  # a wrong CRC and length
    assert any("corrupt gzip" in u for u in read([str(corrupt)]).unknowns)
    tiny = tmp_path / "tiny.gz"
    tiny.write_bytes(b"\x1f\x8b")
    assert main(["verify", str(tiny)]) == 2  # nothing readable: an input error


def test_a_fifo_in_a_directory_is_skipped_not_waited_for(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_bytes(GOOD.read_bytes())
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "sub").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path)  # a link to a directory: noted, not followed
    results: list[VerifyReport] = []  # opening the FIFO blocked for ever: a deadline
    reader = threading.Thread(target=lambda: results.append(read([str(tmp_path)])), daemon=True)
    reader.start()
    reader.join(30)
    assert results, "reading a directory with a FIFO in it did not end"
    result = results[0]
    assert result.status == "PASS"
    assert any("pipe: skipped, not a regular file" in u for u in result.unknowns)
    assert any("loop: skipped, a link to a directory" in u for u in result.unknowns)


def test_a_fifo_and_gzip_on_standard_input_are_read_as_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hpnet verify <(zcat job.log.gz)` and `hpnet verify - < job.log.gz`."""
    data = GOOD.read_bytes()
    expected = read([str(GOOD)])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    from_fifo = read([str(fifo)])
    writer.join()
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(data)))
    monkeypatch.setattr(sys, "stdin", stdin)
    from_stdin = read(["-"])
    for result in (from_fifo, from_stdin):
        assert (result.verdict, result.num_lines) == (expected.verdict, expected.num_lines)


def test_nul_bytes_of_a_copytruncate_rotation_do_not_make_a_log_binary(tmp_path: Path) -> None:
    data = GOOD.read_bytes()
    expected = read([str(GOOD)])
    rotated = tmp_path / "rotated.log"  # copytruncate: the old length comes back as NULs
    rotated.write_bytes(b"\0" * 100_000 + data)
    stray = tmp_path / "stray.log"  # one NUL in the first 8 KiB (a torn write)
    stray.write_bytes(data[:100] + b"\0" + data[100:])
    for path in (rotated, stray):
        result = read([str(path)])
        assert result.verdict == expected.verdict and result.num_lines == expected.num_lines
    assert any("100000 NUL bytes" in u for u in read([str(rotated)]).unknowns)
    elf = tmp_path / "a.out"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 64 + b"\x01\x02" * 500)
    assert collect_inputs([str(elf)])[0] == []


def test_line_counts_and_cut_notes_agree_on_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line longer than a read block counted as many lines ('read 439 lines (33554615
    from NCCL)' for one 2 GB line) and got a note on the stream paths only."""
    from hpnet.ncclog import read as logread

    monkeypatch.setattr(logread, "BLOCK_BYTES", 64 << 10)  # the 3 MiB line spans 48 blocks
    nccl = GOOD.read_bytes().splitlines(keepends=True)
    huge = b"node1:1:1 [0] NCCL INFO " + b"x" * (3 << 20) + b"\n"
    data = b"".join(nccl[:300]) + huge + b"".join(nccl[300:])
    path = tmp_path / "long.log"
    path.write_bytes(data)
    packed = tmp_path / "long.log.gz"
    packed.write_bytes(gzip.compress(data))
    results = [read([str(path)]), read([str(packed)])]
    monkeypatch.setattr(logread, "RANGE_BYTES", 1 << 20)  # ranges start inside the line
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    results.append(read([str(path)], jobs=3))
    for result in results:
        assert result.num_lines == len(nccl) + 1
        assert result.num_nccl_lines == len(nccl) + 1
        assert sum("1 line(s) longer than 1 MiB" in u for u in result.unknowns) == 1
        assert result.verdict == results[0].verdict
    assert results[0].num_bytes == results[2].num_bytes == len(data)


# ------------------------------------------------------------------ 10-12: the probe


def test_the_probe_counts_the_gpus_cuda_visible_devices_leaves(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpnet.node import gpus as gpus_module
    from hpnet.node.gpus import Gpu, GpuReport
    from hpnet.verify import probe

    four = tuple(Gpu(index=i, name="H200", pci_bus_id=f"0000:{i}a:00.0") for i in range(4))
    monkeypatch.setattr(
        gpus_module, "read_gpus_nvml", lambda _fs: GpuReport(source="nvml", gpus=four)
    )
    assert probe._gpu_count({}) == 4
    assert probe._gpu_count({"CUDA_VISIBLE_DEVICES": "2,3"}) == 2
    assert probe._gpu_count({"CUDA_VISIBLE_DEVICES": ""}) == 0
    assert probe._gpu_count({"CUDA_VISIBLE_DEVICES": "-1"}) == 0
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert main(["verify", "--run", "--nproc", "3"]) == 2
    assert "error[usage]: 3 ranks for 2 GPU(s)" in capsys.readouterr().err
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert main(["verify", "--run"]) == 2
    assert "CUDA_VISIBLE_DEVICES hides them" in capsys.readouterr().err


def test_the_probe_ranks_do_not_inherit_nccl_debug_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpnet import localrun
    from hpnet.localrun import RankResult, RankSpec
    from hpnet.verify import probe

    seen: list[RankSpec] = []

    def fake_run(specs: list[RankSpec], **_kwargs: object) -> list[RankResult]:
        seen.extend(specs)
        for spec in specs:
            Path(spec.log_path).write_text("")
        return [RankResult(rank=s.rank, returncode=0, log_path=s.log_path) for s in specs]

    monkeypatch.setattr(probe, "_gpu_count", lambda _environ: 2)
    monkeypatch.setattr(localrun, "run_ranks", fake_run)
    environ = {"NCCL_DEBUG_FILE": "/tmp/mine.%h.%p", "NCCL_IB_HCA": "mlx5_0", "PATH": "/bin"}
    probe.run_probe(nproc=2, fake_hosts=1, environ=environ, keep_dir=str(tmp_path))
    assert len(seen) == 2
    assert all("NCCL_DEBUG_FILE" not in s.env and s.env["NCCL_IB_HCA"] == "mlx5_0" for s in seen)


def test_fake_hosts_gives_exactly_k_hosts() -> None:
    from hpnet.verify.probe import plan_probe

    for nproc, hosts in ((4, 3), (8, 3), (5, 2), (4, 4), (8, 2)):
        plan = plan_probe(nproc=nproc, fake_hosts=hosts, port=1, python="python")
        ids = [env["NCCL_HOSTID"] for env in plan.rank_env]
        assert len(set(ids)) == hosts, (nproc, hosts, ids)
        sizes = [ids.count(i) for i in dict.fromkeys(ids)]
        assert max(sizes) - min(sizes) <= 1


def test_probe_flags_without_run_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for flags in (["--fake-hosts", "2"], ["--nproc", "2"], ["--logs", "x"]):
        assert main(["verify", str(GOOD), *flags]) == 2
        assert "only with --run" in capsys.readouterr().err
