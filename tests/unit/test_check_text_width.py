"""The check's text report keeps hpnet's own words within 100 columns (issue 26, item 5:
"verdict lines run past 200 characters"). Measured on the 4x H200: the fix of "no RDMA
network" was 210 characters and its evidence 150. Quoted input lines stay whole (a
quoted line is a line of the input), and a command in backticks is never broken."""

from __future__ import annotations

from pathlib import Path

from hpnet.check.model import CheckReport
from hpnet.render.check import WIDTH, render_check
from hpnet.result import Problem, Verdict

RECORDED = Path(__file__).parents[2] / "benchmarks/results/4gpu-h200x4-2026-11-27/check/check.txt"


def _problem_lines(recorded: str) -> tuple[str, list[str], str]:
    """The first problem of the recorded report: its text, evidence and fix."""
    lines = recorded.splitlines()
    start = lines.index("What to fix, most important first") + 1
    what = lines[start].split(". ", 1)[1]
    body = [line.strip() for line in lines[start + 1 : start + 4]]
    return what, body[:-1], body[-1].removeprefix("fix: ")


def test_a_long_fix_and_evidence_wrap_at_spaces_and_lose_no_word() -> None:
    recorded = RECORDED.read_text()
    assert max(len(line) for line in recorded.splitlines()) > 200  # as it was on the device
    what, evidence, fix = _problem_lines(recorded)
    quoted = (
        "logs/rank0.log:43: vm:2381:2381 [0] NCCL INFO Channel 00/0 : 3[3] -> 0[0] "
        "[receive] via NET/Socket/0 " + "x" * 40
    )
    problem = Problem(
        impact=1, what=what, code="hardware:rdma", evidence=(*evidence, quoted), fix=fix
    )
    report = CheckReport(
        verdict=Verdict.NOT_READY, headline=what, node="vm", profile="auto", transport="socket",
        gpus=4, gpu_name="NVIDIA H200", rdma_ports=(), stages=(), problems=(problem,),
        doctor={}, doctor_checks=(), environment={},
    )  # fmt: skip
    text = render_check(report)
    lines = text.splitlines()
    assert quoted in [line.strip() for line in lines]  # whole, as the input has it
    # the verdict stays the first line, whole (scripts read it); the rest wraps
    assert lines[0] == f"hpnet check: NOT READY — {what}"
    assert all(len(line) <= WIDTH for line in lines[1:] if quoted not in line)
    # every word is still there, in order; the pasted flags and the command intact
    assert " ".join(text.split()).count(" ".join(fix.split())) == 1
    assert any("`hpnet doctor`" in line for line in lines)
    assert any(line.strip().startswith("fix: ") for line in lines)


def test_a_fatal_verify_verdict_says_what_failed_without_repeating_that_nothing_was_proven() -> (
    None
):
    """The README's failed job: the verdict ran to 220 characters, the second half saying
    again that nothing was proven after NCCL had already failed (issue 26, item 5)."""
    import contextlib
    import io

    from hpnet.cli.main import main

    out = io.StringIO()
    logs = Path(__file__).parents[2] / "tests/data/nccl-logs/h200x4-bad-socket-ifname-nccl2.28.9"
    with contextlib.redirect_stdout(out):
        code = main(["verify", str(logs)])
    first = out.getvalue().splitlines()[0]
    assert code == 1
    assert first == (
        "hpnet verify: FAIL — NCCL failed: no network interface for NCCL's bootstrap — "
        "NCCL started on all 4 processes; no connection line follows"
    )
    assert len(first) <= WIDTH + 40
