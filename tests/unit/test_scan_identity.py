"""The scanner skips what it already read, and says exactly what reading every line says
(issue 28).

``tests/scan_reference.py`` is the scanner before issue 28, kept as the executable
definition of "today's output": it blanks noise and erases channel numbers over each
whole block, counts every line and reads each distinct one. The scanner now erases
channel numbers in C, remembers the lines that would say nothing if read again (dead
lines: :attr:`hpnet.ncclog.scanstate.ScanState.dead`), counts only the others with noise
blanked as they are counted, and tests a block's program output at once. These tests hold it
to the reference: every event (kind, process, data, text, count, line number, quoted
line, version hint), every count, on every input under tests/data cut into blocks of
several sizes (small blocks make lines repeat across blocks, where dead lines matter), on
a generated log of a long job, and ``hpnet verify``'s bytes (text, ``--json``,
``--expect``) on every recorded NCCL log.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.ncclog import facts, read
from hpnet.ncclog import scan as current
from hpnet.ncclog.lines import Classifier
from tests import scan_reference as reference
from tests.conftest import DATA

ROOT = Path(__file__).parents[2]
INPUTS = sorted(
    p for p in DATA.rglob("*") if p.is_file() and not p.name.endswith((".source.txt", ".md"))
)
NCCL_LOGS = sorted(p for p in (DATA / "nccl-logs").iterdir() if not p.name.endswith(".txt"))


def _scanned(scanner: object, data: bytes, block_bytes: int) -> list[object]:
    """Everything the blocks of ``data`` say, as the folder receives it. Whether a block
    holds a framework word is compared as what the folder keeps (any block so far)."""
    classifier = Classifier()
    said: list[object] = []
    framework = False
    for block, first_line in current.iter_blocks(data, block_bytes):
        result = scanner.scan_block(  # type: ignore[attr-defined]
            block, source="in.log", start_line=first_line, classifier=classifier
        )
        framework = framework or result.framework
        events = [
            (e.kind, e.process, e.data, e.text, e.count, e.line_number, e.raw, e.hint, e.source)
            for e in result.events
        ]
        said.append(
            (result.num_lines, result.num_nccl_lines, result.num_bytes, result.num_cut, framework)
        )
        said.append(events)
    said.append((sorted(classifier.guessed.items()), sorted(classifier.real)))
    return said


@pytest.mark.parametrize("block_bytes", [8 << 20, 4096, 300])
def test_every_input_reads_as_when_every_line_was_read(block_bytes: int) -> None:
    differ = [
        str(path.relative_to(DATA))
        for path in INPUTS
        if _scanned(current, path.read_bytes(), block_bytes)
        != _scanned(reference, path.read_bytes(), block_bytes)
    ]
    assert len(INPUTS) > 400
    assert not differ, differ


@pytest.fixture(scope="module")
def long_job(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A generated log of 1024 processes re-creating their communicators (the speed
    benchmark's), long enough that lines repeat across blocks and processes repeat."""
    path = tmp_path_factory.mktemp("gen") / "job.log"
    subprocess.run(
        [sys.executable, "benchmarks/gen_nccl_log.py", str(path), "--size-gb", "0.012"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return path.read_bytes()


def test_a_long_generated_job_reads_as_when_every_line_was_read(long_job: bytes) -> None:
    # blocks of 256 KiB: the job's lines repeat across many blocks, new lines come in
    # bursts
    said = _scanned(current, long_job, 256 << 10)
    assert said == _scanned(reference, long_job, 256 << 10)
    assert sum(len(events) for events in said[1:-1:2]) > 1000  # type: ignore[arg-type]


def test_a_word_in_noise_is_seen_though_its_blanked_line_is_dead() -> None:
    """An RCCL word (an artefact reader's) in a noise message is seen where the message
    comes, though the process's blanked noise line is dead by then."""
    noise = b"h:1:1 [0] NCCL INFO Connected to proxy localRank 0 -> connection 0x%d\n"
    data = noise % 1 + noise % 2 + b"h:1:1 [0] NCCL INFO Using network IB\n" * 4
    data += b"h:1:1 [0] NCCL INFO PROFILER/Plugin: Could not find: librccl-profiler.so\n"
    said = _scanned(current, data, 150)
    assert said == _scanned(reference, data, 150)
    assert [blocks[-1] for blocks in said[:-1:2]] == [False, False, True]  # type: ignore[index]


def _verify(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", "--jobs", "1", *args])
    return code, out.getvalue(), err.getvalue()


def test_verify_prints_the_same_bytes_on_every_recorded_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = [
        [*extra, str(path.relative_to(ROOT))]
        for path in NCCL_LOGS
        for extra in (["--json"], ["--expect", "net=ib,gdr"])
    ]
    monkeypatch.chdir(ROOT)
    now = [_verify(args) for args in runs]
    monkeypatch.setattr(read, "scan_block", reference.scan_block)
    monkeypatch.setattr(facts, "scan_block", reference.scan_block)
    before = [_verify(args) for args in runs]
    differ = [" ".join(args) for args, a, b in zip(runs, now, before, strict=True) if a != b]
    assert len(runs) > 250
    assert sum(code in (0, 1) and len(out) > 100 for code, out, _ in now) > 250  # verdicts
    assert not differ, differ
