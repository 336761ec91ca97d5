"""``hpnet hang`` on real stuck jobs (issue 27): gloo jobs with one planted fault each,
recorded under tests/data/flight-recorder (tests/hang_plant.py; each directory's
.source.txt says what a correct tool concludes), watchdog lines posted in public
threads (tests/data/hang), and a real job under ``hpnet launch --hang-capture`` (the
harness's live runs are benchmarks/hang_plants.py's)."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.hang.collect import collect
from hpnet.hang.exits import read_exits
from hpnet.hang.flight import load_dump
from hpnet.hang.judge import judge
from hpnet.hang.ranklog import read_errors
from tests.conftest import DATA

FR = DATA / "flight-recorder"
ROOT = Path(__file__).parents[2]
HPNET = [sys.executable, "-m", "hpnet"]

#: directory -> (kind, ranks named, group, sequence number) of the first cause, from
#: each recording's conclusions
PLANTED = {
    "gloo-torch2.13-w4-skip-rank2": ("never-entered", (2,), "0", 5),
    "gloo-torch2.13-w4-sleep-rank2": ("never-entered", (2,), "0", 5),
    "gloo-torch2.13-w4-op-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-size-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-dtype-rank2": ("mismatch", (2,), "0", 5),
    "gloo-torch2.13-w4-stop-rank2": ("silent", (2,), "0", 5),
    "gloo-torch2.13-w4-kill-rank2": ("gone", (2,), "0", 5),
    "gloo-torch2.13-w4-subgroup-rank1": ("never-entered", (1,), "1", 4),
    "gloo-torch2.13-w4-cascade-rank1": ("never-entered", (1,), "1", 3),
    "gloo-torch2.13-w3-op-pickle-rank1": ("mismatch", (1,), "0", 5),
}


def _hpnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HPNET, *args], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_every_planted_hang_is_named_with_its_rank_kind_and_collective(name: str) -> None:
    evidence = collect([str(FR / name)])
    report = judge(evidence.dumps, evidence.errors)
    kind, ranks, pg, seq = PLANTED[name]
    first = report.causes[0]
    assert (report.status, first.kind, first.ranks, first.pg, first.seq) == (
        "hang", kind, ranks, pg, seq,
    )  # fmt: skip
    assert first.consequence_of is None
    # every other cause follows from the first: one root per job
    assert all(c.consequence_of for c in report.causes[1:]), report.causes
    assert report.exit_code == 1


@pytest.mark.parametrize("kept", ["rank3.log", None])
def test_a_rank_without_a_dump_whose_log_says_it_waited_is_never_named(
    tmp_path: Path, kept: str | None
) -> None:
    # the 16-core device run (benchmarks/README.md): a victim's dump did not get written
    # while its log line did; it was named silent beside the stopped rank
    folder = tmp_path / "job"
    folder.mkdir()
    source = FR / "gloo-torch2.13-w4-stop-rank2"
    for name in ("nccl_trace_rank_0", "nccl_trace_rank_1", "rank0.log", "rank1.log", kept):
        if name:
            (folder / name).write_bytes((source / name).read_bytes())
    evidence = collect([str(folder)])
    first = judge(evidence.dumps, evidence.errors, world=4).causes[0]
    if kept:  # "Timed out waiting 3000ms for recv": alive and waiting
        assert (first.kind, first.ranks) == ("silent", (2,))
        assert any("rank 3: no dump either" in e for e in first.evidence), first.evidence
    else:  # nothing from rank 3 at all: nothing tells it from the stopped rank
        assert (first.kind, first.ranks) == ("silent", (2, 3))


def test_a_job_whose_ranks_never_made_their_group_is_not_a_hang_and_names_no_one() -> None:
    folder = FR / "gloo-torch2.11-w6-init-timeout"
    evidence = collect([str(folder)])
    report = judge(evidence.dumps, evidence.errors)
    assert (report.status, report.causes, report.exit_code) == ("unknown", (), 1)
    assert report.headline.startswith(
        "the job never reached a collective: ranks 0, 1, 2, 3, 4, 5 failed while making "
        "the process group (rank0.stderr:1: "
    ), report.headline
    assert "Gloo connectFullMesh failed" in report.headline
    done = _hpnet("hang", str(folder))
    assert done.returncode == 1 and "never reached a collective" in done.stdout, done


def test_a_subgroup_hang_leaves_the_world_group_out_of_the_verdict() -> None:
    evidence = collect([str(FR / "gloo-torch2.13-w4-subgroup-rank1")])
    report = judge(evidence.dumps, evidence.errors)
    assert [c.pg for c in report.causes] == ["1"]
    world = next(g for g in report.groups if g.pg == "0")
    assert set(world.last.values()) == {8}  # every rank finished the world group's 8


def test_the_cascade_names_the_subgroup_first_and_the_world_group_as_its_consequence() -> None:
    evidence = collect([str(FR / "gloo-torch2.13-w4-cascade-rank1")])
    report = judge(evidence.dumps, evidence.errors)
    root, then = report.causes
    assert (then.pg, then.seq, then.ranks, then.waiting) == ("0", 7, (0, 1), (2, 3))
    assert then.consequence_of == root.label() == "all_reduce #3 of group 1 (undefined)"


def test_a_clean_job_names_no_one_and_exits_0() -> None:
    done = _hpnet("hang", str(FR / "gloo-torch2.13-w4-clean"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hpnet hang: NO HANG — every rank of every group reached")


def test_the_command_prints_the_verdict_first_and_json_with_its_schema() -> None:
    path = str(FR / "gloo-torch2.13-w4-kill-rank2")
    text = _hpnet("hang", path)
    assert text.returncode == 1
    assert text.stdout.splitlines()[0] == (
        "hpnet hang: STUCK — rank 2 died: no dump, peers lost the connection, at all_reduce #5 "
        "of group 0 (default_pg); ranks 0, 1, 3 wait in it"
    )
    assert "Connection closed by peer" in text.stdout  # the peers' own line, quoted
    data = json.loads(_hpnet("hang", "--json", path).stdout)
    assert list(data)[:2] == ["schema_version", "status"] and data["exit_code"] == 1
    assert data["causes"][0]["kind"] == "gone" and data["without_dump"] == [2]


def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (Path.touch, (str(marker),))

    raw = pickle.dumps({"version": "2.10", "entries": [Payload()], "pg_config": {}})
    with pytest.raises(InputError) as info:
        load_dump(str(tmp_path / "nccl_trace_rank_0"), raw)
    assert info.value.code == "hang-dump" and "refused" in str(info.value)
    assert not marker.exists()


def test_nothing_to_read_is_an_input_error_naming_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the job was slow\n")
    done = _hpnet("hang", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error[hang-no-evidence]")
    assert "TORCH_FR_DUMP_TEMP_FILE" in done.stderr


def test_watchdog_lines_alone_say_who_timed_out_and_who_entered() -> None:
    """A real post (BasicSR #737, torch 2.5-era prefixes): three ranks time out in
    ALLREDUCE #808 of the default group; ranks 0 and 1 had enqueued to #811, so they
    entered it and wait. No rank's line shows which rank is behind: unknown, exit 1."""
    path = DATA / "hang" / "torch-pgid0-default_pg-allreduce-seq808-enqueued811-3ranks-EXCERPT.txt"
    errors = read_errors(str(path), path.read_bytes())
    by_rank = {(e.rank, e.seq, e.op, e.pg, e.last_enqueued, e.last_completed) for e in errors}
    assert (1, 808, "allreduce", None, None, None) in by_rank
    assert (0, 808, None, "0", 811, 807) in by_rank
    report = judge([], errors)
    assert report.status == "unknown" and report.exit_code == 1
    assert report.headline.startswith(
        "ranks 0, 1, 2 timed out in allreduce #808 of group 0; ranks 0, 1 had enqueued up to #811"
    )


FSDP_MISMATCH = (
    DATA / "hang" / "torch-fsdp-reduce-vs-allgather-base-seq3742816-3-of-8-ranks-EXCERPT.txt"
)


def test_watchdogs_in_different_collectives_at_one_number_are_a_mismatch(tmp_path: Path) -> None:
    """A real post (pytorch #77030): at SeqNum 3742816 rank 0 timed out in REDUCE, ranks 1
    and 5 in _ALLGATHER_BASE; its thread found rank 0 alone had taken a branch. hpnet hang
    said "ranks 0, 1, 5 timed out in _allgather_base" (unknown); hpnet verify said the
    collectives differ. Now both say so. Three of at least six ranks speak: no side is
    named wrong. The same three lines from ranks 0, 1 and 2 (every rank) name rank 0."""
    errors = read_errors(str(FSDP_MISMATCH), FSDP_MISMATCH.read_bytes())
    report = judge([], errors)
    assert report.status == "hang" and report.exit_code == 1
    (cause,) = report.causes
    assert (cause.kind, cause.seq, cause.ranks) == ("mismatch", 3742816, (0, 1, 5))
    assert not cause.majority
    assert report.headline == (
        "the ranks called different collectives at #3742816: rank 0 reduce; ranks 1, 5 "
        "_allgather_base (3 of at least 6 ranks say so: which side is wrong is not shown)"
    )
    assert cause.evidence[0].startswith(f"{FSDP_MISMATCH}:2: ")  # rank 0's line first
    verified = _hpnet("verify", "--json", str(FSDP_MISMATCH))
    ids = [f["id"] for f in json.loads(verified.stdout)["findings"]]
    assert "collective-mismatch" in ids and verified.returncode == 1
    # another real post (nccl #1409): rank 7 in BROADCAST, rank 3 in ALLREDUCE, #80078
    other = DATA / "artefacts" / "torch-watchdog-optype-mismatch-broadcast-vs-allreduce-seq80078"
    other = other.with_suffix(".txt")
    report = judge([], read_errors(str(other), other.read_bytes()))
    assert report.headline == (
        "the ranks called different collectives at #80078 of group 0: rank 3 allreduce "
        "(2106881 elements); rank 7 broadcast (5056 elements) (2 of at least 8 ranks say so: "
        "which side is wrong is not shown)"
    )
    whole = tmp_path / "all.log"  # rank 5's line as rank 2's: three ranks of three
    whole.write_text(FSDP_MISMATCH.read_text().replace("[Rank 5]", "[Rank 2]"))
    report = judge([], read_errors(str(whole), whole.read_bytes()))
    assert (report.causes[0].ranks, report.causes[0].majority) == ((0,), True)
    assert report.headline.startswith("rank 0 called another collective than the group's other")


def test_a_truncated_dump_is_listed_and_the_other_ranks_are_still_judged(tmp_path: Path) -> None:
    """On the 64-core machine the harness killed a rank while it wrote its dump; the
    whole folder was refused for that one file. The others are evidence: judged, and
    the file is named with why it could not be read."""
    import shutil

    job = tmp_path / "job"
    shutil.copytree(FR / "gloo-torch2.13-w4-skip-rank2", job)
    whole = (job / "nccl_trace_rank_3").read_bytes()
    (job / "nccl_trace_rank_3").write_bytes(whole[: len(whole) // 2])
    evidence = collect([str(job)])
    report = judge(evidence.dumps, evidence.errors, unreadable=evidence.unreadable)
    assert [d.rank for d in sorted(evidence.dumps, key=lambda d: d.rank)] == [0, 1, 2]
    assert report.unreadable and report.unreadable[0].startswith(f"{job / 'nccl_trace_rank_3'}: ")
    assert (report.causes[0].kind, report.causes[0].ranks) == ("never-entered", (2,))


def test_two_groups_that_share_an_id_are_told_apart_by_their_guid() -> None:
    """NVIDIA/nccl #1610: two subgroups time out at once, both "PG ID 11" (a per-process
    counter), GUIDs 119 and 112 (the group's name, which Flight Recorder records)."""
    path = (
        DATA
        / "hang"
        / ("torch-two-subgroups-alltoall-seq216-allreduce-seq57-timestamp-prefix-EXCERPT.txt")
    )
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.headline == (
        "rank 15 timed out in allreduce #57 of group 112; rank 13 in alltoall_base #216 of "
        "group 119; no Flight Recorder dump says which rank is behind"
    )


F5_DESYNC = (
    DATA
    / "artefacts"
    / "torch-watchdog-desync-allreduce-215121-vs-broadcast-215122-progress-bar.txt"
)
PG1_DESYNC = (
    DATA / "hang" / "torch-pg1-desync-rank0-seq1516-vs-rank1-seq1517-progress-bar-EXCERPT.txt"
)


def test_a_rank_that_timed_out_later_completed_what_the_other_waits_in() -> None:
    """A real post (F5-TTS #346): rank 1 timed out in ALLREDUCE #215121 (last enqueued
    215121), rank 0 in BROADCAST #215122 of the same group: rank 0's watchdog, which
    checks works oldest first, got past #215121, so rank 0 completed it while rank 1
    waits in it and never enqueued #215122 (its .source.txt: "Rank 1 lags"). hpnet hang
    said UNKNOWN; now STUCK, rank 1 named, and hpnet verify says the same."""
    report = judge([], read_errors(str(F5_DESYNC), F5_DESYNC.read_bytes()))
    assert report.status == "hang" and report.exit_code == 1
    (cause,) = report.causes
    assert (cause.kind, cause.ranks, cause.waiting, cause.pg, cause.seq) == (
        "never-entered", (1,), (0,), "0", 215122,
    )  # fmt: skip
    said = (
        "rank 0 completed #215121, which rank 1 did not: rank 1 is behind, its #215121 "
        "unlike rank 0's (another op or size: NCCL lets the smaller side finish) or stalled "
        "or failed on its side alone"
    )
    assert report.headline == (
        f"rank 1 never entered broadcast #215122 of group 0, in which rank 0 waits: {said}"
    )
    assert any("last enqueued NCCL work: 215121" in line for line in cause.evidence)
    # a send numbered apart from the collectives (torch 2.4 on) is not compared with them
    sent = F5_DESYNC.read_text().replace("OpType=BROADCAST", "OpType=SEND")
    report = judge([], read_errors("sent.log", sent.encode()))
    assert report.status == "unknown" and "behind" not in report.headline.split("; no ")[0]
    # the text says what stopped the job: NCCL returned no error, the watchdog timed out
    text = _hpnet("verify", str(F5_DESYNC)).stdout
    assert "— fatal: the collective did not complete (PyTorch's watchdog)" in text
    assert "NCCL returned an error" not in text
    verified = json.loads(_hpnet("verify", "--json", str(F5_DESYNC)).stdout)
    conclusions = [c for f in verified["findings"] for c in f.get("conclusions", ())]
    assert any(said.replace(": rank 1", " (and never enqueued #215122): rank 1") in c
               for c in conclusions), conclusions  # fmt: skip


COALESCED = (
    DATA / "hang" / "torch-pgid2-coalesced-seq610-numel-differs-across-four-ranks-EXCERPT.txt"
)


def test_sizes_are_compared_only_where_torch_makes_every_rank_give_the_same() -> None:
    """A real post (DiffSynth-Studio #458): four ranks timed out in COALESCED #610 of one
    group with different NumelIn; torch's collectiveCoalesced records its first input's
    size, which every rank must match: a mismatch, in hang and verify. A batch of sends and
    receives is COALESCED too, its size never set (18446744073709551615) and numbered
    apart from the collectives (torch 2.6): not compared. all_to_all's sizes may differ
    by design (uneven splits): not compared."""
    report = judge([], read_errors(str(COALESCED), COALESCED.read_bytes()))
    assert report.status == "hang" and report.causes[0].kind == "mismatch"
    assert report.causes[0].ranks == (1, 2, 6, 7)
    text = COALESCED.read_text()
    unset = re.sub(r"NumelIn=\d+, NumelOut=\d+", "NumelIn=18446744073709551615, "
                   "NumelOut=18446744073709551615", text)  # fmt: skip
    uneven = text.replace("OpType=COALESCED", "OpType=ALLTOALL_BASE")
    # one rank in an all-reduce at the number the others' batch of sends has: torch 2.6
    # numbers the batch apart, so the one number is not one collective
    mixed = unset.replace(
        "OpType=COALESCED, NumelIn=18446744073709551615", "OpType=ALLREDUCE, NumelIn=56320", 1
    )
    for name, changed in (("unset.log", unset), ("uneven.log", uneven), ("mixed.log", mixed)):
        report = judge([], read_errors(name, changed.encode()))
        assert report.status == "unknown" and not report.causes, (name, report.headline)
        assert "18446744073709551615" not in report.headline
    path = COALESCED
    verified = json.loads(_hpnet("verify", "--json", str(path)).stdout)
    found = [f["id"] for f in verified["findings"]]
    assert "collective-mismatch" in found
    conclusions = [c for f in verified["findings"] for c in f.get("conclusions", ())]
    assert len(conclusions) == len(set(conclusions)), conclusions  # each status said once


MEGATRON = (
    DATA
    / "hang"
    / "torch-default-pg-allreduce-seq29-fr-stack-megatron-dist-checkpointing-slow-save-EXCERPT.txt"
)


def test_the_failed_collectives_stack_says_where_the_program_called_it() -> None:
    """A real post (verl #2238): torch 2.6 prints the stack Flight Recorder kept of the
    failed collective after the watchdog's status line; its frames past torch's own API
    name the caller, Megatron's checkpoint sync, which the thread blames (a slow save).
    hang and verify say it alike; frames behind torchrun's [rank5]: prefix too."""
    said = (
        "rank 5's failed collective was called from sync_all_async_calls "
        "(megatron/core/dist_checkpointing/strategies/async_utils.py:149)"
    )
    for text in (MEGATRON.read_text(), re.sub(r"(?m)^#", "[rank5]:#", MEGATRON.read_text())):
        errors = read_errors("job.log", text.encode())
        report = judge([], errors)
        assert report.status == "unknown" and said in report.headline, report.headline
        (stacked,) = [e for e in errors if e.stack]
        assert stacked.rank == 5 and len(stacked.stack) == 3
        assert stacked.stack[0].startswith("#0 all_reduce from ")
    hang = json.loads(_hpnet("hang", "--json", str(MEGATRON)).stdout)
    assert [len(e["stack"]) for e in hang["errors"]] == [0, 3]
    verified = json.loads(_hpnet("verify", "--json", str(MEGATRON)).stdout)
    assert said in [c for f in verified["findings"] for c in f.get("conclusions", ())]


P2P_RUN = DATA / "hang" / "nccl-torch2.11-w2-p2p-batch-vs-allreduce-r0"


def test_a_ranks_status_when_told_to_dump_shows_it_never_entered_the_work() -> None:
    """A real run (torch 2.11, NCCL 2.28.9, the lent H200): rank 1 timed out in all_reduce
    #2; rank 0 had called batch_isend_irecv instead. Rank 0's only line is its group's
    status when the dump signal came ("Last enqueued NCCL work: 1, last completed NCCL
    work: 1"): it never entered #2. hpnet hang said UNKNOWN; now STUCK, rank 0 named, and
    verify says the same of the directory. A status of another group says nothing."""
    errors = [e for f in sorted(P2P_RUN.iterdir()) for e in read_errors(str(f), f.read_bytes())]
    report = judge([], errors)
    assert report.status == "hang", report.headline
    (cause,) = report.causes
    assert (cause.kind, cause.ranks, cause.waiting, cause.pg, cause.seq) == (
        "never-entered", (0,), (1,), "0", 2,
    )  # fmt: skip
    said = (
        "rank 0 had enqueued up to #1 and completed it (its program had not called #2: it "
        "waits outside NCCL)"
    )
    assert (
        report.headline
        == f"rank 0 never entered allreduce #2 of group 0, in which rank 1 waits: {said}"
    )
    both = b"".join(f.read_bytes() for f in sorted(P2P_RUN.iterdir()))
    other = both.replace(
        b"[PG ID 0 PG GUID 0(default_pg) Rank 0] Received",
        b"[PG ID 1 PG GUID 5(tp) Rank 0] Received",
    )
    assert judge([], read_errors("other.log", other)).status == "unknown"
    # verify judges the directory's per-rank files together, as hang does
    verified = json.loads(_hpnet("verify", "--json", str(P2P_RUN)).stdout)
    conclusions = [c for f in verified["findings"] for c in f.get("conclusions", ())]
    assert any(c.endswith(said) and c.startswith("rank 0 never entered ALLREDUCE SeqNum 2")
               for c in conclusions), conclusions  # fmt: skip


def test_a_rank_whose_line_is_nccls_error_failed_rather_than_timed_out() -> None:
    """A real run (the lent H100, torch 2.11): a peer killed, rank 0's line is torch's
    'raised the following async exception: NCCL error: remote process exited or there
    was a network error', not a watchdog timeout: hang said 'timed out in'."""
    log = DATA / "nccl-logs" / "h100-fake-hosts-one-gpu-peer-killed-socket-closed-nccl2.28.9"
    path = log / "rank0.log"
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.headline.startswith(
        "rank 0 failed in allreduce #21 of group 0 (NCCL: remote process exited or there was a "
        "network error)"
    ), report.headline


def test_verify_names_the_jobs_rank_not_a_subgroups() -> None:
    """A real post (NeMo-RL #2140): rank 107's line names no [rank107]: prefix, only its
    rank in the pipeline group ([PG ID 6 ... Rank 6]); verify said 'on rank(s) 6, 97'.
    It now takes the job's rank as hang does: rank 97 alone."""
    path = (
        DATA
        / "hang"
        / "nemo-rl-default-pg-dump-signal-51-vs-pipeline-group-coalesced-seq1-EXCERPT.txt"
    )
    verified = json.loads(_hpnet("verify", "--json", str(path)).stdout)
    (timeout,) = [f for f in verified["findings"] if f["id"] == "watchdog-timeout"]
    assert timeout["title"].endswith("on rank(s) 97"), timeout["title"]


def test_a_later_line_without_its_group_is_said_under_where_and_stays_unknown(
    tmp_path: Path,
) -> None:
    """A real post (LlamaFactory #2902): rank 0 waits in #1516 of group 1; rank 1's only
    line (#1517) names no group. Where it is group 1, rank 1 completed #1516: said so,
    conditionally, and UNKNOWN. With rank 1's status line naming group 1 (one line
    added) it is STUCK; with that line saying rank 1 had not completed #1516, or naming
    another group, nothing is said of who is behind."""
    report = judge([], read_errors(str(PG1_DESYNC), PG1_DESYNC.read_bytes()))
    assert report.status == "unknown" and not report.causes
    assert (
        "; where the #1517 of rank 1 is of group 1 too (not every line names its group), "
        "rank 1 completed #1516, which rank 0 did not (and never enqueued #1517): rank 0 "
        "is behind" in report.headline
    )
    assert report.headline.endswith("no Flight Recorder dump shows what each rank called at #1516")
    status = (
        "[rank1]:[E1123 00:52:57.705427695 ProcessGroupNCCL.cpp:1664] [PG {pg} Rank 1] "
        "Exception (either an error or timeout) detected by watchdog at work: 1517, last "
        "enqueued NCCL work: 1517, last completed NCCL work: {done}.\n"
    )
    verdicts = {}
    for pg, done in (("1", 1516), ("1", 1515), ("2", 1516)):
        log = tmp_path / f"pg{pg}-{done}.log"
        log.write_text(PG1_DESYNC.read_text() + status.format(pg=pg, done=done))
        verdicts[pg, done] = judge([], read_errors(str(log), log.read_bytes()))
    firm = verdicts["1", 1516]
    assert firm.status == "hang" and firm.causes[0].ranks == (0,)
    assert firm.headline.startswith("rank 0 never entered allreduce #1517 of group 1")
    for other in (verdicts["1", 1515], verdicts["2", 1516]):
        assert other.status == "unknown" and "behind" not in other.headline.split("; no ")[0]


#: posts found for this stop, read after their conclusions were written: file -> (status,
#: the first cause's kind and ranks, how the headline starts)
NEW_POSTS = {
    # a CUDA error ended the watchdogs: crashes, not hangs (verl#3579, lmdeploy#3258; vllm#4108
    # in torch 2.1's words, "NCCL watchdog thread terminated with exception", "[Rank 0]")
    "verl-ray-workerdict-r3-watchdog-cuda-misaligned-address-EXCERPT": (
        "unknown", None, "not a hang: a CUDA error ended the watchdog of rank 3",
    ),
    "lmdeploy-deepseek-tp-watchdog-illegal-memory-access-terminate-dist-backend-error-two-"
    "procs-interleaved-EXCERPT": (
        "unknown", None, "not a hang: a CUDA error ended the watchdog of rank 2 of group 0",
    ),
    "vllm-ray-tp-worker-sigabrt-fatal-python-aborted-then-driver-watchdog-illegal-memory-"
    "access-EXCERPT": (
        "unknown", None,
        "not a hang: a CUDA error ended the watchdog of rank 0 of a group the line does not name",
    ),
    # rank 6 in allreduce #2; which TP ranks never printed "Load weight end" is an excerpt's
    # absence, not a line
    "sglang-deepseek-r1-tp-first-allreduce-numel1-seqnum2-watchdog-600s-after-weight-load-"
    "EXCERPT": ("unknown", None, "rank 6 timed out in allreduce #2"),
    # ranks 0-6 enqueued up to #59998; rank 7 up to #59957: it never called #59958
    "torchinferno-tp8-h100-allreduce-timeout-fr-stack-r7-not-enqueued-EXCERPT": (
        "hang", ("never-entered", (7,)), "rank 7 never entered allreduce #59958 of group 0",
    ),
    # every rank is in allgather #1 and nothing had completed: no rank behind to name
    "unige-bamboo-gpu008-ddp-init-allgather-seq1-all-ranks-hang-EXCERPT": (
        "unknown", None, "ranks 0, 1, 2, 3 timed out in allgather #1 of group 0",
    ),
    # only rank 0's lines: it waits in #20585 with #20589 enqueued; its peer is not shown
    "lance-ddp-food101-sharded-fragment-sampler-uneven-batches-allreduce-timeout-r0": (
        "unknown", None, "rank 0 timed out in allreduce #20585 of group 0; rank 0 had enqueued "
        "up to #20589: it entered it and waits for a peer",
    ),
    # the heartbeat monitor: watchdogs stuck, no collective timed out in the lines
    "dinov2-4gpu-default-pg-heartbeat-monitor-timeout-one-pending-work-cause-not-shown-"
    "torch2.3-EXCERPT": ("unknown", None, "the watchdog of group 0 got stuck on ranks 0, 1"),
    "trl-cpo-8gpu-default-pg-watchdog-stuck-480s-then-abort-480s-later-torch2.6-EXCERPT": (
        # rank 3's monitor: "Terminating the process ... due to ProcessGroupNCCL watchdog hang"
        "unknown", None, "the watchdog of group 0 got stuck on ranks 3, 7",
    ),
    # Ray folded 3 more workers' alike lines into rank 3's (verl#1309)
    "verl-workerdict-default-pg-broadcast-seq1-timeout-1800s-critic-init-repeated-across-"
    "cluster-EXCERPT": (
        "unknown", None,
        "rank 3 timed out in broadcast #1 of group 0; no Flight Recorder dump says which rank "
        "is behind; Ray folded up to 3 more workers' alike lines into these",
    ),
    "simplerl-openrlhf-actormodelrayactorbox-default-pg-allgather-base-seq5919-enqueued5921-"
    "timeout-EXCERPT": (
        "unknown", None,
        "rank 1 timed out in _allgather_base #5919 of group 0; rank 1 had enqueued up to #5921: "
        "it entered it and waits for a peer",
    ),
    # a terminal wrapped the dump signal's line; its own watchdog found the timeout
    "protenix-default-pg-dump-signal-local-timeout-on-one-rank-propagated-via-tcpstore-"
    "EXCERPT": (
        "unknown", None,
        "rank 1: its own watchdog found a collective of group 0 timed out: #427698, its last "
        "enqueued, had not completed",
    ),
    # pipeline stages stuck in different groups' point-to-point works
    "pipefusion-pp-send-seqnum0-stuck-other-stages-coalesced-p2p-timeouts-l40-nccl-unknown-"
    "EXCERPT": (
        "unknown", None,
        "rank 0 timed out in send #0 of group 37; rank 3 in coalesced #29 of group 35",
    ),
    "megatron-pp-group-first-batched-p2p-coalesced-seqnum1-never-completes-nccl-unknown-"
    "EXCERPT": ("unknown", None, "a rank whose job rank the line does not print"),
    # three groups' watchdogs stuck at once, each line naming only its rank in its group
    "nvfuser-mpirun-4proc-teardown-each-rank-stuck-destroying-a-different-pg-watchdog-"
    "stuck-10s-nccl2.23.4-EXCERPT": (
        "unknown", None,
        "the watchdog of groups 3, 4, 6 got stuck on rank 2 of group 4, rank 0 of group 6, "
        "rank 1 of group 3 (ranks within their groups)",
    ),
    "xdit-pipefusion-pg5-heartbeat-monitor-timeout-two-subgroups-pending-works-3-vs-2-"
    "torch2.3-EXCERPT": ("unknown", None, "the watchdog of group 5 got stuck on ranks 0, 4"),
    # ranks 1, 2 in broadcast #532339, rank 0 already in _allgather_base #532341
    "torch2.5-default-pg-optype-mismatch-r0-allgather-base-vs-peers-broadcast-seq-ahead-by-2-"
    "EXCERPT": (
        "unknown", None, "ranks 1, 2 timed out in broadcast #532339; rank 0 in _allgather_base",
    ),
    "perlmutter-4gpu-allreduce-same-seq-on-three-ranks-r0-silent-old-watchdog-format-EXCERPT": (
        "unknown", None, "ranks 1, 2, 3 timed out in allreduce #1132079; no Flight",
    ),
    "openrlhf-batch-inference-8way-allgather-base-12h-watchdog-timeout-cause-not-shown-"
    "torch2.3-EXCERPT": ("unknown", None, "rank 7 timed out in _allgather_base #57599; no"),
    # only the watchdogs' teardown lines: rank 4's abort, rank 3's dump that did not finish
    "llamafactory-internvl-zero2-pg1-watchdog-timeout-flight-recorder-dump-wait-60000ms-"
    "expired-cause-not-shown-torch2.6-EXCERPT": (
        "unknown", None, "the watchdog of rank 4 found an NCCL operation failed or timed out "
        "and takes its process down",
    ),
    # five of eight ranks in the same broadcast: none behind the others in the lines
    "colossalai-torchrun-8gpu-broadcast-seq27962-six-ranks-same-seq-culprit-not-shown-old-"
    "torch-EXCERPT": (
        "unknown", None, "ranks 0, 1, 3, 6, 7 timed out in broadcast #27962; no Flight",
    ),
    "deepspeed-zero-checkpoint-save-reduce-scatter-seq4210-ran-699606ms-past-600s-timeout-"
    "one-rank-view-torch2.2-EXCERPT": (
        "unknown", None, "rank 6 timed out in _reduce_scatter_base #4210; no Flight",
    ),
    # a non-root sender of a gather, its last enqueued work the one that timed out
    "vllm-ray-tp-worker-gather-non-root-seq158046-enqueued-equals-timed-out-peer-not-shown-"
    "torch2.3-EXCERPT": (
        "unknown", None, "rank 1 timed out in gather #158046 of group 1; no Flight",
    ),
    "ray-raylet-worker-died-system-error-then-mlx5-cqe-error-and-nccl-broadcast-remote-error-"
    "openrlhf-vllm-nccl2.21.5-EXCERPT": (
        "unknown", None, "rank 1 failed in broadcast #1 (NCCL: remote process exited or there",
    ),
    # verl#5607: rank 0 queued 290 works behind #78: it entered it, a peer did not
    "verl-vllm-rollout-dp2-dense-default-pg-coalesced-seq78-stuck-enqueued-368-r0-EXCERPT": (
        "unknown", None, "rank 0 timed out in coalesced #78 of group 0; rank 0 had enqueued up",
    ),
    "sglang-scheduler-watchdog-timeout-300s-two-dp-ranks-pyspy-not-found-no-stacks-EXCERPT": (
        "unknown", None, "DP0 TP2, DP1 TP5: SGLang's scheduler watchdog fired",
    ),
    "torch-pg-abort-future-timeout-then-heartbeat-monitor-after-run-done-two-ranks-EXCERPT": (
        "unknown", None, "the process group's abort did not return on ranks 0, 1 in 600000 ms",
    ),
    (
        "torch-watchdog-allgather-seqnum1-first-collective-timeout-8gpu-single-node-proxy-"
        "service-closed-abort-complete-EXCERPT"
    ): ("unknown", None, "ranks 0, 2 timed out in allgather #1"),
    "windows-mp-spawn-env-rendezvous-tcpstore-use-libuv-not-built-gpt-sovits-EXCERPT": (
        "unknown", None, "the job never reached a collective: its ranks failed while making",
    ),
    (
        "torchelastic-restart-store-based-barrier-worker-count-12-vs-world-size-4-agent-"
        "store-reused-EXCERPT"
    ): (
        "unknown", None, "the job never reached a collective: its ranks failed while making",
    ),
    "torchrun-c10d-rendezvous-both-nodes-client-connect-timeout-60s-no-store-host-EXCERPT": (
        "unknown", None, "the job never started: the launcher's rendezvous failed",
    ),
    (
        "torchrun-c10d-rendezvous-random-run-id-per-launch-shutdown-connection-reset-"
        "torch2.0.1-EXCERPT"
    ): (
        "unknown", None, "the launcher could not close its rendezvous",
    ),
    (
        "torchrun-concurrent-jobs-one-node-rendezvous-store-broken-pipe-at-shutdown-"
        "torch1.12.1-EXCERPT"
    ): (
        "unknown", None, "the launcher could not close its rendezvous",
    ),
    (
        "vllm-server-weight-sync-stateless-pg-store-waitforinput-300000ms-collective-rpc-"
        "failed-EXCERPT"
    ): (
        "unknown", None, "rank 0 waited for the c10d store at [::ffff:0.0.0.0]:51216",
    ),
    (
        "ms-swift-qwen3-vl-grpo-tqdm-7386s-per-step-four-ranks-allreduce-seq1236-same-op-"
        "EXCERPT"
    ): (
        "unknown", None,
        "ranks 0, 1, 2, 3 timed out in allreduce #1236; no Flight Recorder dump says which rank",
    ),
    "nemo-qwen3-finetune-default-pg-allreduce-seq42-r3-timeout-r1-enqueued-only-41-EXCERPT": (
        "hang", ("never-entered", (1,)),
        "rank 1 never entered allreduce #42 of group 0, in which rank 3 waits",
    ),
    (
        "sglang-qwen2-72b-tp8-pg3-allgather-base-seq9141-logits-vocab-152064-nothing-queued-"
        "after-torch2.4-EXCERPT"
    ): (
        "unknown", None,
        "ranks 1, 4 timed out in _allgather_base #9141 of group 3; no Flight Recorder dump",
    ),
    "verl-ray-mesh-sp-alltoall-seq262-enqueued265-default-pg-dump-from-r7-EXCERPT": (
        "unknown", None,
        "rank 7 timed out in alltoall #262 of group 6; rank 7 had enqueued up to #265",
    ),
    (
        "vllm-mllama-tp4-pcie-first-allreduce-seq1-three-ranks-completed-minus1-fourth-unseen-"
        "torch2.4-EXCERPT"
    ): (
        "unknown", None,
        "ranks 0, 1, 2 timed out in allreduce #1 of group 0; nothing had completed on the group",
    ),
    # a [rankN]: prefix beside the fingerprint's own "Rank N" had crashed the reading
    (
        "deepspeed-fp16-scheduler-detail-allreduce-seq32-scalar-vs-peer-len7-fingerprint-"
        "artifact-gather-EXCERPT"
    ): (
        "hang", ("mismatch", (2, 3)),
        "ranks 2 and 3 are in different collectives (torch's fingerprint check on rank 2): rank "
        "2 at allreduce #32 (1 element), rank 3's fingerprint holds 7 values",
    ),
    # torch 2.0's fingerprints hold no sequence number: the lengths are compared the same way
    (
        "lightning-epoch-end-detail-old-format-allgather-double6-vs-peer-len5-scalar-"
        "interleaved-torch2.0.1-EXCERPT"
    ): (
        "hang", ("mismatch", (1, 0)),
        "ranks 1 and 0 are in different collectives (torch's fingerprint check on rank 1): rank "
        "1 at allgather (6 elements), rank 0's fingerprint holds 5 values",
    ),
    (
        "ms-swift-ddp-broadcast-coalesced-detail-seq8372-shape-24084544-vs-64-rank-model-"
        "state-differs-EXCERPT"
    ): (
        "hang", ("mismatch", (2, 0)),
        "ranks 2 and 0 called the same collective with different tensors (torch's fingerprint "
        "check on rank 2): rank 2 at broadcast #8372 (24084544 elements), rank 0 at broadcast "
        "#8372 (64 elements)",
    ),
    (
        "sglang-tp16-pgid2-allreduce-seq91885-one-rank-view-nothing-enqueued-after-"
        "interleaved-commsplit-info-EXCERPT"
    ): (
        "unknown", None,
        "rank 4 timed out in allreduce #91885 of group 3; no Flight Recorder dump says which rank",
    ),
    (
        "ray-train-128-ranks-coll-opcount-13a1-vs-torch-seq5020-allreduce-timeout-three-hosts-"
        "EXCERPT"
    ): (
        "unknown", None,
        "ranks 21, 27, 43 timed out in allreduce #5020; no Flight Recorder dump says which rank"
        " is behind",
    ),
    # the innermost of two stacked [rankN]: prefixes is torch's own (the outer a launcher's)
    "torchtitan-pp-shape-inference-cross-node-recv-store-poll-timeout-300s-EXCERPT": (
        "unknown", None,
        "rank 4 waited for the c10d store at jrc0912.jureca:38293 until the read timed out",
    ),
    "vllm-multiproc-tp-pg2-watchdog-cuda-illegal-memory-access-not-a-timeout-EXCERPT": (
        "unknown", None,
        "not a hang: a CUDA error ended the watchdog of rank 2 of group 3 (its rank in that "
        'group): "CUDA error: an illegal memory access was encountered" (',
    ),
    (
        "deepspeed-zero3-moe-leaf-trace-cache-invalidated-allgather-base-seq211067-five-"
        "of-eight-EXCERPT"
    ): (
        "unknown", None,
        "ranks 1, 2, 3, 5, 7 timed out in _allgather_base #211067; no Flight Recorder dump says"
        " which rank is behind",
    ),
    (
        "funasr-ddp-default-pg-allreduce-seq3437-numel-4311252-vs-1-validation-desync-"
        "torch2.3-EXCERPT"
    ): (
        "hang", ('mismatch', (0, 1)),
        "the ranks called different collectives at #3437 of group 0: rank 0 allreduce (4311252 "
        "elements); rank 1 allreduce (1 element) (2 of at least 2 ranks s",
    ),
    (
        "picotron-3d-parallel-runpod-rtx-a4000-seq1-allreduce-numel1-first-collective-"
        "never-completes-120s-EXCERPT"
    ): (
        "unknown", None,
        "ranks 1, 4, 5, 7 timed out in allreduce #1; no Flight Recorder dump says which rank is"
        " behind",
    ),
    (
        "torchtune-gemma-lora-end-of-epoch-allgather-base-seq15037-three-of-four-timeout-"
        "first-rank-silent-torch2.3-EXCERPT"
    ): (
        "unknown", None,
        "ranks 1, 2, 3 timed out in _allgather_base #15037 of group 0; rank 2 had enqueued up "
        "to #15042: it entered it and waits for a peer; no Flight Recorder",
    ),
    (
        "torchtune-midepoch-ckpt-default-pg-allgather-base-seq313-behind-allreduce-"
        "seq315-ahead-torch2.3-EXCERPT"
    ): (
        "unknown", None,
        "rank 1 timed out in _allgather_base #313; rank 0 in allreduce #315 of group 0; where "
        "the #315 of rank 0 is of group 0 too (not every line names its gr",
    ),
    # this stop's hunt: torch's DETAIL fingerprint check read out (sgl-project/sglang#16237:
    # both fingerprints without tensors, the numbers are the ranks' own)
    "sglang-rocm-mi325x-cuda-graph-capture-detail-barrier-seq17-vs-seq45-tp-peer-behind-EXCERPT": (
        "hang", ("mismatch", (13, 0)),
        "ranks 13 and 0 are in different collectives (torch's fingerprint check on rank 13): "
        "rank 13 at barrier #17, rank 0 at barrier #45 (28 collectives apart); which side",
    ),
    # bghira/SimpleTuner#2712: the lengths differed, so "SequenceNumber=0OpType=REDUCE" is
    # rank 7's fingerprint length (3: no tensors), not its collective
    "simpletuner-detail-fingerprint-allgather-seq101-vs-length-3-tensorless-collective-EXCERPT": (
        "hang", ("mismatch", (1, 7)),
        "ranks 1 and 7 are in different collectives (torch's fingerprint check on rank 1): rank "
        "1 at allgather #101 (1 element), rank 7's fingerprint holds 3 values, a collective "
        "without tensors: its op and number are not in the line (torch printed that length as "
        "REDUCE #0); ranks 0, 2, 3, 4, 5, 6 are in collectives of rank 1's fingerprint length",
    ),
    "deim-heartbeat-monitor-watchdog-stuck-600s-pg0-workmetalist-103-vs-84-EXCERPT": (
        "unknown", None,
        "the watchdog of group 0 got stuck on ranks 0, 1, 2: a CUDA or NCCL call (or the GIL)",
    ),
    "diffusers-blocking-wait-allreduce-seq2521-numel160672064-three-ranks-EXCERPT": (
        "unknown", None,
        "ranks 1, 5, 7 timed out in allreduce #2521; no Flight Recorder dump says which rank",
    ),
    (
        "llamafactory-pg1-reduce-scatter-base-seq7753-three-ranks-timeout-enqueued7755-"
        "culprit-not-shown-EXCERPT"
    ): (
        "unknown", None,
        "ranks 0, 3, 4 timed out in _reduce_scatter_base #7753 of group 1; ranks 0, 4 had "
        "enqueued up to #7755: they entered it and wait for a peer",
    ),
    "vllm-tp4-first-allreduce-seqnum1-timeout-completed0-one-process-view-EXCERPT": (
        "unknown", None,
        "rank 3 timed out in allreduce #1 of group 0; no Flight Recorder dump says which rank",
    ),
    "torch-pg1-failure-detected-r7-at-137429-r5-allreduce-137430-wrapped-EXCERPT": (
        "hang", ("never-entered", (7,)),
        "rank 7 never entered allreduce #137430 of group 1, in which rank 5 waits: rank 5 "
        "completed #137429, which rank 7 did not: rank 7 is behind",
    ),
    "torch-default-pg-allgather-base-3497-numel-1572864-vs-512-EXCERPT": (
        "hang", ("mismatch", (0, 1)),
        "the ranks called different collectives at #3497 of group 0: rank 0 _allgather_base "
        "(1572864 elements); rank 1 _allgather_base (512 elements)",
    ),
    "torch-two-nodes-launcher-prefix-reduce-2070-enqueued-2082-wrapped-EXCERPT": (
        "unknown", None,
        "ranks 7, 8, 13 timed out in collective #2070 of group 0; rank 7 had enqueued up to #2082",
    ),
    "torch-pg1-reduce-scatter-base-55485-peer-oom-EXCERPT": (
        "unknown", None,
        "ranks 4, 5 timed out in collective #55485 of group 1; rank 5 had enqueued up to #55487",
    ),
    "torch-default-pg-allgather-base-seq190346-fr-stack-fsdp2-r9-nothing-enqueued-after-EXCERPT": (
        "unknown", None, "rank 9 timed out in _allgather_base #190346 of group 0",
    ),
    "torch-default-pg-allreduce-seq29-fr-stack-megatron-dist-checkpointing-slow-save-EXCERPT": (
        "unknown", None, "rank 5 timed out in allreduce #29 of group 0",
    ),
    # autocast #381: a message broken by hand into indented lines, its SeqNum cut ("...")
    "torch-elided-wrapped-allreduce-numel1-r0-alone-post-fit-barrier-EXCERPT": (
        "unknown", None,
        "rank 0 timed out in allreduce (1 element); the line shows no sequence number or group",
    ),
    # a rank's status when told to dump names a work it entered, or another group: never
    # read as one that never entered (accelerate #3861, OpenRLHF #1126, NeMo-RL #2140,
    # prime-rl #3186)
    "accelerate-validation-default-pg-broadcast-seq22-dump-signal-local-EXCERPT": (
        "unknown", None, "rank 2 timed out in broadcast #22 of group 0",
    ),
    "nemo-rl-default-pg-dump-signal-51-vs-pipeline-group-coalesced-seq1-EXCERPT": (
        "unknown", None, "rank 97 timed out in coalesced #1",
    ),
    "openrlhf-save-model-default-pg-allreduce-seq460631-dump-signal-from-r6-on-r2-EXCERPT": (
        "unknown", None, "rank 7 timed out in allreduce #460631 of group 0",
    ),
    "prime-rl-default-pg-dump-signal-1261-vs-subpg-alltoall-base-seq1438-EXCERPT": (
        "unknown", None,
        "rank 13 timed out in alltoall_base #1438 of group "
        "d03ba143833c6bf31b072ffdb22f1745957fcbfb",
    ),
    # vllm #23448: rank 3 entered #5730 too (enqueued 6464), so not one that never entered
    "torch-pgid4-broadcast-r0-seq5730-r3-seq5729-enqueued6464-EXCERPT": (
        "unknown", None,
        "rank 3 timed out in broadcast #5729 of group 67; rank 3 had enqueued up to #6464: it "
        "entered it and waits for a peer; rank 0 in broadcast #5730 of group 67; rank 0 "
        "completed #5729, which rank 3 did not: rank 3 is behind",
    ),
    # accelerate #3250: two ranks, rank 1 completed #122-#125; rank 0 entered #122 itself
    "accelerate-fsdp-save-default-pg-r0-reduce-scatter-seq122-behind-r1-allgather-seq126-EXCERPT": (
        "unknown", None,
        "rank 0 timed out in _reduce_scatter_base #122 of group 0; rank 0 had enqueued up to "
        "#127: it entered it and waits for a peer; rank 1 in _allgather_base #126 of group 0; "
        "rank 1 completed #122, which rank 0 did not: rank 0 is behind",
    ),
    # axolotl #1495: lines behind SkyPilot's '(task, pid=N)' prefix; 4 of 8 ranks shown
    "axolotl-qwen-moe-allreduce-seq13807-numel-11274112-vs-10942336-r7-size-mismatch-EXCERPT": (
        "hang", ("mismatch", (1, 5, 6, 7)),
        "the ranks called different collectives at #13807: ranks 1, 5, 6 allreduce (11274112 "
        "elements); rank 7 allreduce (10942336 elements) (4 of at least 8 ranks say so",
    ),
    # Megatron-LM #735: rank 3 printed no timeout in the excerpt; nothing proves it behind
    "megatron-moe-allreduce-seq305-numel1-r0-r1-r2-timeout-r3-silent-service-thread-EXCERPT": (
        "unknown", None,
        "ranks 0, 1, 2 timed out in allreduce #305; no Flight Recorder dump says",
    ),
    # pytorch #20630: 2 allreduce and 1 broadcast of 4 ranks: rank 0 could tie the sides
    "torch-default-pg-seq4084-allreduce-r1-r2-vs-broadcast-r3-op-mismatch-EXCERPT": (
        "hang", ("mismatch", (1, 2, 3)),
        "the ranks called different collectives at #4084 of group 0: ranks 1, 2 allreduce "
        "(4821568 elements); rank 3 broadcast (56623104 elements) (3 of at least 4 ranks say "
        "so: which side is wrong is not shown)",
    ),
    # vllm-omni #2928: the timeout's 'what():' line names group 47 and no job rank; the
    # default group's dump-signal lines before it are not its rank's
    "vllm-omni-default-pg-caught-up-233659-dump-from-r1-subpg-guid47-allreduce-seq5524-EXCERPT": (
        "unknown", None,
        "a rank whose job rank the line does not print (",
    ),
    "vllm-tp-pg3-gather-seq203441-non-root-r2-r3-root-missing-shm-broadcast-stall-EXCERPT": (
        "unknown", None,
        "ranks 2, 3 timed out in gather #203441 of group 3; no Flight Recorder dump says",
    ),
    "weathergen-fsdp2-default-pg-allreduce-seq1085-enqueued1119-r2-r3-EXCERPT": (
        "unknown", None,
        "ranks 2, 3 timed out in allreduce #1085 of group 0; rank 2 had enqueued up to #1119: "
        "it entered it and waits for a peer",
    ),
    # LlamaFactory #6000: TORCH_DISTRIBUTED_DEBUG=DETAIL, rank 0's monitored barrier
    "llamafactory-ds-debug-detail-fingerprint-seq7133-r0-monitoredbarrier-ranks-6-failed-EXCERPT": (
        "hang", ("barrier", (6,)),
        "rank 6 failed to pass the monitored barrier rank 0 ran",
    ),
    # ms-swift #7992: the watchdogs got stuck at exit, no collective timed out
    (
        "ms-swift-megatron-moe-exit-watchdog-stuck-ep-etp-distopt-groups-no-"
        "collective-timeout-EXCERPT"
    ): (
        "unknown", None,
        "the watchdog of groups 99, 117, 137 got stuck on ranks 0, 2, 4: a CUDA or NCCL call "
        "(or the GIL) blocked the thread that checks the collectives, so no collective timed "
        "out in these lines; ranks 0, 2, 3, 5 were exiting without destroy_process_group()",
    ),
    (
        "sglang-tp16-two-nodes-pgid2-guid3-allreduce-seq40231-r1-enqueued40267-"
        "default-pg-idle-minus1-EXCERPT"
    ): (
        "unknown", None,
        "ranks 0, 1 timed out in collective #40231 of group 3; rank 1 had enqueued up to #40267",
    ),
    # sglang #1691: torch 2.4's 'Heartbeat monitor timed out!' lines
    (
        "sglang-tp8-pg3-heartbeat-monitor-timed-out-worklist121-all-ranks-no-"
        "collective-timeout-EXCERPT"
    ): (
        "unknown", None,
        "the watchdog of group 3 got stuck on ranks 0, 1, 2, 6, 7",
    ),
    # torchtune #2651: ranks 6 and 7's dump-signal status puts them in #9387 too
    (
        "torchtune-checkpoint-save-default-pg-allreduce-numel1-seq9387-r4-r6-"
        "r7-timeout-wrapped-166col-EXCERPT"
    ): (
        "unknown", None,
        "rank 4 timed out in allreduce #9387 of group 0; ranks 6, 7 were in it too when told "
        "to dump (enqueued, #9386 the last completed)",
    ),
    (
        "verl-fsdp-sft-epoch-transition-pgid2-guid9-alltoall-seq4486-"
        "enqueued4489-then-watchdog-stuck-EXCERPT"
    ): (
        "unknown", None,
        "ranks 3, 7 timed out in alltoall #4486 of group 9; ranks 3, 7 had enqueued up to #4489",
    ),
    # DeepEP #411: nothing ever completed in the 16-rank group
    "deepep-internode-pg1-allgather-seq1-16-ranks-last-completed-minus1-r7-r3-EXCERPT": (
        "unknown", None,
        "ranks 3, 7 timed out in allgather #1 of group 1; nothing had completed on the group "
        "yet (last completed -1)",
    ),
    (
        "deepspeed-zero3-generate-r15-of-64-allgather-base-seq96383-7200s-own-"
        "abort-service-thread-closed-EXCERPT"
    ): (
        "unknown", None,
        "rank 15 timed out in _allgather_base #96383; no Flight Recorder dump says",
    ),
    # jax #6896: XLA's rendezvous, device ordinal 2 absent (refused before)
    "jax-xla-rendezvous-op534-ordinals-1-0-3-waiting-ordinal-2-absent-EXCERPT": (
        "hang", ("never-entered", (2,)),
        "XLA's device ordinal 2 never arrived at the rendezvous of op 534 (cross_replica) of "
        "run 85034, where device ordinals 0, 1, 3 wait",
    ),
    # NVIDIA/nccl#969: NCCL's own mismatch line, no dump: no text about dumps (it had some)
    "nccl-net-ib-collective-mismatch-local-496640-remote-65536-peer-10.10.23.6-nccl2.14.3": (
        "unknown", None,
        "a rank the lines do not name: the ranks' collectives did not match (",
    ),
    (
        "openrlhf-ray-dedup-reference-actor-default-pg-allgather-base-seq17284-"
        "3-ranks-repeated-14x-EXCERPT"
    ): (
        "unknown", None,
        "rank 0 timed out in _allgather_base #17284 of group 0; rank 0 had enqueued up to "
        "#17290: it entered it and waits for a peer",
    ),
    "torch-elastic-r1-allreduce-seq335-remote-process-exited-peer-node-killed-EXCERPT": (
        "unknown", None,
        "rank 1 failed in allreduce #335 (NCCL: remote process exited or there was a network "
        "error)",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(NEW_POSTS))
def test_fresh_posts_reach_their_conclusions(name: str) -> None:
    """Four threads not read before (ms-swift #5409, #3154, #6301, milabench #269): a
    rank whose only line is its watchdog's status is placed at its work (#5409: it is
    behind); lines behind a launcher's prefix are records of their own, not one
    terminal-wrapped line (#269 had given rank 13's REDUCE to rank 7 and lost 8 and 13)."""
    path = DATA / "hang" / f"{name}.txt"
    status, cause, start = NEW_POSTS[name]
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.status == status and report.headline.startswith(start), report.headline
    first = (report.causes[0].kind, report.causes[0].ranks) if report.causes else None
    assert first == cause


#: what the launcher's lines say, beyond the headline's start (NEW_POSTS)
LAUNCHER_SAYS = {
    "windows-mp-spawn-env-rendezvous-tcpstore-use-libuv-not-built-gpt-sovits-EXCERPT": (
        "no libuv",
        "USE_LIBUV=0",
    ),
    (
        "torchelastic-restart-store-based-barrier-worker-count-12-vs-world-size-4-agent-"
        "store-reused-EXCERPT"
    ): (
        "12 arrivals for 4 ranks",
        "no rank is missing",
        "--max_restarts 0",
    ),
    "torchrun-c10d-rendezvous-both-nodes-client-connect-timeout-60s-no-store-host-EXCERPT": (
        "store at IP1:2222 timed out",
        "nc -vz IP1 2222",
    ),
    (
        "torchrun-c10d-rendezvous-random-run-id-per-launch-shutdown-connection-reset-"
        "torch2.0.1-EXCERPT"
    ): (
        "random rendezvous id",
        "--rdzv_id",
        "do not say how the workers ended",
    ),
    (
        "torchrun-concurrent-jobs-one-node-rendezvous-store-broken-pipe-at-shutdown-"
        "torch1.12.1-EXCERPT"
    ): (
        "store it met in was gone",
        "its own port",
    ),
}


@pytest.mark.parametrize("name", sorted(LAUNCHER_SAYS))
def test_a_launchers_rendezvous_is_read_for_what_it_says(name: str) -> None:
    """torch's store barrier counts arrivals (more than the ranks: an earlier start's, no
    rank missing); torchrun's rendezvous names its store, draws a random id without
    --rdzv_id, and closes after its workers exit (a failed close is no failed start)."""
    path = DATA / "hang" / f"{name}.txt"
    headline = judge([], read_errors(str(path), path.read_bytes())).headline
    for words in LAUNCHER_SAYS[name]:
        assert words in headline, (words, headline)
    if "shutdown" in name:
        assert "never started" not in headline


@pytest.mark.parametrize(("counted", "says"), [(2, "2 of 4 ranks reached"), (4, "could not")])
def test_the_store_barrier_count_says_who_came(tmp_path: Path, counted: int, says: str) -> None:
    """Fewer arrivals than ranks: ranks that never came (torch's _store_based_barrier
    message, distributed_c10d.py); as many: the count says nothing more."""
    log = tmp_path / "rank3.log"
    log.write_text(
        "RuntimeError: Timed out initializing process group in store based barrier on rank: "
        f"3, for key: store_based_barrier_key:1 (world_size=4, worker_count={counted}, "
        "timeout=0:30:00)\n"
    )
    headline = judge([], read_errors(str(log), log.read_bytes())).headline
    assert says in headline and "no rank is missing" not in headline, headline


FR_MISSING = DATA / "hang" / "fr-trace-not-all-ranks-joining-seq31117-missing-ranks-3-7-EXCERPT.txt"
FR_ERRORS = (
    DATA / "hang" / "fr-trace-collective-39-size-mismatch-128ranks-allreduce-1025-EXCERPT.txt"
)


def test_the_flight_recorder_analyzers_report_names_the_ranks_that_never_joined() -> None:
    """A real run of torch's analyzer (pytorch PR #140969): ranks 3-7 have no entry for
    all_reduce #31117 of the default group; ranks 0-2 called it. hpnet hang refused the
    file (no evidence, exit 2); now it names ranks 3-7."""
    done = _hpnet("hang", "--json", str(FR_MISSING))
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["status"] == "hang"
    (cause,) = report["causes"]
    assert (cause["kind"], cause["ranks"], cause["waiting"], cause["pg"], cause["seq"]) == (
        "never-entered", [3, 4, 5, 6, 7], [0, 1, 2], "0", 31117,
    )  # fmt: skip
    assert report["headline"].startswith(
        "ranks 3, 4, 5, 6, 7 never joined all_reduce #31117 of group 0 (default_pg) (no entry "
        "for it in their dumps; the Flight Recorder analyzer's report)"
    )
    assert cause["evidence"][0] == (
        f"{FR_MISSING}:4: Not all ranks joining collective: sequence number: 31117"
    )


def test_an_analyzer_report_without_its_error_line_says_what_is_missing(tmp_path: Path) -> None:
    """pytorch #140563: collective #39 has errors, its "error msg" line cut from the post:
    UNKNOWN, with where the answer is. With that line (quoted in the file's .source.txt)
    ranks 22 and 110 differ in size from the first rank compared, which side is wrong
    not shown; a state that differs only is no mismatch; the form before late 2024
    ("... at entry N", the expected ranks' count) may call a rank without a dump missing."""
    done = _hpnet("hang", str(FR_ERRORS))
    assert done.returncode == 1 and done.stdout.startswith(
        "hpnet hang: UNKNOWN — the Flight Recorder analyzer found errors in all_reduce #39 of "
        "group 0 (default_pg) ([[1025]], scheduled; 128 ranks): which ranks disagree, and how, "
        "is on its 'error msg' line, which this input does not hold"
    )
    error = (
        "error msg: Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: "
        "'[[1025]]' does not match found input sizes: '[[262144]]', Culprit rank 110; Error "
        "type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match found "
        "input sizes: '[[262144]]'\n"
    )
    whole = tmp_path / "fr-errors.txt"
    whole.write_text(FR_ERRORS.read_text() + error)
    report = judge([], (), analyses=collect([str(whole)]).analyses)
    (cause,) = report.causes
    assert (report.status, cause.kind, cause.ranks, cause.majority) == (
        "hang", "mismatch", (22, 110), False,
    )  # fmt: skip
    assert report.headline.endswith("which side is wrong is not shown")
    state = tmp_path / "fr-state.txt"
    state.write_text(
        FR_ERRORS.read_text() + "error msg: Culprit rank 5; Error type: COLLECTIVE_STATE_MISMATCH\n"
    )
    report = judge([], (), analyses=collect([str(state)]).analyses)
    assert report.status == "unknown" and not report.causes
    assert "in another state on rank 5" in report.headline
    older = tmp_path / "fr-older.txt"  # torch's Flight Recorder tutorial's output
    older.write_text(
        "Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\n"
        "collective: nccl:all_reduce\nmissing ranks: {1}\ninput sizes: [[3, 4]]\n"
        "output sizes: [[3, 4]]\nexpected ranks: 2\ncollective state: scheduled\n"
    )
    report = judge([], (), analyses=collect([str(older)]).analyses)
    assert report.causes[0].ranks == (1,) and "or no dump" in report.headline
    # beside the dumps themselves the report says nothing more: hpnet reads the dumps
    import shutil

    job = tmp_path / "job"
    shutil.copytree(FR / "gloo-torch2.13-w4-skip-rank2", job)
    shutil.copy(FR_MISSING, job / "fr_trace.txt")
    evidence = collect([str(job)])
    assert evidence.analyses
    report = judge(evidence.dumps, evidence.errors, analyses=evidence.analyses)
    assert [(c.kind, c.ranks) for c in report.causes] == [("never-entered", (2,))]


def test_a_group_where_nothing_ever_completed_says_so() -> None:
    path = DATA / "hang" / "torch-coalesced-seq1-numel-uint64max-never-completed-EXCERPT.txt"
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.headline.startswith(
        "rank 1 timed out in coalesced #1 of group 0; nothing had completed on the group yet"
    )


def _launch_env() -> dict[str, str]:
    skip = ("NCCL_", "TORCH_FR", "TORCH_NCCL", "SLURM_", "OMPI_", "PMI_", "TORCHELASTIC_")
    ranks = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip) and k not in ranks}
    return {**env, "PYTHONWARNINGS": "ignore", "CUDA_VISIBLE_DEVICES": ""}


def test_hang_capture_shows_every_rank_the_recorder_settings(tmp_path: Path) -> None:
    capture = tmp_path / "capture"
    done = subprocess.run(
        [*HPNET, "launch", "--nproc-per-node", "2", "--hang-capture", str(capture),
         "--env", "NCCL_DEBUG=WARN", "--dry-run", "--", "python", "train.py"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path, env=_launch_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for setting in (
        f"TORCH_FR_DUMP_TEMP_FILE={capture}/nccl_trace_rank_",
        "TORCH_NCCL_DUMP_ON_TIMEOUT=1",
        "TORCH_FR_BUFFER_SIZE=2000",
        f"NCCL_DEBUG_FILE={capture}/nccl.%h.%p.log",
    ):
        assert setting in done.stdout.replace("'", "").replace(" = ", "="), setting
    assert "NCCL_DEBUG=INFO" not in done.stdout.replace(" = ", "=")  # the caller's WARN wins
    assert not capture.exists()  # a plan writes nothing


def test_a_job_run_with_hang_capture_ends_with_why_it_hung(tmp_path: Path) -> None:
    """A real job of 2 gloo ranks under hpnet launch: rank 1 never enters the second
    all_reduce. The job fails (rank 0's exit 1), and launch reads what it left."""
    capture = tmp_path / "capture"
    done = subprocess.run(
        [*HPNET, "launch", "--nproc-per-node", "2", "--hang-capture", str(capture), "--",
         sys.executable, "-m", "tests.hang_capture_rank"],
        capture_output=True, text=True, timeout=180, check=False, cwd=ROOT, env=_launch_env(),
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"hpnet launch: the job failed; what it left in {capture}:" in out
    assert "hpnet hang: STUCK — rank 1 never entered all_reduce #2 of group 0" in out
    dumps = sorted(p.name for p in capture.iterdir() if p.name.startswith("nccl_trace_rank_"))
    assert dumps == ["nccl_trace_rank_0", "nccl_trace_rank_1"]


#: RAS reports (NCCL's docs' samples and a posted one) -> (status, first cause's kind and
#: ranks), from each file's conclusions
RAS = {
    "hang/ras-docs-dead-process-missing-rank-21.txt": ("hang", "gone", (21,)),
    # NCCL 2.30.7's fault example: OK, then INCOMPLETE, then DEAD for the process that left
    "hang/nccl-2.30.7-ras-exit-fault-r7-incomplete-then-dead-8ranks-2nodes-EXCERPT.txt": (
        "hang", "gone", (7,),
    ),
    "hang/ras-docs-incomplete-missing-rank-21-two-timeouts.txt": ("hang", "silent", (21,)),
    # Ray Train's capture of `ncclras -f json` with rank 1 held back: no summary field, the
    # counts alone say it (ray-project/ray python/ray/train/v2/tests/data/health)
    "hang/ray-train-ncclras-json-4node-a10g-r1-allreduce-100-vs-101-injected-straggler-"
    "nccl-2.28.9.json": ("hang", "never-entered", (1,)),
    "hang/ras-docs-warnings-mismatch-26-ranks-at-6650-6-ranks-at-6649.txt": (
        "hang", "never-entered", (0, 2, 3, 4, 5, 7),
    ),
    # RAS lists the 2 ranks ahead: the 30 behind are counted, not named
    "artefacts/ras-text-mismatch-allgather-30-lag-2-ahead-nccl2.26.2.txt": (
        "hang", "never-entered", (),
    ),
    # a communicator being torn down: FINALIZE with a MISMATCH of status, not a hang by
    # itself; one snapshot cannot say there is none either (RAS said RUNNING OK during a
    # stalled network: tests/data/hang/ras-live-2.28.9-stalled-network-running-ok.txt)
    "hang/ras-docs-finalize-mismatch-status-unknown-running-finalize.txt": ("unknown", None, ()),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RAS))
def test_a_ras_report_names_the_dead_missing_or_lagging_ranks(name: str) -> None:
    evidence = collect([str(DATA / name)])
    assert evidence.ras and not evidence.dumps
    report = judge(evidence.dumps, evidence.errors, ras=evidence.ras)
    status, kind, ranks = RAS[name]
    assert report.status == status
    if kind is None:
        assert not report.causes
        return
    first = report.causes[0]
    assert (first.kind, first.ranks) == (kind, ranks)
    assert first.pg.startswith("comm ") and report.headline == first.headline()
    if kind == "never-entered":
        assert any("snapshot" in e for e in first.evidence)


def test_the_report_shows_ranks_by_sequence_numbers_and_marks_the_culprit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _hpnet("hang", "--report", str(out), str(FR / "gloo-torch2.13-w4-skip-rank2"))
    assert done.returncode == 1, done.stderr
    page = (out / "report.html").read_text()
    data = json.loads((out / "report.json").read_text())
    assert data["status"] == "hang" and data["causes"][0]["ranks"] == [2]
    assert "<script" not in page and "http" not in page  # one file, opens from disk
    # group 0: rank 2 is marked and stops at #4; #5 (where the ranks part) is marked
    assert "<tr class='named'><th>rank 2</th>" in page and "<th class='part'>#5</th>" in page
    row = page.split("<tr class='named'><th>rank 2</th>", 1)[1].split("</tr>", 1)[0]
    assert "all_gather [1024] Float" in row and row.endswith("<td class='none'>-</td>")
    world = next(g for g in data["groups"] if g["pg"] == "0")
    assert sorted(world["recent"]["2"]) == ["1", "2", "3", "4"]
    missing = _hpnet("hang", "--report", "/nonexistent/out", str(FR / "gloo-torch2.13-w4-clean"))
    assert missing.returncode == 2 and missing.stderr.startswith("error[unwritable]")


def test_the_report_replaces_a_planted_symlink_and_never_writes_through_it(tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere.txt"
    out.mkdir()
    target.write_text("keep\n")
    (out / "report.json").symlink_to(target)
    done = _hpnet("hang", "--report", str(out), str(FR / "gloo-torch2.13-w4-clean"))
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "keep\n"
    assert not (out / "report.json").is_symlink()
    assert json.loads((out / "report.json").read_text())["status"] == "no-hang"


def test_a_process_exiting_without_destroy_process_group_is_no_evidence() -> None:
    """torch's 'destroy_process_group() was not called before program exit' says when a
    stuck watchdog was (ms-swift #7992), not that anything hung: a clean run's stderr
    holding only it is still refused, and a judged job lists it under no error."""
    clean = FR / "nccl-torch2.11-w3-clean" / "rank0.stderr"
    assert "destroy_process_group() was not called" in clean.read_text()
    done = _hpnet("hang", str(clean))
    assert done.returncode == 2 and "hang-no-evidence" in done.stderr
    path = (
        DATA
        / "hang"
        / (
            "ms-swift-megatron-moe-exit-watchdog-stuck-ep-etp-distopt-groups-no-collective-"
            "timeout-EXCERPT.txt"
        )
    )
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.errors and not any(e.exiting for e in report.errors)
    # rank 2's monitor terminated it "due to ProcessGroupNCCL watchdog hang"
    assert {e.rank for e in report.errors if e.stuck} == {0, 2, 4}


def test_xla_waits_that_ended_and_fingerprints_name_no_culprit(tmp_path: Path) -> None:
    """An XLA wait that XLA itself says ended ('Thread is unstuck!') names nobody; nor do
    DETAIL-mode fingerprint lines, which are no error (DeepSpeed #4890: refused)."""
    jax = (
        DATA
        / "hang"
        / ("jax-xla-rendezvous-op534-ordinals-1-0-3-waiting-ordinal-2-absent-EXCERPT.txt")
    )
    ended = tmp_path / "jax-then-unstuck.txt"
    ended.write_bytes(
        jax.read_bytes()
        + b"2021-06-01 12:09:21.000000: E rendezvous.cc:1] Thread is unstuck! Warning above "
        b"was a false-positive. Perhaps the timeout is too short.\n"
    )
    report = judge([], read_errors(str(ended), ended.read_bytes()))
    assert report.status == "unknown" and not report.causes
    fingerprints = (
        DATA
        / "hang"
        / (
            "deepspeed-moe-pgwrapper-fingerprint-r0-seq1277-then-1275-r1-seq1275-two-groups-"
            "EXCERPT.txt"
        )
    )
    done = _hpnet("hang", str(fingerprints))
    assert done.returncode == 2 and "hang-no-evidence" in done.stderr


def test_a_store_a_process_could_not_reach_while_the_job_ran_is_said() -> None:
    """OpenRLHF#265: a vLLM worker timed out connecting to 172.17.0.2 (a Docker bridge
    address; the terminal wrapped the line after the host) while an actor's allreduce
    timed out: the job ran, so this is no failed start, and the store's address is
    named with what 172.17.0.0/16 is."""
    path = (
        DATA
        / "hang"
        / (
            "openrlhf-ray-vllm-worker-tcpstore-connect-docker-bridge-172.17.0.2-timeout-1800s-"
            "actor-allreduce-watchdog-EXCERPT.txt"
        )
    )
    report = judge([], read_errors(str(path), path.read_bytes()))
    assert report.status == "unknown"
    assert report.headline.startswith("rank 3 timed out in allreduce #3856"), report.headline
    assert "timed out connecting to a store at 172.17.0.2 (" in report.headline
    assert f"{path}:1)" in report.headline
    assert "Docker's default bridge network" in report.headline
    assert "never started" not in report.headline


def test_a_store_connect_timeout_alone_is_still_a_failed_start() -> None:
    """The same line without any collective: the launcher's rendezvous never met."""
    line = (
        "[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying "
        "to connect to (172.17.0.2, 44737).\n"
    )
    report = judge([], read_errors("a.log", line.encode()))
    assert report.headline.startswith("the job never started"), report.headline
    assert "172.17.0.2:44737" in report.headline
    assert "Docker's default bridge network" in report.headline


def test_a_native_backtrace_names_where_the_signal_stopped_the_process() -> None:
    """sglang#3837: UCX's backtrace (frames innermost first, its "Caught signal" line cut
    off) and then faulthandler's "Fatal Python error: Segmentation fault": the process
    ended by SIGSEGV in NCCL's SaveProxy, at the source line its build path names."""
    path = (
        DATA / "nccl-logs" / "sglang-deepseek-r1-two-instances-sigsegv-saveproxy-"
        "hoststreamcallback-faulthandler-nccl-2.21.5-EXCERPT.log"
    )
    lines = list(enumerate(path.read_text().splitlines(), 1))
    (crash,) = read_exits(str(path), lines)
    assert crash.status == -11 and crash.reporter == "Python's faulthandler"
    assert crash.name == "a process (in NCCL's SaveProxy (proxy.cc:518))"
    assert crash.where.endswith(":16")
