"""Stacks of stuck processes, as py-spy and gdb print them (hpnet.hang.stacks), on real
posts: where each dumped process waits, and what the processes say together."""

from __future__ import annotations

import pytest

from hpnet.hang.collect import collect
from hpnet.hang.stacks import read_stacks, stacks_summary
from hpnet.hang.verdict import judge_evidence
from tests.conftest import DATA

HANG = DATA / "hang"

#: post -> (kind of each process's stack, in input order; how the headline starts, after
#: "the stacks: " where the stacks speak first)
POSTS = {
    # DeepSpeed ZeRO-3: the main thread idles in backward, an engine thread gathers
    "accelerate-deepspeed-zero3-8xh100-hang-pyspy-main-idle-in-backward-engine-thread-in-"
    "all-gather-into-tensor-EXCERPT": (
        ["collective"],
        "the stacks: the process at ",
    ),
    # recorded here: a gloo job whose rank 1 skips the all_reduce (tests/hang_plant.py)
    "gloo-skip-plant-culprit-one-of-three-ranks-py-spy-dumps-torch2.13-cpu": (
        ["collective", "elsewhere", "collective"],
        "the stacks: pid 24821, --rank 1 (/work/main/.venv/bin/python -m tests.hang_plant "
        "rank --rank…): MainThread is in _rank (hang_plant.py:146): not waiting in all_reduce "
        "as 2 other dumped process(es) are",
    ),
    # recorded on the H200: the same plant with NCCL: the others wait for the GPU
    "nccl2.28.9-skip-plant-culprit-one-of-three-ranks-one-h200-py-spy-dumps-torch2.11": (
        ["cuda", "elsewhere", "cuda"],
        "the stacks: pid 617, --rank 1 (/opt/torch/.venv/bin/python3 -m tests.hang_plant "
        "rank --ran…): MainThread is in _rank (hang_plant.py:146): not waiting for the GPU in "
        "synchronize as 2 other dumped process(es) are (GPU work they queued",
    ),
    "nccl2.28.9-skip-plant-culprit-one-of-three-ranks-one-h200-py-spy-native-dumps-torch2.11": (
        ["cuda", "elsewhere", "cuda"],
        "the stacks: pid 617, --rank 1 (/opt/torch/.venv/bin/python3 -m tests.hang_plant "
        "rank --ran…): MainThread is in _rank (hang_plant.py:146), waiting in clock_nanosleep: "
        "not waiting for the GPU in cudaDeviceSynchronize as 2 other",
    ),
    # rank 0 starved by its data loader while the others all-reduce (fairseq#4816)
    # two of eight ZeRO-3 processes, each main thread idle in backward while its engine
    # thread works in partition_grads: neither stands apart
    "deepspeed-zero3-accelerate-h100-py-spy-two-procs-mainthread-backward-worker-partition-"
    "grads-odd-gpu-unseen-EXCERPT": (
        ["elsewhere", "elsewhere"],
        "the stacks: the 2 dumped processes are all in partition_grads "
        "(deepspeed/runtime/zero/stage3.py:1500): none stands apart",
    ),
    # SGLang's overlap scheduler: the main thread idles in queue.get, the forward thread
    # is active in a torch op under flashinfer's prefill (sglang#4257)
    "sglang-tp-overlap-scheduler-pyspy-tp0-main-waits-result-queue-forward-thread-active-"
    "flashinfer-EXCERPT": (
        ["elsewhere"],
        "the stacks: pid 2696393 (sglang::scheduler_None): Thread-3 (forward_thread_func) is "
        "in a torch op called from ragged_run (flashinfer/prefill.py:237) (active when dumped; "
        "its MainThread, idle, is in resolve_batch_result (tp_worker_overlap_thread.py:169), "
        "waiting in queue.get): not in a collective",
    ),
    "fairseq-32gpu-4node-hang-pyspy-rank-zero-main-in-dataloader-queue-get-others-allreduce-"
    "EXCERPT": (["data"], "the stacks: the process at "),
    # SGLang's data-parallel controller waits for its schedulers: a parent, no rank
    "sglang-dp-controller-watchdog-pyspy-idle-join-while-decode-progresses-node-rank-nonzero-"
    "EXCERPT": (["parent"], "the stacks: pid 10366 (sglang::data_parallel_controller)"),
    "sglang-pd-prefill-pp0-pyspy-main-blocked-in-c10d-send-send-tensor-dict-EXCERPT": (
        ["collective"],
        "the stacks: pid 3438121 (sglang::scheduler_DP1_TP1_EP1_PP0): MainThread waits in "
        "send (torch/distributed/distributed_c10d.py:2487)",
    ),
    # PP1's watchdog fired (its main thread is not in the dump); PP2 waits in Gloo's recv
    "sglang-pp-hang-pyspy-native-pp2-tp1-gloo-recvwork-wait-after-pp1-watchdog-EXCERPT": (
        ["unshown", "collective"],
        "PP1 TP1: SGLang's scheduler watchdog fired",
    ),
    # docker compose's "sglang-1  | " before every line, frames too (sglang#12076)
    "sglang-eagle-hicache-scheduler-watchdog-300s-pyspy-tp6-active-in-penalty-apply-not-nccl-"
    "EXCERPT": (
        ["unshown", "elsewhere"],
        "TP3: SGLang's scheduler watchdog fired",
    ),
    "sglang-pyspy-forward-thread-blocked-in-ncclcommwindowregister-gb200-nccl2.27plus-EXCERPT": (
        ["nccl"],
        "the stacks: the process at ",
    ),
    # vLLM's EngineCore waits on its shared-memory queue, polled through pyzmq (vllm#50835)
    "vllm-ray-pp2-enginecore-idle-in-shm-broadcast-dequeue-worker-stack-cut-EXCERPT": (
        ["elsewhere"],
        "the stacks: pid 4085279 (VLLM::EngineCore): MainThread is in recv "
        "(vllm/distributed/device_communicators/shm_broadcast.py:802), waiting in socket.poll",
    ),
    "sglang-dp-attention-mtp-watchdog-dp1-tp3-active-in-eagle-draft-single-pyspy-stack-EXCERPT": (
        ["elsewhere"],
        "the stacks: pid 231810 (sglang::scheduler_DP1_TP3): MainThread is in draft",
    ),
    # gdb: the last rank copies a scalar to the host (.item()) while the others sync
    "torch1.12-multinode-hang-gdb-last-rank-in-cudamemcpyasync-local-scalar-dense-others-"
    "cudadevicesynchronize-EXCERPT": (["cuda"], "the stacks: the process at "),
}


@pytest.mark.parametrize("name", sorted(POSTS))
def test_each_dumped_process_is_placed(name: str) -> None:
    path = HANG / f"{name}.txt"
    kinds, start = POSTS[name]
    lines = list(enumerate(path.read_text().splitlines(), 1))
    assert [s.kind for s in read_stacks(str(path), lines)] == kinds
    report = judge_evidence(collect([str(path)]))
    assert report.status == "unknown"
    assert report.headline.startswith(start), report.headline


def test_the_calls_are_the_programs_not_the_waits() -> None:
    """A thread parked in the standard library is placed at the program's call, with the
    wait it made (queue.get, process.join)."""
    path = HANG / (
        "fairseq-32gpu-4node-hang-pyspy-rank-zero-main-in-dataloader-queue-get-others-allreduce-"
        "EXCERPT.txt"
    )
    (stack,) = read_stacks(str(path), list(enumerate(path.read_text().splitlines(), 1)))
    assert stack.thread == "MainThread"
    assert stack.call == "__next__ (fairseq/data/iterators.py:648), waiting in queue.get"


def test_a_main_thread_that_idles_is_placed_at_the_thread_that_works() -> None:
    """py-spy saw the main thread idle outside the job's waits (a queue, autograd's
    engine) and another thread active: the process is where that thread is; a main thread
    that is itself active, or waits for data, stays the telling one."""
    text = [
        'Thread 1 (idle): "MainThread"',
        "    wait (threading.py:327)",
        "    get (queue.py:171)",
        "    step (train.py:10)",
        'Thread 2 (active): "Thread-1 (worker)"',
        "    forward (model.py:5)",
    ]
    (stack,) = read_stacks("x", list(enumerate(text, 1)))
    assert (stack.thread, stack.call) == ("Thread-1 (worker)", "forward (model.py:5)")
    assert stack.main == "step (train.py:10), waiting in queue.get"
    for main in ('Thread 1 (active): "MainThread"', 'Thread 1 (idle): "MainThread"'):
        frames = ["    step (train.py:10)"] if "active" in main else ["    __next__ (data/it.py:1)"]
        lines = [main, *frames, *text[4:]]
        (stack,) = read_stacks("x", list(enumerate(lines, 1)))
        assert stack.thread == "MainThread" and not stack.main


def test_a_process_away_from_the_collective_the_others_wait_in_is_named() -> None:
    """Two dumps pasted one after the other (no headers): one rank's main thread in the
    data loader, the other's in all_reduce: the first is the one waited for."""
    fairseq = HANG / (
        "fairseq-32gpu-4node-hang-pyspy-rank-zero-main-in-dataloader-queue-get-others-allreduce-"
        "EXCERPT.txt"
    )
    deepspeed = HANG / (
        "accelerate-deepspeed-zero3-8xh100-hang-pyspy-main-idle-in-backward-engine-thread-in-"
        "all-gather-into-tensor-EXCERPT.txt"
    )
    text = fairseq.read_text().splitlines() + deepspeed.read_text().splitlines()
    stacks = read_stacks("job.log", list(enumerate(text, 1)))
    assert [s.kind for s in stacks] == ["data", "collective"]
    said = stacks_summary(stacks)
    assert said.startswith("the stacks: the process at job.log:1: MainThread waits for data")
    assert "not waiting in all_gather_into_tensor as 1 other dumped process(es) are" in said


def test_processes_in_different_collectives_are_said_so() -> None:
    send = (
        HANG / "sglang-pd-prefill-pp0-pyspy-main-blocked-in-c10d-send-send-tensor-dict-EXCERPT.txt"
    )
    gather = HANG / (
        "accelerate-deepspeed-zero3-8xh100-hang-pyspy-main-idle-in-backward-engine-thread-in-"
        "all-gather-into-tensor-EXCERPT.txt"
    )
    text = send.read_text().splitlines() + gather.read_text().splitlines()
    said = stacks_summary(read_stacks("job.log", list(enumerate(text, 1))))
    assert "wait in different calls (all_gather_into_tensor, send)" in said


def test_a_log_without_a_stack_has_none() -> None:
    path = (
        DATA
        / "nccl-logs"
        / "slurm-gcp-two-nodes-eth0-socket-init-then-hang-cause-not-shown-nccl2.7.8-EXCERPT.log"
    )
    assert read_stacks(str(path), list(enumerate(path.read_text().splitlines(), 1))) == []
