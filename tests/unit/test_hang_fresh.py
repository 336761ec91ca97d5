"""``hpnet hang`` on fresh public inputs whose conclusions were written before hpnet read
them (each .source.txt): a whole job timed out in its first collective with every rank
inside it (ALCF Polaris, aws-ofi-nccl over CXI), ROCm's runtime aborting processes on a
GPU's hardware exception before the others' watchdogs fired (ROCm/ROCm#4021), a 2-rank
desync (verl-agent), and a 2-rank timeout whose world size the lines do not give."""

from __future__ import annotations

from pathlib import Path

from hpnet.hang.collect import collect
from hpnet.hang.placement import logged_world
from hpnet.hang.verdict import judge_evidence
from tests.conftest import DATA

POLARIS = (
    "alcf-polaris-2node-8gpu-ddp-resnet50-aws-ofi-nccl-1.6.0-cxi-gdr-phb-first-allgather-"
    "seqnum1-all-ranks-garbage-last-completed-nccl-2.20.5.log"
)
SIRIUS = (
    "alcf-sirius-2node-8gpu-ddp-vae-aws-ofi-nccl-1.9.1-cxi-gdr-phb-r0-allreduce-6215-others-"
    "broadcast-3861-nccl-2.20.5.log"
)
MI300X = (
    "axolotl-mi300x-8gpu-deepspeed-z3-hip-gpu-hang-hw-exception-r0-r5-gone-reduce-scatter-"
    "watchdog-rccl-EXCERPT.txt"
)


def test_every_rank_of_the_job_inside_its_first_collective_is_the_collective_stuck() -> None:
    """8 ranks, NCCL's log shows the one 8-rank communicator of all 8 processes, and every
    rank's watchdog timed out in allgather #1 having enqueued it: nobody is behind."""
    evidence = collect([str(DATA / "nccl-logs" / POLARIS)])
    assert logged_world(evidence.nccl) == 8
    report = judge_evidence(evidence)
    assert report.status == "hang"
    cause = report.causes[0]
    assert (cause.kind, cause.ranks, cause.seq, cause.pg) == (
        "stuck-in-collective", tuple(range(8)), 1, "0",
    )  # fmt: skip
    assert report.headline.startswith(
        "every rank of the job (8, the size of NCCL's one communicator of them all) timed out "
        "in allgather #1 of group 0, having enqueued it: none is behind"
    )
    assert "NET/AWS Libfabric/1/GDRDMA" in cause.fix  # the links their NCCL logs show


def test_ranks_apart_in_one_group_are_not_called_all_inside_one_collective() -> None:
    """Rank 0 waits in allreduce #6215, four others in broadcast #3861: not every rank in
    one work, so the rule above stays silent and the ranks behind are named."""
    report = judge_evidence(collect([str(DATA / "nccl-logs" / SIRIUS)]))
    cause = report.causes[0]
    assert (cause.kind, cause.ranks, cause.waiting) == ("never-entered", (1, 4, 5, 6), (0,))


def test_a_two_rank_timeout_without_the_world_size_names_no_one() -> None:
    """Both ranks of a 2-GPU FSDP job timed out in the same all-gather; nothing in the
    lines says the job has 2 ranks, so no rank is called behind and none ahead."""
    name = "pytorch-2.0.1-fsdp-watchdog-allgather-base-timeout-2xa100-EXCERPT.txt"
    report = judge_evidence(collect([str(DATA / "hang" / name)]))
    assert report.status == "unknown" and not report.causes
    assert report.headline.startswith(
        "ranks 0, 1 timed out in _allgather_base #388923; no Flight Recorder dump says which "
        "rank is behind"
    )
    told = judge_evidence(collect([str(DATA / "hang" / name)]), world=2)
    assert told.causes[0].kind == "stuck-in-collective"  # --world 2 says the rest
    assert told.headline.startswith("every rank of the job (2, --world) timed out in ")


def test_a_gpu_hardware_exception_leads_the_timeouts_that_follow_it() -> None:
    """ROCm's runtime printed 'HW Exception by GPU node-9 ... reason :GPU Hang' for 11
    processes and aborted them (ROCR-Runtime Runtime::HwExceptionHandler, std::abort);
    600 s later six ranks timed out: the exception is said first, the shell's 'Aborted'
    is one of those processes, and the watchdog's abort is not blamed for them."""
    report = judge_evidence(collect([str(DATA / "hang" / MI300X)]))
    assert report.headline.startswith(
        "processes of the job ended: 11 processes ended by SIGABRT (exit code -6): ROCm's "
        "runtime found a hardware exception (GPU Hang) on HSA node 9 (rocm-smi's Node column) and "
        "aborted the process"
    )
    assert "the ranks' own lines: ranks 1, 2, 3, 4, 6, 7 timed out in _reduce_scatter_base " in (
        report.headline
    )
    assert "PyTorch's NCCL watchdog aborts" not in report.headline
    assert {e.reporter for e in report.exits} == {"ROCm's runtime"}


def test_a_desync_of_two_ranks_names_the_one_behind() -> None:
    name = (
        "verl-agent-fsdp-2gpu-grpo-sft-branch-desync-r1-allreduce-numel1-vs-r0-reduce-"
        "scatter-watchdog-1800s-EXCERPT.txt"
    )
    report = judge_evidence(collect([str(DATA / "hang" / name)]))
    cause = report.causes[0]
    assert (cause.kind, cause.ranks, cause.waiting, cause.seq) == (
        "never-entered",
        (1,),
        (0,),
        2667,
    )
    assert "a branch on the rank" in cause.fix


def test_ranks_whose_watchdog_saw_an_nccl_error_are_not_called_stuck_in_one(
    tmp_path: Path,
) -> None:
    """torch 2.5's watchdog on an NCCL error (a peer gone) prints its group status as it
    does for a timeout: every rank at work 5 is then no collective stuck, and the rule
    names no one (it had raised StopIteration on ranks with no timeout line)."""
    for rank in range(4):
        (tmp_path / f"rank{rank}.log").write_text(
            f"[rank{rank}]:[E1129 10:00:00.000000000 ProcessGroupNCCL.cpp:1616] [PG ID 0 PG "
            f"GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with "
            "exception: NCCL error: remote process exited or there was a network error, NCCL "
            "version 2.21.5\n"
            f"[rank{rank}]:[E1129 10:00:00.000000000 ProcessGroupNCCL.cpp:1597] [PG ID 0 PG "
            f"GUID 0(default_pg) Rank {rank}] failure detected by watchdog at work sequence id: "
            "5 PG status: last enqueued work: 5, last completed work: 4\n"
        )
    report = judge_evidence(collect([str(tmp_path)]), world=4)
    assert all(c.kind != "stuck-in-collective" for c in report.causes), report.headline
