"""Issue 24 rule 5 on real nccl-tests output: a failure anywhere is never a pass, rows
split by other processes' lines are joined, the op and the rank count come from
everything the text says, GPUs are counted per run, and the old float error column is
never shown under ``#wrong``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpnet.bench.load import load_result
from hpnet.bench.nccl_tests import parse_nccl_tests
from hpnet.cli.main import main
from hpnet.render.bench import render_report

DATA = Path(__file__).parents[1] / "data" / "nccl-tests"


def _file(prefix: str) -> Path:
    (found,) = [p for p in DATA.glob(prefix + "*.txt") if not p.name.endswith(".source.txt")]
    return found


def test_a_failure_printed_before_the_table_fails_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # NVIDIA/nccl-tests#280: "Test NCCL failure" pasted above the device table and rows
    path = _file("all_reduce-3xrtx4090-Test-NCCL-failure-pasted-before-table")
    (run,) = load_result(str(path)).runs
    assert run.failure is not None and "unhandled CUDA error" in run.failure
    assert (run.op, run.nranks, len(run.rows)) == ("all_reduce", 3, 3)
    assert main(["bench", "import", str(path)]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_a_text_with_only_a_failure_line_is_a_failed_run_not_an_input_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # NVIDIA/nccl-tests#66: the command and "Test CUDA failure common.cu:730 'unknown error'"
    path = _file("all_reduce-cuda-failure-unknown-error-only-failure-line")
    (run,) = load_result(str(path)).runs
    assert run.failure == "Test CUDA failure common.cu:730 'unknown error'"
    assert (run.op, run.rows) == ("all_reduce", ())
    assert main(["bench", "import", str(path)]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_a_failure_after_the_last_run_ended_fails_it() -> None:
    # real lines: NVIDIA/nccl#1706's footer, then nccl-tests#219's failure lines
    text = (
        "   134217728      33554432     float     sum      -1   5190.8   25.86   25.86      0"
        "   5186.6   25.88   25.88      0\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 8.62002 \n#\n"
        "fengyun: Test NCCL failure common.cu:959 'internal error - please report this issue"
        " to the NCCL developers / '\n"
    )
    (run,) = parse_nccl_tests(text).runs
    assert run.failure is not None and "internal error" in run.failure


def test_the_footer_names_the_op_of_the_run_it_closes_not_the_next() -> None:
    # ROCm/rccl#2075: alltoall rows (all_gather or alltoall from the rows alone), the footer
    # "# Collective test concluded: alltoall_perf", then a script's "==== scatter_perf ===="
    path = _file("alltoall-2rank-gfx1151-rccl-tests-rows-then-footer")
    (run,) = load_result(str(path)).runs
    assert (run.op, run.nranks, len(run.rows)) == ("alltoall", 2, 10)
    assert not any("not named" in note for note in run.notes)


def test_the_rank_count_comes_from_nccls_own_lines() -> None:
    # NVIDIA/nccl#1706: no device table, NCCL's "rank r nranks 2 ... Destroy COMPLETE"
    path = _file("all_reduce-2rank-last-row-then-NCCL-destroy-lines-nranks")
    (run,) = load_result(str(path)).runs
    assert run.nranks == 2
    assert any("NCCL's own lines" in note for note in run.notes)


def test_rows_split_by_debug_lines_are_joined() -> None:
    # NVIDIA/nccl#1453 (MPICH "[0] " prefixes, NCCL_DEBUG_SUBSYS=TUNING): a row's head is
    # glued to a debug line and its cells follow other debug lines. The lines are the
    # thread's; the stored excerpt holds one cell group (the 256 B row's in-place cells),
    # re-used here for both placements to show the join.
    info = (
        "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 512 Bytes -> Algo 0 proto 0"
        " time 25.259054\n"
    )
    text = (
        "[0]          512           128     float     sum      -1"
        + info.removesuffix("\n")
        + "\n"
        + info * 3
        + "[0]     62.05    0.00    0.01      0\n"
        + info
        + "[0]     62.05    0.00    0.01      0\n"
    )
    (run,) = parse_nccl_tests(text).runs
    (row,) = run.rows
    assert (row.size_bytes, row.count, row.redop) == (512, 128, "sum")
    assert row.out_of_place is not None and row.in_place is not None
    assert row.in_place.time_us == 62.05 and row.in_place.wrong == 0


def test_a_split_row_that_never_completes_is_a_row_cut_off() -> None:
    path = _file("all_reduce-2rank-tuning-debug-lines-split-rows")
    (run,) = parse_nccl_tests(path.read_text()).runs
    assert run.rows == ()
    assert any(note.startswith("a row cut off: 512") for note in run.notes)


def test_gpus_are_counted_per_run() -> None:
    # 10 runs over the same 16 B200s: 16 GPUs, not 160
    report = load_result(str(_file("multi-10ops-2node-16xb200-hypercube-FAILED")))
    assert report.metadata["gpus"] == ["16 x NVIDIA B200"]


def test_the_old_float_error_column_is_never_shown_under_wrong() -> None:
    # nccl-tests < 2.13 printed the largest error ("%5.0le") in a column named "error"
    report = load_result(str(_file("all_reduce-2node-16rank-dgx-sriov-roce-k8s-error-column")))
    table = render_report(report)
    header = next(line for line in table.splitlines() if "busbw" in line and "size" in line)
    assert "#wrong" not in header and header.count(" error") == 2
    again = parse_nccl_tests(table)  # hpnet reads its own table back, errors included
    assert again.runs[0].rows == report.runs[0].rows
