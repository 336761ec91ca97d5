"""hpnet verify on real artefacts other than NCCL logs (tests/data/artefacts, issue 24 rule 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpnet.artefacts import Kind, read_artefacts
from hpnet.artefacts.ras import parse_ras_json
from hpnet.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "artefacts"


def _verify(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, object]]:
    code = main(["verify", "--json", str(DATA / name)])
    return code, json.loads(capsys.readouterr().out)


def test_ras_mismatch_names_the_laggards_not_the_listed_outliers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _verify(capsys, "ras-text-mismatch-allgather-30-lag-2-ahead-nccl2.26.2.txt")
    assert code == 0 and report["status"] == "WARN"  # a hang in progress: never a PASS
    verdict = str(report["verdict"])
    assert "30 ranks lag at AllGather operation 640" in verdict
    assert "ranks 12, 13: they are ahead" in verdict


def test_ras_running_ok_beside_a_watchdog_timeout_is_a_contradiction_and_fatal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, report = _verify(capsys, "ras-text-running-ok-beside-watchdog-timeout-nccl2.26.2.txt")
    assert code == 1 and report["status"] == "FAIL" and report["fatal"]
    ids = [f["id"] for f in report["findings"]]  # type: ignore[attr-defined]
    assert "ras-ok-beside-timeout" in ids and "watchdog-timeout" in ids
    assert "ALLREDUCE SeqNum 2398459" in str(report["verdict"])


def test_wrapped_watchdog_lines_are_joined_and_quoted_as_written() -> None:
    path = DATA / "torch-watchdog-thread-terminated-broadcast-seq4-wrapped-traceback.txt"
    text = path.read_text()
    facts = read_artefacts(str(path), text)
    (event,) = [e for e in facts.torch if e.what == "timeout"]
    assert (event.op, event.seq, event.timeout_ms, event.rank) == ("BROADCAST", 4, 1800000, 1)
    lines = text.splitlines()
    assert all(lines[q.line - 1] == q.text for q in event.quotes)  # real lines only
    assert len(event.quotes) == 3


@pytest.mark.parametrize(
    ("name", "call", "error", "last"),
    [
        (
            "jax-xla-ncclcomminitrankconfig-invalid-argument-blocking-attribute.txt",
            "ncclCommInitRankConfig",
            "invalid argument",
            "Invalid config blocking attribute value -2147483648",
        ),
        (
            "jax-xla-ncclcomminitrank-unhandled-system-error-accept-failed-trail.txt",
            "ncclCommInitRank",
            "unhandled system error",
            "socketTryAccept: Accept failed: Bad file descriptor",
        ),
    ],
)
def test_xla_errors_are_fatal_with_nccls_last_warning(
    capsys: pytest.CaptureFixture[str], name: str, call: str, error: str, last: str
) -> None:
    code, report = _verify(capsys, name)
    assert code == 1 and report["fatal"]
    titles = " | ".join(f["title"] for f in report["findings"])  # type: ignore[attr-defined]
    assert f"{call} failed: {error}" in titles and last in titles


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("rccl-2.18.3-hip5.5-rccl-tests-hipipcgetmemhandle-invalid-argument.log", "2.18.3"),
        ("rccl-2.21.5-rocm6.2.4-mi100-version-block-rccl-tests.log", "2.21.5"),
        ("rccl-2.17.1-hip5.7-enqueue-cuda-failure-invalid-kernel-file.log", "2.17.1"),
    ],
)
def test_rccl_is_said_to_be_rccl_and_not_dated_by_nccl_formats(
    capsys: pytest.CaptureFixture[str], name: str, version: str
) -> None:
    _, report = _verify(capsys, name)
    artefacts = report["artefacts"]
    assert isinstance(artefacts, list) and len(artefacts) == 1
    artefact = artefacts[0]
    assert artefact["rccl_version"] == version and "rccl" in artefact["kinds"]
    assert all(r["version_range"] is None for r in report["ranks"])  # type: ignore[attr-defined]
    assert version not in report["nccl_versions"]  # type: ignore[operator]


def test_text_with_nothing_nccl_related_is_still_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("training started\nloss 0.5\n")
    assert main(["verify", str(path)]) == 2
    assert read_artefacts(str(path), path.read_text()).kinds == ()


def test_ras_json_mismatch_and_dead_rank() -> None:
    # the layout of rasClientJson* in NCCL's src/ras/client_support.cc (2.28.7+)
    document = {
        "nccl_version": "2.28.9",
        "communicators": [
            {
                "hash": "0xabc",
                "size": 3,
                "ranks": [
                    {
                        "rank": r,
                        "status": {"init_state": 0, "async_error": 0},
                        "collective_counts": {"AllReduce": c},
                    }
                    for r, c in ((0, 7), (1, 7), (2, 6))
                ],
                "missing_ranks": [{"rank": 3, "status": {"considered_dead": True}}],
            }
        ],
    }
    report = parse_ras_json("f", json.dumps(document))
    (comm,) = report.comms
    assert comm.dead_ranks == (3,) and "MISMATCH" in (comm.errors or "")
    assert [(g.launched, g.ranks) for g in comm.op_groups] == [(7, (0, 1)), (6, (2,))]
    assert read_artefacts("f", json.dumps(document)).kinds == (Kind.RAS_JSON,)


def test_the_end_of_a_large_file_is_read_with_its_line_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file over the size read whole: its first and last part are read, and a
    watchdog timeout at the end (where a hung job's log ends) is found and quoted with
    its own line number. Before, only the first MiB of a file over 64 MiB was read, and
    the timeout at the end was never seen. Small limits stand in for 64 MiB / 1 MiB."""
    from hpnet.artefacts import scan
    from hpnet.artefacts.reading import read_with_artefacts
    from hpnet.ncclog.inputs import collect_inputs

    monkeypatch.setattr(scan, "MAX_TEXT_BYTES", 4096)
    monkeypatch.setattr(scan, "EDGE_BYTES", 1024)
    real = (DATA / "torch-watchdog-stuck-and-allgather-base-timeout-seq120049.txt").read_text()
    filler = "".join(f"[rank0] step {i} loss 2.1 lr 3.0e-04\n" for i in range(2000))
    path = tmp_path / "job.log"
    path.write_text(filler + real)
    inputs, _ = collect_inputs([str(path)])
    _, facts = read_with_artefacts(inputs)
    (found,) = facts
    timeouts = [t for t in found.torch if t.what == "timeout"]
    assert timeouts and timeouts[0].seq == 120049
    lines = path.read_text().splitlines()
    for event in found.torch:
        for quote in event.quotes:
            assert lines[quote.line - 1] == quote.text  # the input's own line, numbered


def _findings(capsys: pytest.CaptureFixture[str], name: str) -> dict[str, dict[str, object]]:
    code, report = _verify(capsys, name)
    assert code == 1 and report["fatal"]
    return {str(f["id"]): f for f in report["findings"]}  # type: ignore[attr-defined]


def test_two_ranks_at_one_seqnum_with_different_ops_is_a_collective_mismatch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # NVIDIA/nccl#1409: rank 7 BROADCAST, rank 3 ALLREDUCE, both SeqNum 80078; the
    # rank 3 line is indented like the rank 7 one before it (a new message, not a wrap)
    found = _findings(capsys, "torch-watchdog-optype-mismatch-broadcast-vs-allreduce-seq80078.txt")
    title = str(found["collective-mismatch"]["title"])
    assert "SeqNum 80078" in title
    assert "rank 3 ALLREDUCE (2106881 elements)" in title
    assert "rank 7 BROADCAST (5056 elements)" in title
    assert found["watchdog-timeout"]["consequence"]


def test_ranks_at_different_seqnums_name_the_one_behind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = _findings(
        capsys, "torch-watchdog-desync-allreduce-215121-vs-broadcast-215122-progress-bar.txt"
    )
    said = " ".join(map(str, found["watchdog-timeout"]["conclusions"]))  # type: ignore[call-overload]
    assert "rank 0 completed #215121, which rank 1 did not" in said
    assert "rank 1 is behind" in said
    assert "collective-mismatch" not in found  # different numbers: not the same call


def test_a_watchdog_that_fired_hours_late_says_so_and_compares_no_groups(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = _findings(
        capsys, "torch-watchdog-legacy-format-allreduce-ran-25624887ms-of-1800000.txt"
    )
    said = " ".join(map(str, found["watchdog-timeout"]["conclusions"]))  # type: ignore[call-overload]
    assert "6.6 h late" in said
    # rank 0 timed out at several numbers (several process groups): no one is "behind"
    assert "behind" not in said


def test_an_async_exception_names_its_collective_and_no_invented_last_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = _findings(
        capsys,
        "torch-async-exception-allreduce-seq2-unhandled-system-error-empty-last-error-nccl2.25.1.txt",
    )
    title = str(found["framework-nccl-error"]["title"])
    assert "ALLREDUCE SeqNum 2" in title and "NCCL gave no last error" in title
    assert "Exception raised" not in title


def test_a_ray_workers_prefix_does_not_hide_nccls_last_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    found = _findings(
        capsys, "torch-distbackenderror-ray-vllm-internal-error-busid-of-nic-nccl2.18.6.txt"
    )
    title = str(found["framework-nccl-error"]["title"])
    assert title.endswith("NCCL's last error: Attribute busid of node nic not found")


@pytest.mark.parametrize(
    ("name", "via"),
    [
        ("tensorrt-llm-allreduce-plugin-nccl-internal-error-4gpu.txt", "TensorRT-LLM: "),
        ("sglang-pynccl-wrapper-ncclcomminitrank-unhandled-system-error-tp8.txt", "SGLang: "),
    ],
)
def test_the_framework_that_raised_is_named(
    capsys: pytest.CaptureFixture[str], name: str, via: str
) -> None:
    assert str(_findings(capsys, name)["framework-nccl-error"]["title"]).startswith(via)


def test_a_launchers_rank_tag_outside_torchs_is_not_the_ranks_own() -> None:
    """``[rank0]:[rank4]:``: a launcher that wraps a node's output put its local tag
    outside torch's own global one; the line is rank 4's (torchtitan#1492's prefixes)."""
    line = (
        "[rank0]:[rank4]:[E731 01:01:29.544034999 ProcessGroupNCCL.cpp:632] [Rank 4] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=RECV, NumelIn=64, "
        "NumelOut=64, Timeout(ms)=300000) ran for 300042 milliseconds before timing out."
    )
    facts = read_artefacts("job.log", line + "\n")
    (event,) = [e for e in facts.torch if e.what == "timeout"]
    assert (event.global_rank, event.seq, event.op) == (4, 7, "RECV")


def test_the_same_framework_failure_on_two_threads_is_one_finding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """flax#4942: XLA printed the same failed ncclAllReduce for each of its two replicas:
    one finding, counted twice, quoting both lines (it had been two alike findings)."""
    code = main(
        [
            "verify",
            "--json",
            str(
                DATA.parent
                / "nccl-logs/jax-flax-nnx-2gpu-first-train-step-ncclallreduce-invalid-argument-"
                "empty-last-warning-no-nccl-warn-version-not-shown-EXCERPT.log"
            ),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    framework = [f for f in report["findings"] if f["id"] == "framework-nccl-error"]
    assert len(framework) == 1 and framework[0]["count"] == 2
    assert framework[0]["title"] == "XLA: ncclAllReduce failed: invalid argument"
    assert len(framework[0]["evidence"]) == 2


def test_a_finding_left_out_for_rccl_no_longer_orders_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ROCm/rccl#1261: RCCL's advisory WARN at init.cc ("NUMA auto balancing enabled"),
    which the log pipeline reads as a failed init, is left out once the log is known to
    be RCCL's; what it had explained is ordered again: the UCX plugin's failed
    registration (line 71) comes first, before the connections its failure broke."""
    path = (
        Path(__file__).parent.parent / "data" / "nccl-logs"
        / "roce-bnxt-ucx-plugin-gdr-regmr-rcache-insert-region-0x0-invalid-parameter-"
        "rccl2.18.3-EXCERPT.log"
    )  # fmt: skip
    assert main(["verify", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    ids = [f["id"] for f in report["findings"]]
    assert "init-failed" not in ids
    assert ids[:2] == ["nccl-failure", "net-socket-error"]
    assert "ucx_plugin.c:498 NCCL WARN Failed: UCX error" in report["findings"][0]["evidence"][-1]
