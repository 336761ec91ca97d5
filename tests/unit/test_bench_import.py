"""`hpnet bench import`: every nccl-tests output under tests/data/nccl-tests reads into
the rows and averages its `.source.txt` note says a correct tool finds there.

The expectations below are copied from the notes (written from the files by reading
them, before the parser existed), not from the parser's output.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from hpnet.bench.formulas import bus_factor
from hpnet.bench.load import load_result
from hpnet.bench.model import BenchReport, Measurement
from hpnet.cli.bench_output import verdict_of
from hpnet.cli.main import main
from hpnet.errors import InputError
from tests.conftest import DATA

NT = DATA / "nccl-tests"

# file stem -> one (op, ranks, rows, printed avg, out-of-bounds) per run; "unknown":
# the output names no op and its numbers cannot tell which (the note names it from
# the page around the excerpt)
RUNS: dict[str, list[tuple[str, int | None, int, float | None, int | None]]] = {
    # aborted at its first CUDA call, before the table: no row
    "nccl-tests-2node-h20-vm-abort-before-table-cuda-system-not-yet-initialized-"
    "fabricmanager-mismatch-EXCERPT": [("unknown", None, 0, None, None)],
    # 16 one-rank runs of a binary built without MPI=1, their tables interleaved
    "nccl-tests-all-reduce-2x8-h100-busbw-zero-16-single-rank-runs-non-mpi-build-"
    "nccl-2.18.3-EXCERPT": [("unknown", 1, 24, 0.0, 0)],
    # "Out of bounds values : 4" counts (rank, test) pairs, #wrong the elements
    "nccl-tests-all-reduce-gh200-slingshot-ofi-wrong-elements-at-1mib-nccl-2.29.2": [
        ("all_reduce", 2, 25, 4.79995, 4)
    ],
    "nccl-tests-all-reduce-h100nvl-2node-slingshot-busbw-dip-below-1.1mb-amd-zen4-topo-"
    "regression-nccl-2.30.5": [("all_reduce", 4, 11, 7.20321, 0)],
    "all_gather-1node-8xv100-4GiB-FAILED-hash-stripped-EXCERPT-ncclTests2.0-2.9": [
        ("all_gather", 8, 1, 128.942, 2)  # 8 ranks: size = 8 x count x 4 B (one rank's share)
    ],
    "all_gather-gke-2node-16xb200-rdma-ncclTests2.14.1-2.16.6": [("unknown", 16, 24, 59.3638, 0)],
    "all_reduce-2node-16xh100-8x400g-ib-doca-busbw44-no-header-EXCERPT-nccl2.26.2": [
        ("all_reduce", 16, 10, None, 0)  # 16 ranks from NCCL's own line; no average line
    ],
    # the poster's "..." between 8 B and 262144 B is no row; busbw/algbw = 1 fits several ops
    "all_reduce-2node-dgx-h100-a100-bond0-roce-proto-simple-wrong-nonzero-"
    "author-elided-EXCERPT-nccl2.18.3": [("unknown", None, 3, None, None)],
    # the footer (average, out-of-bounds count) was cut by the page's author
    "all_reduce-4node-16xgh200-slingshot-ofi-int8-wrong-nonzero-"
    "no-footer-EXCERPT-ncclTests2.17.9": [("all_reduce", 16, 28, None, None)],
    "all_reduce-2gpu-rtx2080ti-c0-NA-hashprefixed-ncclTests1.x-2019": [
        ("all_reduce", 2, 21, 0.778073, 0)  # bus factor 1, a reduction, no root: 2 ranks
    ],
    "all_reduce-3node-t4-srun-c0-NA-stepbytes-ncclTests2.10-2.11": [
        ("all_reduce", 3, 11, 0.58536, 0)
    ],
    "all_reduce-3runs-tail6-filtered-c0-NA-EXCERPT-ncclTests2.13.4-2.16.6": [
        # 8 ranks: 2(n-1)/n fits every row only with n = 8 (the note: 8 ranks)
        ("all_reduce", 8, 2, 475.571, 0),
        ("all_reduce", 8, 2, 475.201, 0),
        ("all_reduce", 8, 2, 475.824, 0),
    ],
    "all_reduce-azureml-1node-4xk80-ncclinfo-ncclTests2.10-2.11": [
        ("all_reduce", 4, 7, 2.54225, 0)
    ],
    "all_reduce-coreweave-gb200-nvl72-72rank-slurm-EXCERPT-ncclTests2.13.4-2.14.0": [
        ("all_reduce", 72, 5, 745.53, 0)
    ],
    "all_reduce-dgxspark-2node-gb10-qsfp-versionline-githash-EXCERPT-ncclTests2.20.0": [
        ("all_reduce", 2, 4, None, None)
    ],
    "all_reduce-ecs-erdma-2node-16gpu-flattened-vendor-guide-EXCERPT-c0-NA": [
        ("all_reduce", 16, 30, None, None)  # 2 x 8 GPUs: the bus factor fits 16 alone
    ],
    "all_reduce-eks-efa-2node-t4-mpirun-ncclinfo-ncclTests2.13.4-2.14.0": [
        ("all_reduce", 2, 31, 1.15327, 0)  # "sum" means a reduction from 2.13.4 ("Group")
    ],
    "all_reduce-eks-efa-2node-v100-kubectl-settrace-ncclinfo-ncclTests2.0-2.9": [
        ("all_reduce", 2, 29, 1.16154, 0)  # before 2.13 only reducing ops have redop
    ],
    "all_reduce-gcp-a3mega-2node-16xh100-ncclTests2.14.1-2.16.6": [
        ("all_reduce", 16, 31, 70.742, 0)
    ],
    "all_reduce-socket-2rank-1gpu-rtx5090-mpirun-ncclTests2.18.0": [
        ("all_reduce", 2, 8, 1.57614, 0)
    ],
    "alltoall-2node-16xh800-deviceimpl-D1-illegal-memory-access-abort-ncclTests2.17.6": [
        ("alltoall", 16, 0, None, None)
    ],
    "alltoall-oci-1node-4xgb300-truncated-EXCERPT-ncclTests2.16.8-2.17.2": [
        ("alltoall", 4, 2, 381.478, 0)
    ],
    "h200x4-all_gather-g4-ncclTests2.19.6": [("all_gather", 4, 10, 88.32, 0)],
    "h200x4-all_reduce-g4-graph-ncclTests2.19.6": [("all_reduce", 4, 6, 5.23456, 0)],
    "h200x4-all_reduce-g4-ncclTests2.19.6": [("all_reduce", 4, 26, 79.2147, 0)],
    "h200x4-all_reduce-t4-half-max-ncclTests2.19.6": [("all_reduce", 4, 6, 41.7093, 0)],
    "h200x4-alltoall-g4-ncclTests2.19.6": [("alltoall", 4, 10, 86.267, 0)],
    "h200x4-broadcast-g4-ncclTests2.19.6": [("broadcast", 4, 6, 71.5687, 0)],
    "h200x4-reduce_scatter-g4-ncclTests2.19.6": [("reduce_scatter", 4, 10, 89.4931, 0)],
    "h200x4-sendrecv-g4-ncclTests2.19.6": [("sendrecv", 4, 6, 45.1466, 0)],
    "multi-10ops-2node-16xb200-hypercube-FAILED-ncclTests2.13.4-2.14.0": [
        ("sendrecv", 16, 8, 44.6842, 0),
        ("all_reduce", 16, 8, 109.041, 0),
        ("all_gather", 16, 8, 157.624, 0),
        ("reduce_scatter", 16, 8, 164.973, 0),
        ("reduce", 16, 8, 190.112, 0),
        ("broadcast", 16, 8, 165.999, 0),
        ("alltoall", 16, 8, 25.4025, 0),
        ("gather", 16, 8, 78.2658, 0),
        ("scatter", 16, 8, 178.509, 0),
        ("hypercube", 16, 8, 20.5999, 32),
    ],
    "multi-5ops-dgx2-12gpu-g12-allgather-FAILED-ncclTests2.0-2.9-c864b73": [
        ("all_gather", 12, 31, 30.2993, 4),
        ("all_reduce", 12, 31, 42.5578, 0),
        ("broadcast", 12, 31, 41.2456, 0),
        ("reduce", 12, 31, 41.3386, 0),
        ("reduce_scatter", 12, 31, 20.3609, 0),
    ],
    "scatter-2node-p4d-16rank-srun-label-EXCERPT-ncclTests2.13.4plus": [
        ("unknown", 16, 29, None, None)  # 16 ranks: size = 16 x count; gather or scatter
    ],
    "sendrecv-1node-8xa100-g8-inplace-NA-EXCERPT-ncclTests2.13": [("unknown", None, 4, None, None)],
}

# (file stem, size, count, out-of-place (time us, algbw, busbw, wrong), in-place time);
# wrong None: N/A or nccl-tests' older float error column
SAMPLES = [
    ("all_gather-gke-2node-16xb200-rdma-ncclTests2.14.1-2.16.6", 1073741824, 16777216,
     (4057.5, 264.63, 248.09, 0), 4372.7),
    ("all_reduce-2gpu-rtx2080ti-c0-NA-hashprefixed-ncclTests1.x-2019", 0, 0,
     (9.0, 0.0, 0.0, None), 10.0),  # milliseconds in that era
    ("all_reduce-3node-t4-srun-c0-NA-stepbytes-ncclTests2.10-2.11", 104857600, 26214400,
     (202872, 0.52, 0.69, None), 224616),
    ("all_reduce-azureml-1node-4xk80-ncclinfo-ncclTests2.10-2.11", 268435456, 67108864,
     (158444, 1.69, 2.54, None), 158617),
    ("all_reduce-coreweave-gb200-nvl72-72rank-slurm-EXCERPT-ncclTests2.13.4-2.14.0",
     4294967296, 1073741824, (10094, 425.49, 839.16, 0), 10141),
    ("all_reduce-dgxspark-2node-gb10-qsfp-versionline-githash-EXCERPT-ncclTests2.20.0", 16384,
     4096, (31.67, 0.52, 0.52, 0), 30.75),
    ("all_reduce-ecs-erdma-2node-16gpu-flattened-vendor-guide-EXCERPT-c0-NA", 536870912,
     134217728, (54083, 9.93, 18.61, None), None),
    ("all_reduce-eks-efa-2node-t4-mpirun-ncclinfo-ncclTests2.13.4-2.14.0", 0, 0,
     (6.36, 0.0, 0.0, 0), 6.40),
    ("all_reduce-eks-efa-2node-v100-kubectl-settrace-ncclinfo-ncclTests2.0-2.9", 1048576,
     262144, (558.9, 1.88, 1.88, None), 555.9),
    ("all_reduce-gcp-a3mega-2node-16xh100-ncclTests2.14.1-2.16.6", 1073741824, 268435456,
     (6759.0, 158.86, 297.86, 0), 6737.4),
    ("all_reduce-socket-2rank-1gpu-rtx5090-mpirun-ncclTests2.18.0", 33554432, 8388608,
     (14977.1, 2.24, 2.24, 0), 14863.2),
    ("alltoall-oci-1node-4xgb300-truncated-EXCERPT-ncclTests2.16.8-2.17.2", 17179869184,
     1073741824, (20527, 836.92, 627.69, 0), 18929),
    ("h200x4-all_gather-g4-ncclTests2.19.6", 268435456, 16777216,
     (658.85, 407.43, 305.57, 0), 653.92),
    ("h200x4-alltoall-g4-ncclTests2.19.6", 268435456, 16777216,
     (661.78, 405.62, 304.22, 0), 626.54),
    ("h200x4-all_reduce-t4-half-max-ncclTests2.19.6", 8388608, 4194304,
     (63.59, 131.92, 197.88, 0), 61.24),
    ("multi-5ops-dgx2-12gpu-g12-allgather-FAILED-ncclTests2.0-2.9-c864b73", 4294967280,
     89478485, (53902, 73.04, 73.04, None), 35154),
    ("scatter-2node-p4d-16rank-srun-label-EXCERPT-ncclTests2.13.4plus", 1048576, 16384,
     (123.1, 8.51, 7.98, 0), 124.6),
    ("sendrecv-1node-8xa100-g8-inplace-NA-EXCERPT-ncclTests2.13", 268435456, 67108864,
     (1423.3, 188.60, 188.60, 0), 1420.2),
]  # fmt: skip


def data_files() -> list[Path]:
    return sorted(
        p for p in NT.glob("*.txt") if not p.name.endswith(".source.txt") and p.name != "SOURCE.txt"
    )


def test_every_recorded_output_has_expectations() -> None:
    """Every output is judged here, or by the corpus test from its note's Expected block."""
    judged_here = {
        p.stem
        for p in data_files()
        if "\nExpected" not in p.with_name(f"{p.stem}.source.txt").read_text()
    }
    assert judged_here == set(RUNS)


@pytest.mark.parametrize("stem", sorted(RUNS))
def test_runs_rows_and_averages(stem: str) -> None:
    report = load_result(str(NT / f"{stem}.txt"))
    got = [(r.op, r.nranks, len(r.rows), r.avg_busbw_gbps, r.out_of_bounds) for r in report.runs]
    assert got == RUNS[stem]


@pytest.mark.parametrize(("stem", "size", "count", "oop", "ip_time"), SAMPLES)
def test_sample_rows(
    stem: str,
    size: int,
    count: int,
    oop: tuple[float, float, float, int | None],
    ip_time: float | None,
) -> None:
    report = load_result(str(NT / f"{stem}.txt"))
    row = next(r for run in report.runs for r in run.rows if r.size_bytes == size)
    assert row.count == count
    assert row.out_of_place is not None
    m = row.out_of_place
    assert (m.time_us, m.algbw_gbps, m.busbw_gbps, m.wrong) == pytest.approx(oop)
    if ip_time is None:
        assert row.in_place is None
    else:
        assert row.in_place is not None and row.in_place.time_us == pytest.approx(ip_time)


def test_bus_factors_match_what_nccl_tests_printed() -> None:
    """Our busbw factors against every row where nccl-tests printed algbw large enough
    for its two decimals to tell: busbw = algbw * factor(op, ranks)."""
    checked = 0
    for path in data_files():
        try:
            runs = load_result(str(path)).runs
        except InputError:  # a text without a table (the corpus test judges those)
            continue
        for run in runs:
            if run.nranks is None or run.op not in (
                "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                "reduce", "sendrecv",
            ):  # fmt: skip
                continue
            factor = bus_factor(run.op, run.nranks)
            old = "ncclTests2.0-2.9" in path.name or "ncclTests1.x" in path.name
            if old and run.op in ("all_gather", "reduce_scatter"):
                factor = 1.0  # before ec1b5e2 (2020-06-19): FORMAT.md section 12
            for row in run.rows:
                for m in (row.out_of_place, row.in_place):
                    if m is not None and m.algbw_gbps >= 1:
                        # both printed with two decimals: algbw's rounding is scaled
                        rounding = 0.005 * factor + 0.005 + 1e-9
                        assert m.busbw_gbps == pytest.approx(m.algbw_gbps * factor, abs=rounding), (
                            path.name,
                            row.size_bytes,
                        )
                        checked += 1
    assert checked > 300


def test_errors_and_na_and_float_error_column() -> None:
    failed = load_result(
        str(NT / "multi-5ops-dgx2-12gpu-g12-allgather-FAILED-ncclTests2.0-2.9-c864b73.txt")
    )
    last = failed.runs[0].rows[-1]
    assert last.out_of_place is not None and last.out_of_place.error == 1.0
    assert last.out_of_place.wrong is None
    na = load_result(str(NT / "h200x4-alltoall-g4-ncclTests2.19.6.txt")).runs[0].rows[-1]
    assert na.in_place is not None and na.in_place.wrong is None  # N/A
    assert na.out_of_place is not None and na.out_of_place.wrong == 0


def test_a_failed_run_keeps_its_failure() -> None:
    stem = "alltoall-2node-16xh800-deviceimpl-D1-illegal-memory-access-abort-ncclTests2.17.6"
    run = load_result(str(NT / f"{stem}.txt")).runs[0]
    assert any("illegal memory access" in note for note in run.notes)


@pytest.mark.parametrize(
    ("stem", "why"),
    [
        ("alltoall-2node-16xh800-deviceimpl-D1-illegal-memory-access-abort-ncclTests2.17.6",
         "the run failed: Test CUDA failure common.cu:389"),
        ("all_gather-1node-8xv100-4GiB-FAILED-hash-stripped-EXCERPT-ncclTests2.0-2.9",
         "2 out-of-bounds values"),
        ("multi-5ops-dgx2-12gpu-g12-allgather-FAILED-ncclTests2.0-2.9-c864b73",
         "4 out-of-bounds values"),
    ],
)  # fmt: skip
def test_an_imported_failure_is_a_fail(
    stem: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file's .source.txt: the run must be reported as FAILED (exit 1), not PASS."""
    assert main(["bench", "import", str(NT / f"{stem}.txt")]) == 1
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith("# FAIL:") and why in last


def report_of(text: str) -> BenchReport:
    from hpnet.bench.nccl_tests import parse_nccl_tests

    return parse_nccl_tests(text)


def test_hpnet_table_reads_back_exactly() -> None:
    """Our own table (with `--` for a placement a backend lacks) imports to the same
    rows: a saved terminal output is a result file too."""
    from hpnet.render.bench import render_report

    source = load_result(str(NT / "h200x4-all_reduce-g4-ncclTests2.19.6.txt"))
    run = source.runs[0]
    rows = tuple(
        type(r)(
            size_bytes=r.size_bytes, count=r.count, dtype=r.dtype, redop=r.redop, root=r.root,
            out_of_place=None, in_place=r.in_place,
        )
        for r in run.rows
    )  # fmt: skip
    import dataclasses

    report = dataclasses.replace(source, runs=(dataclasses.replace(run, rows=rows),))
    again = report_of(render_report(report))
    assert len(again.runs) == 1
    back = again.runs[0]
    assert (back.op, back.nranks, back.avg_busbw_gbps) == ("all_reduce", 4, run.avg_busbw_gbps)
    assert [r.out_of_place for r in back.rows] == [None] * len(rows)
    assert [r.in_place for r in back.rows] == [
        Measurement(
            time_us=m.time_us, algbw_gbps=m.algbw_gbps, busbw_gbps=m.busbw_gbps, wrong=m.wrong
        )
        for m in (r.in_place for r in rows)
        if m is not None
    ]


def test_cli_import_json_and_op_override(capsys: pytest.CaptureFixture[str]) -> None:
    stem = "all_reduce-gcp-a3mega-2node-16xh100-ncclTests2.14.1-2.16.6"
    assert main(["bench", "import", str(NT / f"{stem}.txt"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"][0]["op"] == "all_reduce" and len(data["runs"][0]["rows"]) == 31
    unknown = "all_reduce-eks-efa-2node-t4-mpirun-ncclinfo-ncclTests2.13.4-2.14.0"
    assert main(["bench", "import", str(NT / f"{unknown}.txt"), "--op", "allreduce"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# hpnet bench: all_reduce, 2 ranks")
    assert "# Avg bus bandwidth    : 1.15327" in out


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"", "no-result"),
        (b"hello\nworld\n", "no-result"),
        (b"\x00\x01binary", "bad-result"),
        (b'{"runs": 3}', "bad-result"),
        (b"{not json", "bad-result"),
    ],
)
def test_bad_input_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, code: str
) -> None:
    path = tmp_path / "result.txt"
    path.write_bytes(content)
    assert main(["bench", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error[{code}]:") and str(path) in err
    assert "Traceback" not in err


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "import", str(tmp_path / "nope.txt")]) == 2
    assert capsys.readouterr().err.startswith("error[unreadable]:")
    assert main(["bench", "import", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_rows_a_poster_left_out_are_said() -> None:
    """A "..." line inside a table (NVIDIA/nccl#1184) is no row: the note says where rows
    are missing, so the table is not read as a whole sweep."""
    stem = (
        "all_reduce-2node-dgx-h100-a100-bond0-roce-proto-simple-wrong-nonzero-"
        "author-elided-EXCERPT-nccl2.18.3"
    )
    (run,) = load_result(str(NT / f"{stem}.txt")).runs
    assert [r.size_bytes for r in run.rows] == [8, 262144, 524288]
    assert any(n.startswith("rows left out after 8 B (line 5: '...')") for n in run.notes)


def test_one_rank_and_interleaved_tables_are_no_measure_of_a_network() -> None:
    """16 processes of nccl-tests built without MPI=1 under mpirun: each ran alone (NCCL's
    'nranks 1'), and their tables share one stream, sizes falling back where one run's
    only grow: a warning that names both, not a pass (NVIDIA/nccl-tests#294)."""
    stem = (
        "nccl-tests-all-reduce-2x8-h100-busbw-zero-16-single-rank-runs-non-mpi-build-"
        "nccl-2.18.3-EXCERPT"
    )
    status, verdict = verdict_of(load_result(str(NT / f"{stem}.txt")), ())
    assert status == "WARN"
    assert verdict.startswith("the run ran on 1 rank: no data crossed a link")
    assert "its rows' sizes fall back (268435456 B after 536870912 B" in verdict
    # a size rounded down to whole elements repeats (1 and 2 B are 0 floats): one run
    rounded = "all_reduce-eks-efa-2node-t4-mpirun-ncclinfo-ncclTests2.13.4-2.14.0"
    assert verdict_of(load_result(str(NT / f"{rounded}.txt")), ())[0] == "PASS"


def test_a_failed_run_is_named_as_verify_names_its_line() -> None:
    """'system not yet initialized' is CUDA's 802: the verdict says what it means and
    the fix, as `hpnet verify` says it of the same text (NVIDIA/nccl-tests#338)."""
    stem = (
        "nccl-tests-2node-h20-vm-abort-before-table-cuda-system-not-yet-initialized-"
        "fabricmanager-mismatch-EXCERPT"
    )
    status, verdict = verdict_of(load_result(str(NT / f"{stem}.txt")), ())
    assert status == "FAIL"
    assert "'system not yet initialized' — the GPUs' NVLink fabric was not ready" in verdict
    assert "systemctl status nvidia-fabricmanager" in verdict


def test_run_cycles_repeat_one_sweep_and_are_one_run(tmp_path: Path) -> None:
    """nccl-tests -N 2 (2.13.10+) prints the whole size sweep twice under one header:
    sizes fall back to the first, then repeat the same sequence: one run, no caution."""
    text = (NT / "all_gather-gke-2node-16xb200-rdma-ncclTests2.14.1-2.16.6.txt").read_text()
    lines = text.splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if line.strip()[:1].isdigit()]
    cycled = lines[: rows[-1] + 1] + lines[rows[0] : rows[-1] + 1] + lines[rows[-1] + 1 :]
    path = tmp_path / "cycles.txt"
    path.write_text("".join(cycled))
    report = load_result(str(path))
    assert len(report.runs[0].rows) == 2 * len(rows)
    assert verdict_of(report, ())[0] == "PASS"


def test_hpnet_bench_on_one_rank_is_its_own_run_not_a_caution() -> None:
    """The cautions read imported output: hpnet bench's own 1-GPU run is no mpirun
    mix-up, and a PASS there keeps its exit 0."""
    stem = "alltoall-1rank-rtx5090-single-size-inplace-NA-avg0-ncclTests2.13.4-2.14.0"
    imported = load_result(str(NT / f"{stem}.txt"))
    assert verdict_of(imported, ())[0] == "WARN"
    own = dataclasses.replace(imported, source="hpnet bench")
    assert verdict_of(own, ())[0] == "PASS"
