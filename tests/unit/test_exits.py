"""Processes a launcher says ended (hpnet.hang.exits), read from real posts: torchrun's
line and ChildFailedError table, vLLM's executor, UCX's signal handler; and what
``hpnet hang`` says with them, alone and beside the ranks' watchdog lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.hang.collect import collect
from hpnet.hang.exits import Exit, ended, exits_summary, read_exits
from hpnet.hang.verdict import judge_evidence
from tests.conftest import DATA

HANG = DATA / "hang"


def _exits(name: str) -> list[Exit]:
    path = HANG / name
    return read_exits(str(path), list(enumerate(path.read_text().splitlines(), 1)))


#: post -> (rank, local rank, pid, status, first) of each process it says ended
POSTS = {
    # torchrun's table, records only, no Root Cause record (VLMEvalKit)
    "vlmevalkit-torchrun-childfailederror-odd-local-ranks-sigabrt-same-second-8xa100-EXCERPT.txt": [
        (1, 1, 32051, -6, False),
        (3, 3, 32053, -6, False),
        (5, 5, 32055, -6, False),
        (7, 7, 32057, -6, False),
    ],
    # a table pasted from its second record, without its head (ColossalAI#4418)
    "colossalai-multinode-torchrun-table-all-local-ranks-exitcode-9-sigkill-same-second-"
    "second-host-EXCERPT.txt": [
        (11, 3, 1626, -9, False),
        (12, 4, 1627, -9, False),
        (13, 5, 1628, -9, False),
        (14, 6, 1629, -9, False),
        (15, 7, 1630, -9, False),
    ],
    # torchrun's line: the first failure its agent saw; its SIGTERMs to the others are
    # no exits (ColossalAI#3514)
    "colossalai-torchrun-failed-exitcode-9-sigkill-one-worker-agent-sigterms-others-no-"
    "worker-error-nccl-unknown-EXCERPT.txt": [(None, 3, 812917, -9, True)],
    "multinode-lora-torchrun-failed-exitcode-11-sigsegv-one-worker-no-worker-output-nccl-"
    "unknown.txt": [(None, 5, 11514, -11, True)],
    # UCX's handler in the process itself (pipedream#76)
    "docker-default-shm-sigbus-nonexistent-physical-address-nccl-proxy-thread-torchrun-"
    "childfailederror.txt": [(None, None, 3039, -7, False)],
    # recorded on the lent H200: torchrun, rank 1 SIGKILLs / SIGSEGVs itself after one
    # all_reduce (benchmarks/torchrun_exit.py); the agent then stops rank 0 (SIGTERM)
    "torchrun-plant-second-process-sigkill-after-first-allreduce-peer-remote-error-h200-"
    "torch2.11-nccl2.28.9.txt": [(1, 1, 736, -9, True), (0, 0, 735, -15, False)],
    "torchrun-plant-second-process-sigsegv-after-first-allreduce-peer-remote-error-h200-"
    "torch2.11-nccl2.28.9.txt": [(1, 1, 782, -11, True), (0, 0, 781, -15, False)],
    # vLLM's executor (vllm#9839)
    "vllm-mp-tp-worker-sigabrt-after-watchdog-then-driver-pg2-heartbeat-monitor-timeout-9-"
    "works-pending-EXCERPT.txt": [(None, None, 198, -6, False)],
}


@pytest.mark.parametrize("name", sorted(POSTS))
def test_each_process_a_launcher_says_ended_is_read(name: str) -> None:
    found = [(e.rank, e.local_rank, e.pid, e.status, e.first) for e in _exits(name)]
    assert found == POSTS[name]


def test_processes_that_ended_alone_lead_the_verdict() -> None:
    """ColossalAI#3514: nothing but torchrun's report: the job's processes ended, the
    first by SIGKILL, with what SIGKILL usually is; the hang command does not refuse it."""
    path = HANG / (
        "colossalai-torchrun-failed-exitcode-9-sigkill-one-worker-agent-sigterms-others-no-"
        "worker-error-nccl-unknown-EXCERPT.txt"
    )
    report = judge_evidence(collect([str(path)]))
    assert report.status == "unknown"
    assert report.headline.startswith(
        "processes of the job ended: a process (pid 812917, local rank 3) failed first as "
        "torchrun saw it, ended by SIGKILL (exit code -9): killed: by the kernel's OOM killer"
    ), report.headline
    assert report.headline.endswith(f"({path}:6)")
    assert len(report.exits) == 1


def test_a_table_without_its_root_cause_says_so() -> None:
    report = judge_evidence(collect([str(HANG / next(n for n in POSTS if "vlmevalkit" in n))]))
    assert report.headline.startswith(
        "processes of the job ended: ranks 1, 3, 5, 7 ended by SIGABRT (exit code -6)"
    ), report.headline
    assert "Root Cause record) is not in the lines" in report.headline


def test_processes_that_ended_follow_the_ranks_own_lines() -> None:
    """verl: ranks 3 and 7 timed out in alltoall #4486; torchrun saw local rank 1 end by
    SIGABRT 19 minutes later (the watchdog's abort): the timeout leads, the exit follows."""
    path = HANG / (
        "verl-fsdp-sft-epoch-transition-pgid2-guid9-alltoall-seq4486-enqueued4489-then-"
        "watchdog-stuck-EXCERPT.txt"
    )
    report = judge_evidence(collect([str(path)]))
    first, _, then = report.headline.partition("; processes ended: ")
    assert first.startswith("ranks 3, 7 timed out in alltoall #4486 of group 9"), first
    assert then.startswith("a process (pid 314, local rank 1) failed first as torchrun saw it")
    vllm = judge_evidence(collect([str(HANG / next(n for n in POSTS if n.startswith("vllm")))]))
    assert vllm.headline.startswith("the watchdog of group 2 got stuck on rank 0")
    assert "processes ended: vLLM's VllmWorkerProcess (pid 198) ended by SIGABRT" in (vllm.headline)


def test_a_file_with_nothing_that_ended_is_still_refused(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("exit code: 0\nepoch 3 done, exited the loop\nKilled 3 zombie workers\n")
    with pytest.raises(InputError, match="no Flight Recorder dump"):
        collect([str(log)])


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Open MPI's mpirun (orterun help-orterun.txt, proc-aborted-signal)
        (
            "mpirun noticed that process rank 3 with PID 4711 on node gpu1 exited on signal 9 "
            "(Killed).",
            [(3, None, 4711, -9, True, "gpu1")],
        ),
        # Slurm's srun: task ids are the job's ranks; a list of them
        (
            "srun: error: node7: tasks 0-2,5: Exited with exit code 1",
            [(r, None, None, 1, False, "node7") for r in (0, 1, 2, 5)],
        ),
        ("srun: error: node7: task 3: Killed", [(3, None, None, -9, False, "node7")]),
        # torch.multiprocessing's spawn: the index is the local rank
        (
            "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with "
            "signal SIGKILL",
            [(None, 1, None, -9, False, None)],
        ),
        # the shell's report of a child a signal ended
        (
            "run.sh: line 3:  4711 Segmentation fault      (core dumped) python train.py",
            [(None, None, 4711, -11, False, None)],
        ),
        # no failure: nothing kept
        ("Worker VllmWorkerProcess pid 198 died, exit code: 0", []),
        ("srun: error: node7: task x: Killed", []),
    ],
)
def test_the_other_launchers_forms(line: str, expected: list[tuple[object, ...]]) -> None:
    found = read_exits("a.log", [(1, line)])
    assert [(e.rank, e.local_rank, e.pid, e.status, e.first, e.host) for e in found] == expected


def test_a_table_record_repeating_the_line_is_one_process() -> None:
    """torchrun logs its first failure, then raises the table whose Root Cause record is
    the same process: one exit, with the table's rank and host."""
    lines = [
        "failed (exitcode: -11) local_rank: 0 (pid: 6174) of binary: /venv/bin/python",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-01-15_05:44:28",
        "  host      : xdit",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : -11 (pid: 6174)",
    ]
    (only,) = read_exits("a.log", list(enumerate(lines, 1)))
    assert (only.rank, only.host, only.first, only.where) == (0, "xdit", True, "a.log:1")


def test_what_each_ending_says() -> None:
    assert ended(1).startswith("exited with code 1: the process's own error")
    assert ended(-15).startswith("ended by SIGTERM (exit code -15): stopped by the launcher")
    assert "/dev/shm" in ended(-7)
    assert ended(-99) == "ended by signal 99 (exit code -99)"
    same = [Exit(where=f"a:{n}", text="", status=-15, reporter="torchrun", rank=n) for n in (2, 3)]
    first = Exit(where="a:1", text="", status=-9, reporter="torchrun", rank=1, first=True)
    said = exits_summary([first, *same])
    assert said.startswith("rank 1 failed first as torchrun saw it, ended by SIGKILL")
    assert "; ranks 2, 3 also ended by SIGTERM (exit code -15)" in said


@pytest.mark.parametrize(
    ("name", "death"),
    [
        (
            "torchrun-plant-second-process-sigkill-after-first-allreduce-peer-remote-error-"
            "h200-torch2.11-nccl2.28.9.txt",
            "SIGKILL",
        ),
        (
            "torchrun-plant-second-process-sigsegv-after-first-allreduce-peer-remote-error-"
            "h200-torch2.11-nccl2.28.9.txt",
            "SIGSEGV",
        ),
        (
            "torchrun-plant-second-process-sigkill-nccl-debug-init-h200-torch2.11-nccl2.28.9.txt",
            "SIGKILL",
        ),
    ],
)
def test_a_rank_that_died_leads_the_error_it_caused(name: str, death: str) -> None:
    """The plant's culprit is rank 1, which ended itself by a signal; rank 0's NCCL error
    (a peer gone) and its SIGTERM follow: the death leads, the rank's line after it."""
    report = judge_evidence(collect([str(HANG / name)]))
    assert report.headline.startswith(
        f"processes of the job ended: rank 1 (pid {report.exits[0].pid}, on localhost) failed "
        f"first as torchrun saw it, ended by {death}"
    ), report.headline
    assert "; rank 0 also ended by SIGTERM (exit code -15): stopped by the launcher" in (
        report.headline
    )
    assert "; the ranks' own lines: rank 0 failed in allreduce #2 of group 0" in report.headline
