"""Processes a launcher says ended (hpnet.hang.exits), read from real posts: torchrun's
line and ChildFailedError table, vLLM's executor, UCX's signal handler; and what
``hpnet hang`` says with them, alone and beside the ranks' watchdog lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.hang.collect import collect
from hpnet.hang.endings import ended, exits_summary
from hpnet.hang.exits import Exit, read_exits
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
    # two agents' tables: each its own Root Cause (accelerate#1519); a paste that starts
    # inside rank 1's record, its host and rank read all the same (pytorch#121209)
    "slurm-accelerate-two-torchrun-agents-same-host-gpu187-second-agent-fails-51s-first-"
    "exitcode-1-gpu-oom-EXCERPT.txt": [
        (3, 3, 19418, 1, False),
        (0, 0, 19414, 1, True),
        (4, 0, 19401, 1, True),
    ],
    "azure-vm-torchrun-all-four-local-workers-exitcode-1-same-second-root-cause-is-lowest-"
    "rank-not-first-nccl-unknown-EXCERPT.txt": [
        (1, 1, 69812, 1, False),
        (2, 2, 69813, 1, False),
        (3, 3, 69814, 1, False),
        (0, 0, 69811, 1, True),
    ],
    # no line says a process ended: the workers the launcher stopped (ColossalAI#6202,
    # LLaMA-Factory#2470)
    "colossalai-torchrun-pg-not-destroyed-warning-then-agent-sigterms-workers-one-pid-"
    "missing-cause-unknown-torch2.4plus-EXCERPT.txt": [
        (None, None, pid, -15, False) for pid in (2448006, 2448007, 2448009, 2448010, 2448011)
    ]
    + [(None, None, 2448012, -15, False)],
    "deepspeed-pdsh-hostfile-gpu003-launcher-kills-subprocess-in-main-process-first-barrier-"
    "ncclid-store-get-reset-EXCERPT.txt": [(None, None, 275125, -15, False)],
    # each record flattened onto one line by SageMaker's log service (litData#340)
    "sagemaker-multinode-childfailederror-table-algo-2-all-sigabrt-same-second-first-"
    "failure-unknown-EXCERPT.txt": [(r, r, 187 + r, -6, False) for r in range(2, 8)],
    # Slurm cancelled the step at its time limit (Lightning#20542): the job was stopped
    "slurm-time-limit-step-cancelled-lightning-sigterm-bypassed-no-requeue-signal-EXCERPT.txt": [
        (None, None, None, -15, True)
    ],
    # a table of the first agent, rank 4 ten minutes before rank 0's timeout; srun's task
    # 1 is an agent there, not rank 1 (pytorch#134006)
    "torch2.4-slurm-subgroup-pg1-allgather-seq2-times-out-after-peer-exited-code1-barrier-"
    "device-guess-EXCERPT.txt": [(4, 0, 793062, 1, True), (None, None, None, 1, False)],
    # torchrun's line (LongChat#9); its SIGTERMs to the eight others are no exits
    "torchrun-nine-workers-local-rank4-sigkill-exitcode-minus9-others-sigtermed-cause-"
    "unknown-EXCERPT.txt": [(None, 4, 24905, -9, True)],
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
        # DeepSpeed's launcher (launch.py sigkill_handler): the status of the worker that
        # failed, after the command it spawned last (its --local_rank is not that worker's)
        (
            "gpu3: [2024-02-11 22:36:23,110] [ERROR] [launch.py:321:sigkill_handler] "
            "['/usr/bin/python', '-u', 'train.py', '--local_rank=7'] exits with return code = -9",
            [(None, None, None, -9, True, "gpu3")],
        ),
        # no failure: nothing kept
        ("Worker VllmWorkerProcess pid 198 died, exit code: 0", []),
        ("srun: error: node7: task x: Killed", []),
    ],
)
def test_the_other_launchers_forms(line: str, expected: list[tuple[object, ...]]) -> None:
    found = read_exits("a.log", [(1, line)])
    assert [(e.rank, e.local_rank, e.pid, e.status, e.first, e.host) for e in found] == expected


def _said(name: str) -> str:
    return judge_evidence(collect([str(HANG / name)])).headline


def test_the_records_times_order_several_agents_tables() -> None:
    """Two agents' tables on one host (accelerate#1519): the second's Root Cause, rank 4,
    failed 51 s before the first's, rank 0: rank 4 is the job's first failure; ranks 0
    and 4 are each local rank 0 of gpu187: two agents ran there."""
    said = _said(next(n for n in POSTS if n.startswith("slurm-accelerate")))
    assert said.startswith(
        "processes of the job ended: rank 4 (pid 19401, on gpu187.cluster.local) failed first "
        "as torchrun saw it at 2023-06-03_22:45:01, exited with code 1"
    ), said
    assert "ranks 0, 3 also the same way" in said
    assert "ranks 0, 4 are each local rank 0 on gpu187.cluster.local: 2 torchrun agents" in said


def test_failures_of_one_second_are_none_proven_first() -> None:
    """pytorch#121209: the Root Cause, rank 0, failed in the same second as ranks 2 and 3
    (torchrun's timestamps are whole seconds; it picks the lowest rank): none is named
    first; rank 1's record lost its time line."""
    said = _said(next(n for n in POSTS if n.startswith("azure-vm")))
    assert said.startswith(
        "processes of the job ended: ranks 0, 2, 3 failed in the same second "
        "(2024-03-05_07:01:51) as torchrun recorded them"
    ), said
    assert "failed first" not in said
    assert "rank 1 exited with code 1" in said and "whose time is not in the lines" in said
    # the agent's SIGTERM to the worker left follows the failure of the same second
    lines = [
        "Failures:",
        "[1]:",
        "  time      : 2026-01-01_00:00:01",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : -15 (pid: 10)",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-01-01_00:00:01",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : -9 (pid: 11)",
    ]
    said = exits_summary(read_exits("a.log", list(enumerate(lines, 1))))
    assert said.startswith("rank 1 (pid 11) failed first as torchrun saw it at 2026-01-01_00:00:01")
    # without a Root Cause record in the lines, times name no first: one may not be shown
    assert "failed first" not in exits_summary(read_exits("a.log", list(enumerate(lines[:5], 1))))


def test_the_workers_a_launcher_stopped_are_read_where_nothing_else_is() -> None:
    """torchrun's agent SIGTERMs only the workers still alive: the missing pid of their
    run is named (ColossalAI#6202); DeepSpeed's launcher kills every worker of its node
    (LLaMA-Factory#2470). Beside a line that says a process ended, they are no exits."""
    said = _said(next(n for n in POSTS if n.startswith("colossalai-torchrun-pg")))
    assert said.startswith(
        "processes of the job ended: torchrun's agent sent SIGTERM to pid(s) 2448006, 2448007, "
        "2448009"
    ), said
    assert "the one that ended first is not among them (pid 2448008 is missing" in said
    said = _said(next(n for n in POSTS if n.startswith("deepspeed-pdsh")))
    assert "DeepSpeed's launcher on gpu003 sent SIGTERM to pid(s) 275125" in said, said
    assert "the failed one too" in said
    both = [
        "W0219 api.py:858] Sending process 12 closing signal SIGTERM",
        "failed (exitcode: -9) local_rank: 0 (pid: 11) of binary: /venv/bin/python",
    ]
    assert [e.pid for e in read_exits("a.log", list(enumerate(both, 1)))] == [11]


def test_a_scheduler_cancellation_and_a_crash_handler_are_read() -> None:
    """Slurm's step daemon cancelled the step at its time limit: the job was stopped, no
    process failed; abseil's handler named the signal and, on its next line, the function
    the process was in (nccl#2213: NCCL's ncclLocalOpAppend)."""
    said = _said(next(n for n in POSTS if n.startswith("slurm-time-limit")))
    assert said.startswith(
        "processes of the job ended: Slurm cancelled job step 55595933.0 on maestro-3017 at "
        "2025-01-10T15:27:25 due to its time limit"
    ), said
    assert "no line says a process failed" in said and "failed first" not in said
    gb10 = (
        DATA
        / "nccl-logs"
        / (
            "gb10-roce-gdr0-allreduce-30min-stall-then-sigsegv-in-nccllocalopappend-desync-report-"
            "blames-peer-nccl2.28.9-EXCERPT.log"
        )
    )
    (crash,) = read_exits(str(gb10), list(enumerate(gb10.read_text().splitlines(), 1)))
    assert (crash.status, crash.name, crash.reporter) == (
        -11,
        "a process (in ncclLocalOpAppend)",
        "abseil's handler",
    )


def test_tvm_ffis_crash_handler_names_the_function_and_nccls_frame() -> None:
    """TVM FFI's SIGSEGV handler (loaded with FlashInfer) prints its banner and then the
    frames, innermost first, after its own (sigaction): vllm#27868 crashed in the
    driver's cuMemCreate under NCCL's cuMem host probe; TensorRT-LLM#10255 in NCCL's
    ncclCommWindowRegister itself."""
    logs = DATA / "nccl-logs"
    said = {}
    for name in (
        "vllm-p2p-nccl-connector-segfault-in-cumemcreate-cumem-host-numa-probe-comminitrank-"
        "rtx3080-nccl2.27.5-EXCERPT.log",
        "trtllm-nccl-symmetric-allreduce-segfault-in-ncclcommwindowregister-b200-tp2-EXCERPT.log",
    ):
        path = logs / name
        (crash,) = read_exits(str(path), list(enumerate(path.read_text().splitlines(), 1)))
        said[name[:4]] = (crash.status, crash.name, crash.reporter)
    assert said == {
        "vllm": (
            -11,
            "a process (in cuMemCreate, called from NCCL's ncclCuMemHostEnable "
            "(misc/cudawrap.cc:92))",
            "TVM FFI's handler",
        ),
        "trtl": (-11, "a process (in NCCL's ncclCommWindowRegister)", "TVM FFI's handler"),
    }


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
        f"first as torchrun saw it at {report.exits[0].time}, ended by {death}"
    ), report.headline
    assert "; rank 0 also ended by SIGTERM (exit code -15): stopped by the launcher" in (
        report.headline
    )
    assert "; the ranks' own lines: rank 0 failed in allreduce #2 of group 0" in report.headline
