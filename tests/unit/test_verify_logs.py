"""`hpnet verify` on every real NCCL log under tests/data/nccl-logs.

Each expectation below is what the log's `.source.txt` says a maintainer concludes:
the transports that carried intra- and inter-node traffic, the findings (failure
signatures and structural conclusions), the NCCL versions, and how many hosts and
processes the log shows. A log that cannot prove something must not claim it: the
`status` is UNKNOWN where no connection line exists and nothing failed.
"""

from __future__ import annotations

import dataclasses

import pytest

from hpnet.ncclog.choice import choice_of
from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"


@dataclasses.dataclass(frozen=True, kw_only=True)
class C:
    status: str
    inter: set[str]
    intra: set[str]
    findings: set[str]
    versions: set[str]
    hosts: int
    processes: int
    #: findings that must NOT be reported (a wrong conclusion a naive tool would draw)
    not_findings: frozenset[str] = frozenset()
    #: words the verdict sentence must contain
    verdict_has: tuple[str, ...] = ()
    gdr: str | None = None  # the hosts' GDR state, where the log proves it


CASES: dict[str, C] = {
    # healthy over EFA, one NIC, the plugin turned GPUDirect RDMA off: a warning
    "eks-bionemo-esm2-2node-g5-efa-1nic-libfabric-no-gdr-sendrecv-healthy-nccl-2.25.1-"
    "EXCERPT.log": C(
        status="WARN",
        inter={"NET/Libfabric"},
        intra=set(),
        findings={"gdr-off"},
        versions={"2.25.1"},
        hosts=1,
        processes=1,
    ),
    "eks-mpijob-nccl-tests-allreduce-2node-16xa100-p4d-efa-aws-libfabric-gdrdma-4nic-healthy-"
    "nccl-2.9.9.log": C(
        status="PASS",
        inter={"NET/AWS Libfabric/GDRDMA"},
        intra={"P2P/IPC"},
        findings=set(),
        versions={"2.9.9"},
        hosts=2,
        processes=16,
        verdict_has=("NIC 0..3 on all 16 processes",),
    ),
    # the run trained; the network verdict is FAIL: sockets where EFA was asked for
    "eks-pytorchjob-esm2-ddp-4x1gpu-efa-requested-but-net-socket-gdr0-training-ran-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"socket-fallback"},
        not_findings=frozenset({"collective-timeout", "comm-aborted"}),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # sockets over eth0; the teardown's "socketProgressOpt: abort called" is no break
    "gcp-a3-gke-2node-16xh100-no-tcpx-ibext-no-device-socket-eth0-allreduce-busbw-28gbps-"
    "teardown-warns-r0-nccl-2.22.3.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/CUMEM", "NVLS"},
        findings={"socket-fallback"},
        not_findings=frozenset({"net-socket-error"}),
        versions={"2.22.3"},
        hosts=1,
        processes=1,
    ),
    # a healthy ring leg, then a CollNet-only leg with no SHARP aggregation manager
    "nccl-tests-b200-2node-ibext-ndr-8nic-gdrdma-ring-allreduce-239gbps-healthy-then-sharp-"
    "no-aggregation-manager-collnet-forced-invalid-usage-nccl-2.29.2.log": C(
        status="FAIL",
        inter={"NET/IBext_v11/GDRDMA", "CollNet/SHARP/GDRDMA"},
        intra={"P2P/direct pointer", "NVLS"},
        findings={"collnet-failed", "no-algorithm-available", "env-algo-forced"},
        versions={"2.29.2"},
        hosts=3,
        processes=5,
        verdict_has=("in-network reduction (CollNet / SHARP) could not be set up",),
    ),
    "tensorrt-llm-mpirun-tp4-h100-llama70b-enqueue-no-algorithm-protocol-available-"
    "nccl-2.18-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"no-algorithm-available", "error-trail"},
        not_findings=frozenset({"net-socket-error", "collective-timeout"}),
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "polaris-slingshot-aws-ofi-nccl-1.21.1-v11-no-eligible-providers-failed-to-initialize-"
    "any-net-plugin-nccl-2.28.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"no-net-plugin", "ofi-plugin-error"},
        versions={"2.28.3"},
        hosts=2,
        processes=2,
        verdict_has=("no network module could be initialised",),
    ),
    # the garbage /dev/shm name of size 0 is a peer's cuMem host handle: that leads
    "easyr1-verl-ray-workerdict-2gpu-shm-attach-garbage-name-cumem-host-fallback-mismatch-"
    "EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"shm-cumem-host-disagree", "shm-setup-failed"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("disagree on how to share host memory",),
    ),
    "sglang-2node-h100-deepseek-v3-roce-ib-completion-error-12-retry-exceeded-hang-"
    "nccl-2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded", "completion-error", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("retry count exceeded",),
    ),
    "verifiers-vf-vllm-weight-sync-pynccl-init-p2p-legacy-ipc-open-invalid-argument-"
    "nccl-2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"p2p-setup-failed", "cuda-failure", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # init lines only: RoCE over net2 chosen; what failed is not in the excerpt
    "kubevirt-vm-net2-roce-nccl-2.22.3-init-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions={"2.22.3"},
        hosts=1,
        processes=1,
        verdict_has=("mlx5_0:1 (RoCE)",),
    ),
    "mmengine-deepspeed-zero2-bf16-syncbuffers-allreduce-nccl-warn-cuda-misaligned-address-"
    "enqueue-1087-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure"},
        not_findings=frozenset({"collective-timeout", "net-socket-error"}),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "sglang-deepseek-r1-two-instances-sigsegv-saveproxy-hoststreamcallback-faulthandler-"
    "nccl-2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        not_findings=frozenset({"collective-timeout", "net-socket-error"}),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # one process: its redacted prefix "NAME :70918" (a space before the pid) reads as a
    # host-less process beside "NAME:70918" (a known gap: two processes here)
    "nccl-tests-2.21.5-single-gpu-lo-hang-socket-closed-by-localhost-in-accept-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"net-socket-error", "error-trail", "socket-local-interfaces"},
        versions={"2.21.5"},
        hosts=2,
        processes=2,
    ),
    "sglang-deepseek-r1-2node-h100-tp16-ibext-allreduce-watchdog-600s-with-nccl-info-"
    "EXCERPT.log": C(
        status="FAIL",
        inter={"NET/IBext_v8/GDRDMA"},
        intra={"P2P/IPC"},
        findings={"collective-timeout"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    # its "Connection closed by remote peer" is its own proxy's close after the proxy failed
    "composer-2node-4090-socket-proxy-connect-closed-nccl-2.14.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"proxy-connect-failed", "comm-aborted"},
        not_findings=frozenset({"net-socket-error"}),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # one node (nNodes 1): the OFI plugin that gave up cost this job nothing; not a FAIL
    "deepspeed-p4d-efa-ofi-plugin-init-failed-socket-fallback-single-node-nccl-2.27.7.log": C(
        status="WARN",
        inter=set(),
        intra={"P2P/CUMEM"},
        findings={"ofi-plugin-error", "env-ib-disabled"},
        versions={"2.27.7"},
        hosts=1,
        processes=4,
        verdict_has=("NET/Socket over ens32",),
    ),
    "gpt-neox-2node-socket-recv-connection-refused-nccl-2.14.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"connection-refused", "p2p-disabled-pcie"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # 2.23+: an async fatal event on a QP fails the communicator's next call
    "nccl-tests-alltoall-2node-h100-ib-async-fatal-qp-invalid-request-nccl-2.25.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"ib-async-event"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "torchrun-nccl-net-shm-forced-failed-to-initialize-any-net-plugin-nccl-2.28.9.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"no-net-plugin", "invalid-usage", "launcher-reported-failure"},
        versions={"2.28.9"},
        hosts=1,
        processes=3,
    ),
    "trtllm-allreduce-culaunchkernelex-invalid-argument-enqueue1500-both-ranks-"
    "nccl2.25.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "trtllm-nccl-symmetric-allreduce-segfault-in-ncclcommwindowregister-b200-tp2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "vllm-p2p-nccl-connector-segfault-in-cumemcreate-cumem-host-numa-probe-comminitrank-"
    "rtx3080-nccl2.27.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "slurm-mid-run-scalar-allreduce-seq7487-watchdog-timeout-nothing-enqueued-after-"
    "torch2.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"collective-timeout", "watchdog-teardown"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "slurm-single-node-4gpu-broadcast-seqnum1-watchdog-timeout-per-process-blocks-"
    "interleaved-nccl2.21-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"collective-timeout"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "vllm-ray-llmengine-nested-rayworker-init-allreduce-proxy-call-to-peer-failed-"
    "connect-ncclinternalerror-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "proxy-connect-failed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "ray-vllm-rayworkervllm-allreduce-topo-xml-attribute-busid-of-node-nic-not-found-"
    "nccl2.18.6-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "topology-xml-attribute"},
        versions={"2.18.6"},
        hosts=0,
        processes=0,
    ),
    "ray-vllm-32rank-two-nodes-ib-init-interleaved-split-lines-no-error-shown-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra={"P2P/IPC"},
        findings=set(),
        versions=set(),
        hosts=3,
        processes=4,
    ),
    "horovod-mpirun-tag-output-wsl2-two-ranks-pci-bus-realpath-fail-same-busid-nccl2.9.9-"
    "EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "topology-no-pci-sysfs"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "horovod-mpirun-tag-output-two-hosts-shm-cudahostregister-invalid-argument-nccl2.4.2-"
    "EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"SHM/direct shared memory"},
        findings={"cuda-failure", "shm-setup-failed", "socket-fallback"},
        versions=set(),
        hosts=2,
        processes=6,
    ),
    "h200-nvls-multicast-bind-cuda-error-2-out-of-memory-fabric-slots-exhausted-many-"
    "subcomms-nccl2.29.7-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "nvls-failed"},
        versions={"2.29.7"},
        hosts=0,
        processes=0,
    ),
    "b200-8gpu-torchrun-barrier-cuda-failure-802-system-not-yet-initialized-no-nccl-"
    "debug-nccl2.25.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "cuda-system-not-ready"},
        versions={"2.25.1"},
        hosts=0,
        processes=0,
    ),
    "bootstrap-iface-list-virbr0-and-14-veth-linklocal-roce-oob-enp7s0-failure-not-shown-"
    "nccl2.5-2.7-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "three-node-ipoib-bond-socket-bootstrap-init-hang-over-8-gpus-no-error-lines-nccl2.8-"
    "2.12-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled"},
        versions=set(),
        hosts=3,
        processes=10,
    ),
    "stale-file-init-root-address-not-in-job-connect-refused-retrying-bootstrap-"
    "nccl2.4.8-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"retried-calls"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "k8s-pod-bootstrap-root-on-lo-127.0.0.1-first-interface-ifname-includes-lo-nccl2.4.2-"
    "2.4.7-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-v100-pcie-recv-net-ib-no-gdrdma-p2p-ipc-and-shm-intranode-gdr-read-off-"
    "nccl2.5.7-EXCERPT.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra={"P2P/IPC", "SHM/direct shared memory"},
        findings={"gdr-off"},
        versions={"2.5.7"},
        hosts=1,
        processes=1,
    ),
    "mi300x-gfx942-device-linker-build-lds-ncclmaxsharedmem-32832-exceeds-32768-init-"
    "system-error-rccl-develop-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "nccl-tests-failure", "shared-mem-exceeds-gpu", "system-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "docker-gfx1100-p2p-ipc-open-invalid-device-pointer-host-amdgpu-dkms-missing-rccl2.17.1.log": C(
        status="FAIL",
        inter=set(),
        intra={"P2P/IPC"},
        findings={"comm-aborted", "cuda-failure", "no-rdma-device", "p2p-setup-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "roce-bnxt-ucx-plugin-gdr-regmr-rcache-insert-region-0x0-invalid-parameter-"
    "rccl2.18.3-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/UCX/GDRDMA"},
        intra=set(),
        findings={
            "init-incomplete",
            "internal-error",
            "launcher-reported-failure",
            "nccl-failure",
            "nccl-tests-failure",
            "net-socket-error",
            "proxy-connect-failed",
            "rccl-iommu-not-passthrough",
        },
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "k8s-pod-dev-shm-full-second-comm-shm-recv-segment-create-fail-deepspeed-nccl2.7.8-"
    "EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "shm-exhausted", "system-error"},
        versions={"2.7.8"},
        hosts=1,
        processes=1,
    ),
    "azure-aml-hpcx-ibext-plugin-no-ib-device-ib-disabled-silent-socket-fallback-"
    "nccl2.17.1-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "aws-p4d-ofi-plugin-test-efa-provider-not-found-fi-getinfo-enodata-nccl2.10.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"ofi-plugin-error"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "nccl-tests-two-a100-nodes-gdr-level5-proxy-net-fail-then-illegal-access-in-commfree-"
    "nccl2.10.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "cuda-failure",
            "cuda-illegal-address",
            "error-trail",
            "nccl-tests-failure",
            "net-socket-error",
        },
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "vllm-b200-deepseek-r1-tp-comm-init-cuda-driver-out-of-memory-last-error-only-"
    "nccl2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "cuda-failure",
            "cuda-out-of-memory",
            "nccl-known-bug-ras-report-during-init-crash",
            "nccl-known-bug-ras-status-memory-corruption",
        },
        versions={"2.26.2"},
        hosts=0,
        processes=0,
    ),
    "megatron-ngc-interleaved-tracebacks-duplicate-gpu-busid-e2000-barrier-last-error-"
    "only-nccl2.17.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"duplicate-gpu", "invalid-usage"},
        versions={"2.17.1"},
        hosts=0,
        processes=0,
    ),
    "pytorch-ddp-intranode-proxy-service-drops-conn-after-local-peer-systemerror-"
    "socketprogress-closed-by-remote-peer-p2p-setup-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        # 7991's proxy dropped rank 2's connection after its own ncclSystemError (line 1)
        findings={"error-trail", "net-socket-error", "proxy-failed", "proxy-connect-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "megatron-2node-proxy-service-cuda-invalid-argument-during-connect-closes-proxy-"
    "connection-nccl2.18.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "other-warnings", "proxy-connect-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "lightning-ddp-net-connection-closed-by-remote-peer-hostname-only-internal-error-"
    "peer-rank-unknown-nccl2.14.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "net-socket-error"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "h200-megatron-zero-bubble-pp-batch-isend-irecv-net-socket-message-truncated-sender-"
    "4-bytes-receiver-2-peer-10.0.5.194-nccl2.20.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"other-warnings", "socket-size-mismatch"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "two-node-torchrun-both-ranks-same-host-same-busid-86000-nccl-abort-at-ddp-init-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-aborted", "ranks-share-a-gpu"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "nccl-tests-two-node-a100-hang-plugin-load-ranokau-lascar-nccl2.21-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "gb10-roce-gdr0-allreduce-30min-stall-then-sigsegv-in-nccllocalopappend-desync-"
    "report-blames-peer-nccl2.28.9-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"collective-timeout", "process-crashed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "deepspeed-two-node-sharp-plugin-ib-retry-exceeded-error12-vendor129-peer-"
    "unreachable-nccl2.14.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded", "error-trail", "system-error", "watchdog-teardown"},
        versions={"2.14.3"},
        hosts=1,
        processes=4,
    ),
    "vllm-pynccl-init-cudamempoolcreate-operation-not-supported-unhandled-cuda-error-"
    "nccl2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-not-supported", "error-trail"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "vllm-k8s-ib-pod-nccl-preinit-lines-only-gpu-rdma-failure-not-shown-nccl2.28.9-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"nccl-known-bug-ras-status-memory-corruption"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
    ),
    "torch-ep-subgroup-duplicate-gpu-detected-same-busid-invalid-usage-nccl2.26.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "duplicate-gpu",
            "invalid-usage",
            "nccl-known-bug-ras-report-during-init-crash",
            "nccl-known-bug-ras-status-memory-corruption",
        },
        versions={"2.26.5"},
        hosts=0,
        processes=0,
    ),
    "shm-direct-enqueue-kernel-launch-cuda-out-of-memory-4gpu-no-p2p-nccl2.18-2.19-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"cuda-out-of-memory", "intra-node-shm-only"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "sglang-pd-multinode-ib-init-healthy-gin-ib-gdaki-kvtransfer-cause-not-shown-"
    "nccl2.28-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "nvswitch-nvls-cumulticastbindmem-invalid-argument-h800-8gpu-fabricmanager-"
    "nccl2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail", "nvls-setup-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "k8s-disagg-prefill-pod-two-ranks-same-busid-duplicate-gpu-net-socket-nccl2.27-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"init-incomplete", "no-rdma-device", "ranks-share-a-gpu"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "eks-ray-vllm-pp-no-rdma-silent-net-socket-fallback-p2p-disabled-hang-nccl2.21.5-"
    "EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "p2p-disabled-pcie"},
        versions={"2.21.5"},
        hosts=2,
        processes=2,
    ),
    "docker-ib-mlx5-init-ib-selected-ibv-create-qp-warn-not-in-lines-nccl2.7.8-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions={"2.7.8"},
        hosts=1,
        processes=4,
    ),
    "docker-dev-shm-full-shmutils-failed-to-extend-no-space-left-3gpu-single-process-"
    "nccl2.25.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "shm-exhausted"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "docker-bridge-trtllm-ipc-peer-access-unsupported-nccl-init-only-no-warn-nccl2.19.3-"
    "EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device"},
        versions={"2.19.3"},
        hosts=1,
        processes=2,
    ),
    "azure-h100-deepspeed-no-libibverbs-net-socket-adds-enp-vf-ipv6-linklocal-"
    "socketstartconnect-abort-nccl2.21.5-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions={"2.21.5"},
        hosts=1,
        processes=1,
    ),
    (
        "two-container-ib-gdr-disabled-no-module-both-hosts-multi-comm-hang-line-format-nccl-le-"
        "2.11-not-2.14.3-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-disabled-hca", "gdr-off"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "rdna4-r9700-vllm-ray-multinode-socket-only-no-ibverbs-rccl-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "rdna3-gfx1100-p2p-hipipcgetmemhandle-invalid-argument-rccl2.22.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail", "p2p-setup-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "rdna3-7900xtx-therock-cumem-requires-vmm-rdma-zero-ib-devices-rccl2.30.4-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"other-warnings"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "nccl-tests-two-node-a100-mixed-nccl-versions-2.22.3-vs-2.19-2.20-plugin-message-format-"
        "EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"mixed-nccl-versions"},
        versions={"2.22.3"},
        hosts=2,
        processes=2,
    ),
    "mi50-gfx906-rccl-tests-mscclpp-not-compatible-init-complete-4gpu-rccl2.21.5-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"other-warnings"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "two-host-tcp-init-socket-ring-root-side-only-no-init-complete-shown-nccl2.4.2-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"init-incomplete", "libibverbs-missing", "socket-fallback"},
        versions={"2.4.2"},
        hosts=1,
        processes=1,
    ),
    (
        "torchrun-one-rank-cuinit-fails-cumem-probe-cudawrap-initialization-error-3-nccl2.20.x-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"cuda-failure"},
        versions=set(),
        hosts=1,
        processes=3,
    ),
    (
        "torch-multinode-lazy-init-bootstrap-root-connect-poll-no-pollout-second-node-ranks-"
        "nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    (
        "rtx4090-nccl-tests-kernel-init-cudafuncgetattributes-named-symbol-not-found-nccl2.21.5-"
        "cuda11.8-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-no-kernel-for-gpu"},
        versions={"2.21.5"},
        hosts=1,
        processes=1,
    ),
    (
        "h100-nvls-cumulticastbindmem-invalid-argument-8gpu-single-process-driver550-nccl2.26.2-"
        "2.26.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail", "nvls-setup-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "docker-bridge-same-ip-172-17-0-2-on-both-hosts-socket-transport-nccl2.4.8-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions={"2.4.8"},
        hosts=1,
        processes=6,
    ),
    (
        "mpirun-docker-ib-ncclcomminitrank-last-net-ib-connect-then-process-nonzero-exit-sigbus-"
        "title-nccl2.13.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-off", "launcher-reported-failure"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "azureml-hpcx-ibext-plugin-no-ib-device-ib-disabled-by-env-socket-eth0-nccl2.10.3-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled"},
        versions={"2.10.3"},
        hosts=1,
        processes=1,
    ),
    "xgbe0-host-getcudapath-realpath-sys-pci-bus-fail-setcpuaffinity-nccl2.4.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled", "topology-no-pci-sysfs"},
        versions={"2.4.2"},
        hosts=1,
        processes=2,
    ),
    (
        "aws-sagemaker-p4d-ofi-plugin-1.5.0-efa-selected-init-ok-smddp-error-not-in-lines-"
        "nccl2.19plus-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "roce-mlx5-bond-9-hca-megatron-hang-no-nccl-error-init-lines-only-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=5,
    ),
    "docker-shm-recv-setup-shmopen-fail-warn-not-pasted-8gpu-v100-nccl2.8.3-2.8.4-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "azure-nc-a100-v4-mlx5-an0-roce-ib-selected-init-start-then-unhandled-system-error-not-"
        "shown-nccl2.18.6-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions={"2.18.6"},
        hosts=1,
        processes=1,
    ),
    "aws-p4d-efa-16-node-init-hang-plugin-loaded-no-warn-shown-nccl2.9-2.10-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=3,
        processes=5,
    ),
    (
        "vm-qemu-x3130-switch-pcie-root-link-x1-2.5gts-pci0.2-topology-h200-nccl2.24plus-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "netsocket-connect-peer-ipv6-linklocal-fe80-network-unreachable-no-socket-ifname-"
        "nccl2.7.8-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/IPC"},
        findings={"socket-failed", "socket-fallback"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "ray-vllm-weight-broadcast-ib-plugin-ibv-modify-qp-etimedout-openrlhf-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"modify-qp-etimedout"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "azure-ncv4-hyperv-vmbus-nic-not-pci-topo-file-injected-failure-not-shown-nccl2.18.5-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions={"2.18.5"},
        hosts=1,
        processes=1,
    ),
    (
        "net-socket-gdr-disabled-benign-hgx-nvswitch-4gpu-hang-cause-not-shown-nccl2.18-2.19-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=3,
    ),
    "t4-pcie-nccl-p2p-disable-forces-p2p-level-loc-socket-only-nccl2.8.3-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"env-p2p-disabled", "libibverbs-missing", "no-rdma-device"},
        versions={"2.8.3"},
        hosts=1,
        processes=1,
    ),
    "sriov-pod-proxy-call-connect-failed-root-warn-missing-ddp-init-nccl2.12.12-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "proxy-connect-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "pcie-8gpu-intel-p2p-within-switch-only-shm-across-switch-and-socket-nccl2.9-2.12-"
        "EXCERPT.log"
    ): C(
        status="PASS",
        inter=set(),
        intra={"P2P/direct pointer", "SHM/direct shared memory"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "nvswitch-node-all-intranode-rings-via-shm-no-p2p-two-channels-nccl2.14-2.18-EXCERPT.log": C(
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"intra-node-shm-only"},
        versions=set(),
        hosts=1,
        processes=8,
    ),
    "mpijob-pods-ib-send-connect-regmr-failed-no-gdr-ring-nccl2.4.6-2.4.7-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/IB"},
        intra={"P2P/IPC"},
        findings={"error-trail", "gdr-off"},
        versions=set(),
        hosts=2,
        processes=4,
    ),
    "k8s-eight-single-gpu-pods-one-node-single-mlx5-ib-hca-shared-nccl2.19-2.20-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"ib-hca-prefix"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "container-hpcx-ibext-and-internal-ib-no-device-socket-eth0-single-node-tp-"
        "nccl2.19plus-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device"},
        versions=set(),
        hosts=1,
        processes=3,
    ),
    (
        "a6000-multinode-no-libibverbs-net-socket-tcp-only-slower-than-single-node-nccl2.10.3-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions={"2.10.3"},
        hosts=1,
        processes=2,
    ),
    "dynamo-vllm-disagg-multinode-hang-ib-gin-gdaki-startup-no-warn-nccl2.28.9-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"nccl-known-bug-ras-status-memory-corruption"},
        versions={"2.28.9"},
        hosts=1,
        processes=1,
    ),
    (
        "tf-hybridbackend-4rank-comm-aborted-then-allgather-on-freed-comm-invalid-root-0-range-"
        "minus1-nccl2.12.10-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-aborted", "comm-used-after-destroy", "error-trail", "system-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "rtx5090-ddp-kernel-launch-cuda-700-illegal-address-both-processes-terminate-c10-error-"
        "interleaved-nccl2.26.2-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-illegal-address", "error-trail"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "pdsh-deepspeed-prefixed-two-node-ib-no-gdrdma-hang-cause-not-shown-nccl2.14-2.15-"
        "EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-off"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    (
        "openmpi-tag-output-indented-eks-mpijob-p3-2xlarge-via-net-socket-no-efa-nccl2.18-"
        "EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"init-incomplete", "socket-fallback"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    (
        "mi250-rccl-init-segfault-after-affinity-faulthandler-barrier-torchrun-exitcode-11-"
        "srun-prefix-rccl-unknown-version-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "k8s-openmpi-sigsegv-si-tkill-reraised-libc-under-libnccl-tuning-cost-model-init-"
        "unreleased-nccl-master-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    (
        "jax-flax-nnx-2gpu-first-train-step-ncclallreduce-invalid-argument-empty-last-warning-"
        "no-nccl-warn-version-not-shown-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"nccl-failure"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    (
        "horovod-tf1-net-socket-ring-send-connect-etimedout-peer-unreachable-comminitrank-"
        "unhandled-system-error-nccl2.3.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "socket-failed", "system-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "docker-sigbus-nccl-proxy-thread-after-p2p-ipc-setup-ucx-caught-signal-7-nccl2.17-2.18-"
        "EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra={"P2P/IPC"},
        findings={"process-crashed"},
        versions=set(),
        hosts=1,
        processes=6,
    ),
    (
        "deepspeed-runtime-sigbus-after-11h-nccl-thread-memcpy-ucx-signal-7-launcher-kills-"
        "rest-nccl-unknown-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    (
        "torchrun-4gpu-shm-cudahostregister-invalid-argument-dev-shm-64mb-sparse-ftruncate-"
        "prefix-stripped-nccl2.16-2.17-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "shm-exhausted", "shm-setup-failed"},
        versions=set(),
        hosts=1,
        processes=3,
    ),
    (
        "roce-intel-irdma-hpcx-ibext-v8-plugin-init-only-modify-qp-timeout-not-in-excerpt-"
        "nccl2.21.5-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions={"2.21.5"},
        hosts=2,
        processes=2,
    ),
    (
        "roce-h800-gdr-gid-index-3-mtu-1024-init-complete-failing-send-not-in-excerpt-"
        "nccl2.18.3-2.18.6-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=2,
        processes=2,
    ),
    (
        "ray-actor-per-gpu-p2p-ipc-channel-then-p2p-cc-238-warn-cut-off-failure-not-in-excerpt-"
        "nccl2.7.x-EXCERPT.log"
    ): C(
        status="WARN",
        inter=set(),
        intra={"P2P/IPC"},
        findings={"no-rdma-device", "socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "dual-rtx5090-sm120-p2p-disabled-ncclmaxsharedmem-82240-exceeds-79856-init-only-"
        "nccl2.25.1-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "shared-mem-exceeds-gpu"},
        versions={"2.25.1"},
        hosts=1,
        processes=2,
    ),
    (
        "docker-2xt4-nccl-tests-single-process-hpcx-ibext-socket-init-start-internal-error-not-"
        "in-excerpt-nccl2.18.3-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete", "no-rdma-device"},
        versions={"2.18.3"},
        hosts=1,
        processes=1,
    ),
    (
        "container-16xa100-single-process-bus-error-after-init-p2p-direct-read-no-warn-nccl-"
        "version-not-shown.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra={"P2P/direct pointer"},
        findings={"process-crashed"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("killed by a signal",),
        not_findings=frozenset({"nccl-failure"}),
    ),
    (
        "collnet-sharp-plugin-sat-streaming-tree-lock-failed-minus18-training-job-nccl2.21.5-"
        "EXCERPT.log"
    ): C(
        status="WARN",
        inter={"CollNet/SHARP/GDRDMA"},
        intra=set(),
        findings={"collnet-failed"},
        versions=set(),
        hosts=1,
        processes=2,
        # transport.cc:327 is 2.21.5's ncclTransportCollNetSetup: it returns a flag, and
        # NCCL goes on without CollNet
        not_findings=frozenset({"error-trail"}),
    ),
    "slurm-gcp-two-nodes-eth0-socket-init-then-hang-cause-not-shown-nccl2.7.8-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device"},
        versions={"2.7.8"},
        hosts=2,
        processes=2,
    ),
    (
        "kubeflow-fairseq-worker-pod-connect-refused-retry-loop-target-not-printed-nccl2.4-"
        "EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"retried-calls"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "k8s-two-containers-cumem-p2p-sender-init-only-socket-2ranks-failure-not-in-excerpt-"
        "nccl2.26.2-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={
            "init-incomplete",
            "libibverbs-missing",
            "nccl-known-bug-ras-report-during-init-crash",
            "nccl-known-bug-ras-status-memory-corruption",
            "no-rdma-device",
        },
        versions={"2.26.2"},
        hosts=1,
        processes=1,
    ),
    (
        "horovod-docker-two-hosts-asymmetric-socket-ifaces-vlan-subnets-ipv6-linklocal-hang-"
        "nccl2.3.7.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete", "libibverbs-missing", "no-rdma-device", "socket-link-local"},
        versions={"2.3.7"},
        hosts=2,
        processes=2,
        # the VLAN interfaces are routed addresses: only the fe80:: ones are named
        not_findings=frozenset({"socket-local-interfaces"}),
    ),
    (
        "collnet-sharp-4node-2gpu-init-reaches-collnet-connect-hang-or-fallback-cause-not-"
        "shown-nccl2.20-plus-EXCERPT.log"
    ): C(
        status="PASS",
        inter={"CollNet/SHARP/GDRDMA"},
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=4,
        processes=8,
    ),
    (
        "azure-ncv4-single-gpu-injected-graph-file-xml-import-channel-dev1-not-found-socket-"
        "nccl2.19.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled", "error-trail", "graph-file-mismatch", "init-incomplete"},
        versions={"2.19.3"},
        hosts=1,
        processes=1,
        verdict_has=("graph file",),
    ),
    (
        "aws-g5-ofi-plugin-init-failed-no-ib-socket-fallback-lo-eth0-container-awsofi1.4.0aws-"
        "EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "ofi-plugin-error", "socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "aws-efa-libfabric-mr-reg-enomem-rx-pkt-pool-grow-eq-write-abort-rxr-two-procs-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"memlock", "nccl-failure"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    (
        "torch-watchdog-allreduce-timeout-mid-run-no-nccl-warn-service-thread-closures-"
        "two-node-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"comm-aborted"},
        versions=set(),
        hosts=1,
        processes=5,
    ),
    (
        "socket-proxy-connection-closed-by-remote-peer-after-peer-watchdog-abort-"
        "torchrun-nccl2.14-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "net-socket-error", "watchdog-teardown"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("watchdog",),
    ),
    (
        "horovod-two-node-bootstrap-connect-refused-lo-listed-first-socket-if-nccl2.2-"
        "2.3-era-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "connection-refused",
            "error-trail",
            "init-incomplete",
            "socket-local-interfaces",
        },
        versions=set(),
        hosts=2,
        processes=3,
    ),
    (
        "horovod-two-container-socket-if-lo-and-eth0-different-subnets-init-no-error-"
        "line-nccl2.2-2.3-era-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions=set(),
        hosts=2,
        processes=4,
    ),
    "vllm-ray-soft-roce-rxe0-no-pci-path-then-crash-nccl2.20.5-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"other-warnings", "soft-roce-device"},
        versions={"2.20.5"},
        hosts=1,
        processes=1,
    ),
    (
        "torch-megatron-ncclcomminitrankconfig-invalid-config-blocking-int-min-header-"
        "newer-than-lib-nccl2.14-2.15-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"nccl-config-header-newer-than-library"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("newer nccl.h than the libnccl",),
        not_findings=frozenset({"other-warnings"}),
    ),
    (
        "slurm-ib-gdr-flush-rdma-read-remote-op-error-status11-vendor137-mlx5-cqe-dump-"
        "nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/IB/GDRDMA"},
        intra=set(),
        findings={"completion-error", "error-trail"},
        versions=set(),
        hosts=2,
        processes=3,
    ),
    (
        "slingshot-cxi-no-default-rgroup-vni-fi-domain-enosys-aws-ofi-nccl1.6.0-nccl2.20-"
        "2.22-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cxi-no-service", "init-incomplete"},
        versions=set(),
        hosts=1,
        processes=2,
        verdict_has=("no CXI service",),
        not_findings=frozenset({"ranks-share-a-gpu", "nccl-failure"}),
    ),
    (
        "omnipath-psm2-aws-ofi-nccl-unit-test-no-gdr-provider-no-nic-info-hfi1-pair-"
        "failure-line-cut-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "wsl2-vllm-tp-shm-segment-create-unhandled-cuda-error-cudahostregister-"
        "nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "shm-cuda-register-failed"},
        versions={"2.20.5"},
        hosts=0,
        processes=0,
        verdict_has=("CUDA could not register it",),
        not_findings=frozenset({"shm-exhausted"}),
    ),
    (
        "vllm-tp2-ncclcommregister-20mib-then-symmetric-allreduce-rsxld-agxst-no-error-"
        "in-excerpt-nccl2.28.3-or-later-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "torchrun-8gpu-bootstrap-lo-could-not-enable-p2p-pairs-shm-fallback-barrier-hang-"
        "nccl2.10.3-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "socket-local-interfaces"},
        versions={"2.10.3"},
        hosts=1,
        processes=2,
    ),
    (
        "rtx4090x4-epyc-p2p-ipc-proxy-connect-trace-then-hang-cause-not-shown-nccl2.14-"
        "2.17-EXCERPT.log"
    ): C(
        status="PASS",
        inter=set(),
        intra={"P2P/IPC"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
    ),
    (
        "roce-two-hosts-cqe-retry-exc-err-12-vendor129-both-ends-same-qp-pair-commshrink-"
        "test-nccl2.30.3-2.30.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded", "ib-failed"},
        versions=set(),
        hosts=2,
        processes=2,
        verdict_has=("retry count exceeded",),
    ),
    (
        "rccl-mi350x-second-process-disjoint-gpus-hipipcgetmemhandle-invalid-argument-"
        "uncached-alloc-rccl2.27.7.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "p2p-setup-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "rccl-mi250x-slingshot-net-socket-hsn-proxy-connect-systemerror-p2p-level-xgmi-"
        "rccl2.16.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/IPC"},
        findings={"comm-aborted", "proxy-connect-failed", "socket-fallback"},
        not_findings=frozenset({"net-socket-error"}),  # the "remote peer" is its own proxy
        versions=set(),
        hosts=2,
        processes=8,
    ),
    "rccl-mi250x-crusher-2node-net-socket-init-complete-then-ddp-hang-no-error-rccl2.10.3.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"socket-fallback"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "rccl-2xmi100-pcie-p2p-iommu-not-passthrough-all-reduce-perf-hang-mid-init-rccl2.18.3.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={
            "init-incomplete",
            "libibverbs-missing",
            "no-rdma-device",
            "rccl-iommu-not-passthrough",
        },
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "ray-sm120-enqueue-cudafuncgetattributes-named-symbol-not-found-warn-from-other-"
        "pid-than-version-line-nccl2.27.3-2.27.6.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-no-kernel-for-gpu", "nccl-known-bug-ras-status-memory-corruption"},
        versions={"2.27.5"},
        hosts=1,
        processes=2,
    ),
    (
        "gb200-nvl72-ray-collective-44-ranks-mnnvl-on-launch-log-ends-before-crash-nccl-"
        "version-line-cut-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "docker-2gpu-no-libibverbs-ib-plugin-init-fails-socket-chosen-init-start-no-nccl-"
        "error-torch-symm-mem-nccl2.28.9-cuda13.0-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={
            "init-incomplete",
            "libibverbs-missing",
            "nccl-known-bug-ras-status-memory-corruption",
            "no-rdma-device",
        },
        versions={"2.28.9"},
        hosts=1,
        processes=1,
    ),
    (
        "tf-multiworker-net-ib-collective-mismatch-sender-348160-receiver-32768-same-seq-"
        "proxy-thread-stall-nccl2.4.7-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "ib-collective-mismatch"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("not in the same collective",),
    ),
    "tencent-cloud-vllm-two-node-pynccl-init-hang-stage-not-shown-nccl2.20.5-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-ibv-modify-qp-rtr-connection-timed-out-gid-index-3-bond0-nccl2.15-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "modify-qp-etimedout", "proxy-connect-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "paddle2.0beta-init-parallel-env-createncclcomm-unhandled-cuda-error-no-nccl-"
        "debug-cause-unknown-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure"},
        versions=set(),
        hosts=0,
        processes=0,
        verdict_has=("CUDA call failed",),
    ),
    (
        "k8s-pod-vllm-ray-hpcx-rdma-plugin-v5-loaded-but-network-socket-second-comm-slow-"
        "start-nccl2.1x-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "k8s-pod-no-libibverbs-veth-eth0-no-pci-path-soc-socket-intranode-byteps-"
        "nccl2.3.7-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete", "libibverbs-missing", "no-rdma-device"},
        versions={"2.3.7"},
        hosts=1,
        processes=4,
        not_findings=frozenset({"mixed-nccl-versions"}),
    ),
    (
        "k8s-pod-lmdeploy-single-process-tp4-threads-no-libibverbs-socket-error-not-"
        "shown-nccl2.21.5-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions={"2.21.5"},
        hosts=2,
        processes=2,
    ),
    (
        "k8s-gh200-network-operator-nccl-tests-two-pods-bootstrap-on-pod-eth0-error-not-"
        "shown-nccl2.22.3-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions={"2.22.3"},
        hosts=2,
        processes=2,
    ),
    (
        "jax-xla-nccl-library-not-loadable-ncclgetuniqueid-failed-intercepted-runtime-"
        "error-no-nccl-debug-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"nccl-library-not-loaded"},
        versions=set(),
        hosts=0,
        processes=0,
        verdict_has=("could not load the NCCL library",),
    ),
    (
        "horovod-tf-allreduce-on-destroyed-comm-invalid-root-range-minus-1-already-"
        "destroyed-mpirun-tags-nccl2.13.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-used-after-destroy", "error-trail"},
        versions=set(),
        hosts=1,
        processes=2,
        verdict_has=("already destroyed",),
    ),
    (
        "deepspeed-comm-broadcast-pipeline-engine-shm-segment-create-failed-5767520-last-"
        "error-only-nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"shm-exhausted", "system-error"},
        versions={"2.20.5"},
        hosts=0,
        processes=0,
    ),
    (
        "container-bootstrap-picks-ip6tnl0-ipv6-linklocal-tunnel-before-veth0-ib-"
        "disabled-timeouts-nccl2.5.6-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"env-ib-disabled"},
        versions={"2.5.6"},
        hosts=1,
        processes=2,
        not_findings=frozenset({"socket-local-interfaces"}),
    ),
    (
        "vllm-tp2-cuda-graph-capture-strongstream-invalid-usage-nccl-built-cuda-lt-11.3-"
        "or-driver-lt-r465-nccl2.20-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "graph-capture-unsupported", "invalid-usage"},
        versions=set(),
        hosts=1,
        processes=2,
        verdict_has=("cannot run inside a CUDA graph capture",),
        not_findings=frozenset({"cuda-call-failed"}),
    ),
    (
        "trtllm-triton-8xv100-nccl-kernel-init-cudafuncgetattributes-out-of-memory-then-"
        "invalid-resource-handle-nccl2.19.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "cuda-out-of-memory"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "torch-distbackenderror-net-ofi-request-undeliverable-rc113-hpe-lustre-host-"
        "nccl2.28.8-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "efa-completion-error",
            "nccl-known-bug-ras-status-memory-corruption",
            "remote-error",
        },
        versions={"2.28.8"},
        hosts=0,
        processes=0,
        verdict_has=("libfabric completion error",),
    ),
    (
        "roce-mlx5-plus-intel-i40iw-iwarp-listed-as-roce-init-only-no-gdr-torch-nccl2.8-"
        "2.11-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-off", "iwarp-device-listed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "mpirun-tagged-horovod-roce-ib-listen-socket-create-eafnosupport-init-abort-"
        "nccl2.4.2-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/IPC"},
        findings={"error-trail", "socket-family-unsupported"},
        versions=set(),
        hosts=2,
        processes=8,
        verdict_has=("address family is not supported",),
        not_findings=frozenset({"socket-failed"}),
    ),
    "mpirun-tagged-horovod-aws-net-socket-ena-2x8-sockets-training-hang-no-warn-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"NET/Socket"},
        findings={"net-inside-node", "socket-fallback"},
        versions=set(),
        hosts=2,
        processes=4,
    ),
    (
        "l40s-10gpu-single-process-ncclmemalloc-cumemsetaccess-peer-mapping-resources-"
        "exhausted-711-p2p-disable-no-effect-nccl2.27-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-too-many-peers"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("refused another peer mapping",),
        not_findings=frozenset({"cuda-failure"}),
    ),
    (
        "kvm-vm-ib-sriov-nccl-ib-hca-mlx5_1-no-device-found-socket-fallback-ipoib-pkey-"
        "children-nccl2.17.1.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"ib-hca-matched-nothing", "no-rdma-device"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "ib-gdr-disabled-by-distance-node-3-ge-phb-2-staged-through-host-nccl2.4.7-EXCERPT.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra={"P2P/IPC"},
        findings={"gdr-off"},
        versions=set(),
        hosts=2,
        processes=8,
    ),
    (
        "ib-2node-1gpu-each-gdrdma-forced-at-phb-distance-6-le-sys-7-two-channels-large-"
        "size-dropoff-unexplained-nccl2.12-2.16-EXCERPT.log"
    ): C(
        status="PASS",
        inter={"NET/IB/GDRDMA"},
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "horovodrun-mpijob-roce-gid3-init-hang-libibverbs-stat-warnings-no-nccl-error-"
        "nccl2.7.8-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "horovod-k8s-net-socket-proxy-send-etimedout-fatal-error-then-hang-nccl2.12.12-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "net-socket-error"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "dgxa100-net-socket-8-ifaces-proxy-connect-silent-systemerror-no-warn-nccl2.12-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"error-trail", "socket-fallback"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "aws-2node-16rank-v100-inter-node-net-socket-0-intra-p2p-ipc-nccl2.4.8-EXCERPT.log": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/IPC"},
        findings={"socket-fallback"},
        versions=set(),
        hosts=2,
        processes=13,
    ),
    (
        "all_reduce-2node-a100-pcie-hpcx-ibext-v8-no-gdr-level-set-header-init-only-"
        "EXCERPT-nccl2.21.5.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions={"2.21.5"},
        hosts=2,
        processes=2,
    ),
    (
        "all_reduce-1node-gtx1050ti-gtx950-p2p-disabled-by-env-loc-socket-ring-search-"
        "fallback-simple-order-EXCERPT-nccl2.16.5.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={
            "env-p2p-disabled",
            "libibverbs-missing",
            "no-rdma-device",
            "socket-local-interfaces",
            "topology-search-fallback",
        },
        versions={"2.16.5"},
        hosts=1,
        processes=1,
    ),
    (
        "two-host-rtx4090-nccl-tests-mixed-nccl2.20.5-and-2.19.3-bootstrap-allgather-"
        "mismatch-internal-error-peer-closed-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "internal-error", "nccl-tests-failure", "net-socket-error"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    (
        "p4de-efa-bootstrap-message-truncated-256-instead-of-4-p2p-setup-tag-reuse-"
        "nccl2.19.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/AWS Libfabric/GDRDMA"},
        intra=set(),
        findings={"bootstrap-failed", "error-trail"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    (
        "k8s-sglang-pd-decode-bootstrap-root-address-169.254-link-local-socketstartconnect-"
        "abort-ibext-sharp-nccl2.21.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "socket-failed"},
        versions=set(),
        hosts=1,
        processes=4,
        verdict_has=("a TCP connection between ranks failed",),
    ),
    "ib-two-host-ras-report-during-init-segfault-ras-client-listening-nccl2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"process-crashed"},
        versions=set(),
        hosts=3,
        processes=4,
    ),
    (
        "k8s-pod-hami-vgpu-ib-no-device-failed-to-initialize-net-plugin-ib-socket-on-lo-vllm-"
        "tp2-nccl2.28-2.29-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "container-libmlx5-lacks-mlx5-1.25-ib-no-device-socket-eth0-fallback-alltoall-hang-"
        "nccl2.27.5-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"nccl-known-bug-ras-status-memory-corruption", "no-rdma-device"},
        versions={"2.27.5"},
        hosts=1,
        processes=2,
    ),
    (
        "wsl2-docker-dual-rtx5090-ignore-disabled-p2p-set-intranode-p2p-support-0-shm-path-"
        "nccl2.24plus-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "vm-2xa100-pcie-hdr-ib-passthrough-gpu-nic-path-phb-pci-speed-unreadable-one-channel-"
        "12gbs-graph-nccl2.19.3-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "dgx-spark-gb10-2node-roce-two-nics-16-channels-no-gdrdma-ring-pxn0-gdr0-torch-test-"
        "nccl2.24plus-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-off"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "aws-4xa10g-nvml-p2p-disabled-pcie-gpus-ring-via-shm-direct-sglang-tp4-nccl2.20-EXCERPT.log": C(
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"p2p-disabled-pcie"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    (
        "two-node-4gpu-watchdog-abort-socket-abort-flag-returns-3-progress-bar-prefix-first-"
        "step-nccl2.26-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-aborted", "abort-trail", "watchdog-teardown"},
        versions=set(),
        hosts=1,
        processes=4,
        verdict_has=("PyTorch's watchdog found an NCCL operation failed",),
    ),
    (
        "single-node-8gpu-ib-async-event-client-reregistration-after-init-sm-event-nonfatal-"
        "nccl2.14-2.15-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"ib-async-event"},
        versions=set(),
        hosts=1,
        processes=8,
    ),
    (
        "docker-ibext-recv-flush-err-status5-vendor249-torch-async-exception-a100-2x8-"
        "nccl2.22.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-error", "error-trail", "remote-error"},
        versions={"2.22.3"},
        hosts=1,
        processes=1,
    ),
    "single-process-two-comms-p2p-send-recv-opcount-trail-hang-nccl-version-unknown-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "ray-actor-one-process-two-gpus-cumem-alloc-cumemcreate-invalid-argument-timestamped-"
        "nccl2.18.3-2.19.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "cumem-alloc-failed"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("cuMem",),
    ),
    (
        "ngc-torch-distbackenderror-duplicate-gpu-ranks-3-7-share-busid-f000-interleaved-"
        "megatron-nccl2.19.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"duplicate-gpu", "invalid-usage"},
        versions={"2.19.3"},
        hosts=0,
        processes=0,
    ),
    "k8s-kserve-pod-dev-shm-full-fallocate-shm-recv-setup-ray-vllm-tp2-nccl2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "shm-exhausted", "shm-setup-failed"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "volcengine-vm-ib-reg-mr-iova2-einval-send-proxy-connect-relaxed-ordering-quoted-"
        "traceback-nccl2.27.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "init-incomplete", "rdma-reg-rejected", "system-error"},
        versions=set(),
        hosts=1,
        processes=2,
        not_findings=frozenset({"memlock"}),
        verdict_has=("refused to register a buffer",),
    ),
    (
        "roce-9hca-ibv-create-cq-enomem-comm-dev-base-proxy-connect-abort-res3-h200-"
        "nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "memlock", "other-warnings", "proxy-connect-failed"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    (
        "k8s-h20-sglang-net-ib-no-device-found-silent-socket-eth0-fallback-tp16-nccl2.20-"
        "2.21-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"init-incomplete", "no-rdma-device"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("NET/Socket over eth0",),
    ),
    (
        "torch-symm-mem-comm-destroy-ipc-symmetric-finalize-cumemaddressfree-invalid-"
        "argument-commreclaim-nccl2.27.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "other-warnings", "p2p-setup-failed"},
        versions=set(),
        hosts=1,
        processes=3,
    ),
    "ras-thread-segfault-ucx-backtrace-libnccl-offsets-only-unsolicited-h100-nccl2.27.7.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        # UCX's "[host:pid:0:tid] Caught signal 11 (Segmentation fault: ...)": a crash
        findings={"process-crashed"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    (
        "h100-ci-nvls-multicast-bind-cuda-error-401-fabric-manager-torch-"
        "distbackenderror-nccl2.29.3.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "nvls-failed"},
        versions={"2.29.3"},
        hosts=0,
        processes=0,
        not_findings=frozenset({"collnet-failed", "nccl-failure"}),
        verdict_has=("NVLink SHARP (NVLS)",),
    ),
    (
        "gb200-torch-allreduce-nvls-cuda-failure-802-system-not-yet-initialized-"
        "nccl2.26.2-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "cuda-failure",
            "cuda-system-not-ready",
            "nccl-known-bug-ras-report-during-init-crash",
            "nccl-known-bug-ras-status-memory-corruption",
        },
        versions={"2.26.2"},
        hosts=0,
        processes=0,
        verdict_has=("802",),
    ),
    "efa-ofi-fi-hmem-requires-rdma-no-gdr-host-staged-aws-ofi-nccl1.3.0-nccl2.10.3-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"efa-no-rdma-read"},
        versions={"2.10.3"},
        hosts=1,
        processes=4,
        not_findings=frozenset({"nccl-failure"}),
    ),
    (
        "efa-ofi-couldnt-open-av-einval-both-ranks-hang-old-plugin-format-aws-ofi-"
        "nccl0.9-EXCERPT.log"
    ): C(
        # aws-ofi-nccl's test programs' own "WARN: Function: F Line: N: " lines
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"ofi-plugin-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "azure-no-libibverbs-in-image-silent-fallback-net-socket-ray-launcher-nccl2.21-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device"},
        versions=set(),
        hosts=1,
        processes=3,
    ),
    (
        "socket-transport-uses-docker-veth-ipv6-linklocal-nic-connect-timed-out-oneflow-"
        "nccl2.7-EXCERPT.log"
    ): C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"retried-calls", "socket-fallback", "socket-local-interfaces"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("exists on one host only",),
    ),
    (
        "roce-ib-connect-oob-tcp-connect-poll-no-pollout-proxy-closes-conn-closed-by-"
        "remote-peer-tree-setup-nccl2.13.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        # "Proxy Call to rank 1 failed (Connect)": the proxy's connect, named
        findings={"error-trail", "proxy-connect-failed"},
        not_findings=frozenset({"net-socket-error"}),  # the "remote peer" is its own proxy
        versions=set(),
        hosts=2,
        processes=3,
    ),
    (
        "k8s-pod-8xh100-nvls-cumulticastbindmem-invalid-argument-all-ranks-vllm-"
        "nccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail", "nvls-setup-failed"},
        versions=set(),
        hosts=1,
        processes=8,
        verdict_has=("NVLS",),
    ),
    (
        "ib-hpcx-ucx-plugin-accept-oob-socket-closed-by-remote-peer-service-thread-"
        "closes-conn-reset-128-ranks-nccl2.17.1.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "net-socket-error", "other-warnings"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "docker-bridge-dev-shm-full-posix-fallocate-enospc-shm-recv-segment-paddle-"
        "nccl2.8.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device", "shm-exhausted"},
        versions={"2.8.4"},
        hosts=1,
        processes=1,
        verdict_has=("shared-memory",),
    ),
    "ci-runner-cudamempoolcreate-operation-not-supported-commalloc-init-nccl2.26.2.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-not-supported", "error-trail"},
        versions=set(),
        hosts=1,
        processes=2,
        verdict_has=("not supported",),
    ),
    (
        "azure-nc24ads-a100-v4-ncv4-graph-file-xml-import-dev1-not-found-single-gpu-"
        "nccl2.18.6-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "graph-file-mismatch", "init-incomplete"},
        versions={"2.18.6"},
        hosts=1,
        processes=1,
    ),
    (
        "hpcx-ibext-v8-plugin-still-chosen-when-nccl-ib-disable-set-roce-merged-"
        "nics-r2-of-3-nccl2.20-2.21-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IBext_v8"},
        intra=set(),
        findings={"gdr-off", "init-incomplete"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "p2p-proxy-setup-cudamalloc-out-of-memory-failed-cuda-calloc-6mib-peer-sees-"
        "proxy-socket-closed-nccl2.18.3-2.18.6-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "cuda-call-failed",
            "cuda-out-of-memory",
            "error-trail",
            "net-socket-error",
            "proxy-connect-failed",
        },
        versions=set(),
        hosts=1,
        processes=2,
        verdict_has=("CUDA could not allocate",),
    ),
    (
        "rccl-azure-mi300x-vf-4gpu-failed-to-find-reverse-path-xgmi-one-way-"
        "internal-error-rccl2.20.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "libibverbs-missing", "no-rdma-device", "topology-reverse-path"},
        versions=set(),
        hosts=1,
        processes=1,
        not_findings=frozenset({"nccl-failure"}),
    ),
    (
        "sharp-collnet-sat-streaming-tree-lock-failed-minus18-training-job-falls-"
        "back-nccl2.21.5-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"CollNet/SHARP/GDRDMA"},
        intra=set(),
        findings={"collnet-failed"},
        versions=set(),
        hosts=1,
        processes=3,
        # transport.cc:327 is in ncclTransportCollNetSetup, which returns a flag: NCCL
        # falls back (hpnet.ncclog.recovery.ABSORBED)
        not_findings=frozenset({"error-trail"}),
    ),
    "torch-nan-check-illegal-memory-access-700-cumem-free-proxy-teardown-nccl2.20-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-illegal-address", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
        not_findings=frozenset({"cuda-failure"}),
    ),
    (
        "wsl2-cumemsetaccess-cuda-failure-999-unknown-error-channel-init-nccl-tests-"
        "no-mpi-nccl2.22.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-failure", "error-trail", "init-incomplete", "nccl-tests-failure"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "wsl2-vllm-libcuda-so-not-found-shm-connect-transport-cc-154-invalid-"
        "argument-async-devpeers-read-nccl2.18.1-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"cuda-failure", "intra-node-shm-only", "libcuda-missing", "no-rdma-device"},
        versions={"2.18.1"},
        hosts=1,
        processes=1,
    ),
    (
        "gin-ib-probe-lib-wrapper-not-initialized-benign-warn-no-libibverbs-socket-"
        "devidx-prefix-nccl2.29.7-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device", "other-warnings"},
        versions={"2.29.7"},
        hosts=1,
        processes=3,
    ),
    "k8s-node-vllm-tp2-dev-shm-enospc-proxy-ops-pool-33mb-after-p2p-ipc-nccl2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra={"P2P/IPC"},
        findings={"shm-exhausted"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "k8s-rdma-shared-dev-plugin-container-roce-gid0-absent-modify-qp-enodev-ib-"
        "accept-nccl2.4.2.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "modify-qp-enodev", "nccl-tests-failure", "system-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "k8s-two-privileged-pods-same-node-roce-ibext-loopback-not-p2p-hosthash-"
        "differs-nccl2.16.2-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/IBext"},
        intra=set(),
        findings={"gdr-off"},
        versions={"2.16.2"},
        hosts=2,
        processes=2,
    ),
    (
        "ray-actor-prefix-proxy-append-out-of-bounds-progress-thread-alltoall-"
        "vendor-build-nccl2.27.7.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "proxy-append-out-of-bounds", "proxy-failed"},
        versions=set(),
        hosts=1,
        processes=1,
        not_findings=frozenset({"other-warnings"}),
    ),
    (
        "symmetric-window-register-bigspace-va-exhausted-ncclspacealloc-func-form-"
        "nccl2.30.7-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "symmetric-space-exhausted"},
        versions=set(),
        hosts=1,
        processes=1,
        not_findings=frozenset({"cuda-call-failed"}),
    ),
    (
        "aws-p4d-docker-ofi-provider-tcp-not-efa-socket-ifname-exclude-docker0-"
        "bootstrap-lo-nccl2.23.4-EXCERPT.log"
    ): C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"ofi-provider-tcp", "socket-local-interfaces"},
        versions={"2.23.4"},
        hosts=1,
        processes=1,
        verdict_has=("tcp",),
    ),
    (
        "h20-3e-vm-rdma-plugin-v6-name-with-spaces-pxn-proxy-gdrdma-shared-p2p-"
        "cumem-alltoall-nccl2.26.5-EXCERPT.log"
    ): C(
        status="PASS",
        inter={"NET/NCCL RDMA Plugin v6/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings={
            "nccl-known-bug-ras-report-during-init-crash",
            "nccl-known-bug-ras-status-memory-corruption",
        },
        versions={"2.26.5"},
        hosts=2,
        processes=4,
    ),
    "k8s-mpijob-azure-a100-ib-8hca-no-gdrdma-vnic-index-offset-p2p-cumem-nccl2.25.1-EXCERPT.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra={"P2P/CUMEM"},
        findings={"gdr-off"},
        versions={"2.25.1"},
        hosts=2,
        processes=12,
        gdr="no",
    ),
    "l20-8gpu-single-process-default-shm-direct-between-gpus-alltoall-nccl2.20.5-EXCERPT.log": C(
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"intra-node-shm-only"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "l20-8gpu-single-process-nccl-p2p-level-sys-forces-p2p-direct-pointer-"
        "socket-no-libibverbs-nccl2.20.5-EXCERPT.log"
    ): C(
        status="WARN",
        inter=set(),
        intra={"P2P/direct pointer"},
        findings={"libibverbs-missing", "no-rdma-device"},
        versions={"2.20.5"},
        hosts=1,
        processes=1,
    ),
    (
        "rtx4090-8gpu-single-node-using-network-ib-roce-bond-but-all-shm-pcie-phb-"
        "sys-nccl2.21.5-EXCERPT.log"
    ): C(
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"intra-node-shm-only"},
        versions={"2.21.5"},
        hosts=1,
        processes=1,
    ),
    (
        "rtx4090-two-hosts-ib-disabled-socket-ifname-prefix-en-enp3s0-vs-eno2-gdr1-"
        "flag-with-socket-nccl2.25.1-EXCERPT.log"
    ): C(
        status="WARN",
        inter={"NET/Socket"},
        intra=set(),
        findings={"env-ib-disabled", "init-incomplete", "socket-ifname-prefix", "sockets-chosen"},
        versions={"2.25.1"},
        hosts=2,
        processes=2,
    ),
    (
        "azure-vm-ib-vf-recv-completion-error12-vendor129-no-gid-ib-not-connected-"
        "torchrun-nccl2.18-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "eks-efa-ofi-cm-connect-unresponsive-receiver-4126-handshake-failed-peer-"
        "host-na-lazy-ring-connect-deepspeed-nccl2.27.3.log"
    ): C(
        status="FAIL",
        inter={"NET/Libfabric/GDRDMA"},
        intra=set(),
        findings={
            "efa-completion-error",
            "error-trail",
            "nccl-known-bug-ras-status-memory-corruption",
            "remote-error",
        },
        versions={"2.27.3"},
        hosts=1,
        processes=1,
        verdict_has=("libfabric completion error",),
    ),
    "intel-e810-irdma-roce-nonzero-lid-ib-path-accept-rtr-modify-qp-einval-nccl2.10.3.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "modify-qp-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "roce-gid-table-change-async-event-then-send-completion-error12-vendor129-"
        "pdsh-prefix-nccl2.6.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded", "ib-async-event"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    (
        "roce-ibext-plugin-2hca-vm-accept-rtr-modify-qp-etimedout-proxy-connect-"
        "nccl2.14.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "error-trail",
            "internal-error",
            "modify-qp-etimedout",
            "nccl-tests-failure",
            "proxy-connect-failed",
        },
        not_findings=frozenset({"net-socket-error"}),  # the "remote peer" is its own proxy
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("timed out",),
    ),
    (
        "bootstrap-root-listen-bind-cannot-assign-ib0-ipv6-linklocal-getuniqueid-r0-"
        "nccl2.18-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "socket-bind-failed"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("bind failed",),
    ),
    (
        "docker-dev-shm-full-posix-fallocate-no-space-shm-transport-ring-setup-"
        "nccl2.5-2.6-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra={"SHM/direct shared memory"},
        findings={"error-trail", "shm-exhausted"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "horovod-duplicate-gpu-two-local-procs-same-busid-3b000-mpi-tagged-nccl2.18.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"duplicate-gpu"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    (
        "nccl-algo-collnet-no-algorithm-protocol-available-barrier-srun-labels-"
        "nccl2.11.4-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"no-algorithm-available"},
        versions=set(),
        hosts=1,
        processes=5,
        not_findings=frozenset({"api-usage"}),
    ),
    (
        "nccl-comm-id-host-ip-inside-docker-bridge-no-subnet-match-root-bind-cannot-"
        "assign-nccl2.4.8-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-id-no-local-subnet", "env-ib-disabled", "socket-bind-failed"},
        versions=set(),
        hosts=1,
        processes=2,
        not_findings=frozenset({"other-warnings"}),
    ),
    "p2p-ipc-open-failed-217-peer-access-not-supported-ray-actor-prefix-nccl2.7.8-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra={"P2P/IPC"},
        findings={"cuda-failure", "error-trail", "p2p-peer-access-unsupported"},
        versions={"2.7.8"},
        hosts=1,
        processes=1,
        not_findings=frozenset({"p2p-setup-failed"}),
    ),
    # fresh posts read 2026-11-28 (conclusions first in their .source.txt): bootstrap, CUDA,
    # NVML, SHM, topology and API failures named by the line, the errno or the trail
    (
        "bootstrap-intranode-allgather-connect-send-type-reset-by-peer-k8s-timestamps-no-"
        "pid-nccl2.26-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "net-socket-error"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("TCP connection",),
    ),
    (
        "bootstrap-root-connect-ipoib-ib1-ipv6-linklocal-poll-no-pollout-connection-"
        "abort-nccl2.18.3-2.18.6-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "socket-failed"},
        versions=set(),
        hosts=1,
        processes=4,
    ),
    "bootstrap-root-connect-silent-systemerror-no-warn-socketpollconnect-dgx-nccl2.18.1.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("in bootstrap",),
    ),
    "cuda-driver-insufficient-for-runtime-garbage-device-ids-dask-raft-nccl2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-driver-too-old"},
        versions=set(),
        hosts=1,
        processes=2,
        not_findings=frozenset({"cuda-failure"}),
    ),
    (
        "multithread-app-bootstrap-root-same-container-connect-send-reset-by-peer-docker-"
        "bridge-nccl2.14.3-2.15.1-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "net-socket-error"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "old-format-no-nccl-tag-bootstrap-root-thread-connect-back-timed-out-nccl2.2.13-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "init-incomplete"},
        versions={"2.2.13"},
        hosts=1,
        processes=1,
        verdict_has=("in bootstrap",),
    ),
    (
        "sendrecv-invalid-peer-comm-nranks-zero-nonblocking-init-not-complete-"
        "multithread-nccl2.14.3-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-not-initialised", "error-trail"},
        versions={"2.14.3"},
        hosts=1,
        processes=1,
        not_findings=frozenset({"api-usage"}),
    ),
    "sglang-bootstrap-root-socketpollconnect-no-route-to-host-113-tp14-nccl2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "socket-failed"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    (
        "shm-attach-empty-name-size0-cumem-host-probe-diverges-across-ranks-nccl2.28.7-"
        "2.28.9-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "shm-cumem-host-disagree"},
        versions=set(),
        hosts=1,
        processes=4,
        not_findings=frozenset({"shm-exhausted", "shm-setup-failed"}),
    ),
    (
        "topo-xml-cpu-arch-attribute-missing-aws-p5-static-topo-file-mpirun-tags-"
        "nccl2.21.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "internal-error", "nccl-tests-failure", "topology-xml-attribute"},
        versions=set(),
        hosts=1,
        processes=1,
        not_findings=frozenset({"topology-failed"}),
    ),
    (
        "two-containers-same-hostname-peer-gpu-not-visible-nvml-busid-not-found-topo-"
        "nccl2.21.5-EXCERPT.log"
    ): C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"error-trail", "init-incomplete", "nvml-peer-gpu-not-found"},
        versions=set(),
        hosts=1,
        processes=4,
        not_findings=frozenset({"nvml-failed"}),
    ),
    "wsl2-no-pci-sysfs-topology-realpath-fail-socket-nccl2.7.8.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"libibverbs-missing", "no-rdma-device", "topology-no-pci-sysfs"},
        versions={"2.7.8"},
        hosts=1,
        processes=1,
        not_findings=frozenset({"topology-failed"}),
    ),
    # NVIDIA/nccl#2101: a vGPU VM without unified memory; the log states no version
    "vgpu-without-uvm-cuda-failure-operation-not-supported-init-nccl2.27.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-not-supported", "error-trail"},
        not_findings=frozenset({"cuda-failure"}),  # not a GPU fault or an out-of-memory
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("not supported",),
    ),
    # pytorch/pytorch#152077: torch 2.0 (NCCL 2.14.3, CUDA 11.8) on an RTX 5090 (sm_120)
    "rtx5090-sm120-named-symbol-not-found-torch2.0-socket-nccl2.14.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-no-kernel-for-gpu"},
        not_findings=frozenset({"cuda-failure"}),  # not a GPU fault or an out-of-memory
        versions={"2.14.3"},
        hosts=1,
        processes=1,
        verdict_has=("no code for this GPU",),
    ),
    # NVIDIA/nccl#1737: flushes (status 5) of an external IB plugin; the first error is elsewhere
    "ibext-plugin-completion-error5-vendor249-flush-gdr-hang-ncclunknown-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-error", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # ImageReward#65: two devices a pod lists but cannot open, skipped; NCCL goes on
    "k8s-pod-roce-ibv-open-device-failed-two-hcas-skipped-ncclunknown-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"ib-device-not-opened"},
        not_findings=frozenset({"other-warnings"}),
        versions=set(),
        hosts=1,
        processes=2,
    ),
    # NVIDIA/nccl#1657: ibv_modify_qp ENODEV on a pod's RoCE, GID index 0 (link-local)
    "k8s-roce-gid0-linklocal-set-ece-unsupported-modify-qp-enodev-ncclunknown-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"modify-qp-enodev", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # aws-ofi-nccl#584: one bare WARN, GPU memory registration refused (RC -22)
    "ofi-efa-register-memory-type2-einval-bare-warn-p4d-ncclunknown-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"ofi-gpu-memory-registration"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # NVIDIA/nccl#1612: bootstrap failed on a connection closed before NCCL's handshake
    "bootstrap-peer-closed-before-magic-prefix-stripped-nccl2.2x-before-2.27.3-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"net-socket-error", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    # NVIDIA/nccl#1808: an HTTP request to NCCL's proxy port ("GET /met" for its magic)
    "proxy-service-wrong-magic-external-tcp-ibext-v10-ncclunknown-EXCERPT.log": C(
        status="WARN",
        inter={"NET/IBext_v10/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings={"foreign-connection"},
        not_findings=frozenset({"other-warnings"}),
        versions=set(),
        hosts=1,
        processes=8,
    ),
    # NVIDIA/nccl#1485: more than 16 threads, a communicator each, on one GPU
    "multithread-comms-cuda-oom-p2p-setup-proxy-service-socket-closed-ncclunknown-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"cuda-out-of-memory", "proxy-failed", "error-trail"},
        not_findings=frozenset({"cuda-failure"}),
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("could not allocate the memory",),
    ),
    "aws-libfabric-efa-forced-net-intranode-p2p-shm-disabled-nccl2.23.4.log": C(
        # one process drives both GPUs (nccl-tests' rank table): NET is not inter-node here
        status="WARN",
        inter=set(),
        intra={"NET/AWS Libfabric"},
        findings={"net-inside-node"},
        versions={"2.23.4"},
        hosts=1,
        processes=1,
    ),
    "azure-ib-gdr-recv-only-ring-long-busid-nccl2.5.log": C(
        status="WARN",
        inter={"NET/IB/GDRDMA", "NET/IB"},
        intra=set(),
        findings={"gdr-off"},
        versions=set(),
        hosts=2,
        processes=2,
        gdr="receive only",
    ),
    "bootstrap-connection-refused-remote-process-exited-sglang-nccl2.29.3.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"remote-error", "connection-refused"},
        versions=set(),
        hosts=1,
        processes=7,
        not_findings=frozenset({"other-warnings"}),
    ),
    "bootstrap-no-socket-interface-found-torch-error-nccl2.14.3.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "bootstrap-no-interface"},
        versions={"2.14.3"},
        hosts=0,
        processes=0,
        verdict_has=("no network interface",),
    ),
    "cloudwatch-doubled-lines-ofi-efa-provider-empty-nccl2.21.5.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"efa-no-device"},
        versions={"2.21.5"},  # rank 0's bare version line, behind the collector's prefix
        hosts=1,
        processes=1,
    ),
    "cloudwatch-prefix-aws-libfabric-gdrdma-p2p-cumem-read-nccl2.18.3-or-later.log": C(
        status="PASS",
        inter={"NET/AWS Libfabric/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
        gdr="yes",
    ),
    "double-spaced-paste-libibverbs-warn-socket-single-node-nccl2.4.8.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "libibverbs-missing"},
        versions={"2.4.8"},
        hosts=1,
        processes=1,
    ),
    "gcp-old-net-plugin-v4-unsupported-no-ib-socket-nccl2.19.3.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"net-plugin-load-failed", "no-rdma-device"},
        versions={"2.19.3"},
        hosts=1,
        processes=1,
    ),
    "h200x4-nccl-tests-g4-one-process-p2p-direct-pointer-nccl2.28.3.log": C(
        # one host, the communicator whole: no RDMA device is a note (issue 24 rule 4)
        status="PASS",
        inter=set(),
        intra={"P2P/direct pointer"},
        findings={"no-rdma-device"},
        versions={"2.28.3"},
        hosts=1,
        processes=1,
    ),
    "ib-2nic-gdrdma-shared-p2p-channels-same-host-nccl2.18.3-or-later.log": C(
        # both ends on lambda-server-1: NET between them is not inter-node traffic
        status="WARN",
        inter=set(),
        intra={"NET/IB"},
        findings={"net-inside-node"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "ib-4hca-plugin-load-returned-17-nccl2.11.4.log": C(
        status="PASS",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/IPC"},
        findings=set(),
        versions={"2.11.4"},
        hosts=2,
        processes=8,  # rank 6's pid 3138490: in nccl-tests' device table only
        gdr="yes",
        not_findings=frozenset({"net-plugin-load-failed"}),  # "returned 17: cannot open" is normal
    ),
    "ib-5nic-mixed-roce-rank-prefix-p2p-ipc-busid-nccl2.5.6.log": C(
        status="PASS",
        inter=set(),
        intra={"P2P/IPC"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("no inter-node connection",),
    ),
    "ib-8nic-gdrdma-completion-error4-vendor81-unhandled-system-error-nccl2.7.6.log": C(
        status="FAIL",
        inter=set(),
        intra={"NET/IB"},
        findings={
            "system-error",
            "nccl-tests-failure",
            "net-inside-node",
            "completion-local-protection",
        },
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("local protection",),
    ),
    "ib-linklocal-gid-completion-error4-vendor81-send-5hosts-nccl2.18.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-local-protection"},
        versions=set(),
        hosts=3,
        processes=3,
    ),
    "ib-mlx5-no-gdr-ring-p2p-ipc-2nodes-nccl2.4.7.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra={"P2P/IPC"},
        findings={"gdr-off"},
        versions={"2.4.7"},
        hosts=2,
        processes=8,
        gdr="no",
        not_findings=frozenset({"socket-fallback", "no-rdma-device"}),  # 2.4 lists NET/Socket too
    ),
    "ib-modify-qp-invalid-argument-nic3-roce-rank-prefix-nccl2.5.6.log": C(
        # EINVAL: the generic signature, not one of the errno-specific ones; the NET/IB
        # receive connection on NIC 3 (no /GDRDMA) is the one whose QP setup failed
        status="FAIL",
        inter={"NET/IB"},
        intra={"P2P/IPC"},
        findings={"modify-qp-failed", "gdr-off"},
        versions=set(),
        hosts=1,
        processes=1,
        gdr="no",
        not_findings=frozenset(
            {"modify-qp-enodev", "modify-qp-etimedout", "modify-qp-enetunreach", "other-warnings"}
        ),
        verdict_has=("ibv_modify_qp",),
    ),
    "ib-no-gdr-p2p-direct-pointer-read-single-process-nccl2.18.3-or-later.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra={"P2P/direct pointer"},
        findings={"gdr-off"},
        versions=set(),
        hosts=1,
        processes=1,
        gdr="no",
    ),
    "ibext-plugin-no-ib-device-socket-fallback-p2p-ipc-read-nccl2.18.3-or-later.log": C(
        # the silent socket fallback although an IB plugin is installed
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/IPC"},
        findings={"socket-fallback"},
        versions=set(),
        hosts=1,
        processes=8,
        not_findings=frozenset({"gdr-off"}),  # sockets never do GPUDirect: no GDR complaint
    ),
    "ibext-sharp-collnet-plugin-loaded-4hca-nccl2.22-2.23.log": C(
        # the SHARP plugin loaded does not mean CollNet carried anything
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings=set(),
        versions=set(),
        hosts=2,
        processes=5,
    ),
    "ibext-v8-roce-bond-nvls-no-gdr-nccl2.20.log": C(
        # "Connected NVLS tree": NVLink SHARP inside the host (the note says so)
        status="WARN",
        inter={"NET/IBext_v8"},
        intra={"NVLS"},
        findings={"gdr-off"},
        versions=set(),
        hosts=1,
        processes=7,
        gdr="no",
    ),
    "libibverbs-missing-socket-same-hostname-two-nodes-nccl2.18.3.log": C(
        # two machines both called "ubuntu": told apart by their addresses
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"intra-node-shm-only", "libcuda-missing", "libibverbs-missing", "no-rdma-device"},
        versions={"2.18.3"},
        hosts=2,
        processes=2,
    ),
    "mpirun-tags-aws-libfabric-ring-couldnt-open-av-nccl2.4.log": C(
        status="FAIL",
        inter={"NET/AWS Libfabric"},
        intra={"P2P/IPC"},
        findings={"gdr-off", "ofi-plugin-error"},
        versions=set(),
        hosts=4,
        processes=10,
    ),
    "mpirun-tags-duplicate-gpu-5-ranks-cuda-device-1000-nccl2.9.9.log": C(
        # every rank on cudaDev 0 / busId 1000; init fails before any connection
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"duplicate-gpu"},
        versions=set(),
        hosts=1,
        processes=5,
        not_findings=frozenset({"other-warnings"}),
        verdict_has=("same GPU",),
    ),
    "mpirun-tags-no-ib-socket-lo-nccl2.5.6.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "socket-local-interfaces"},
        versions={"2.5.6"},
        hosts=1,
        processes=4,
    ),
    "net-socket-broken-pipe-last-error-abort-complete-torch-nccl2.21.5.log": C(
        # the socket error reaches the log as PyTorch's "Last error:"; "failed or timed
        # out" is PyTorch's generic wording, not a timeout
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"net-socket-error", "remote-error", "comm-aborted"},
        versions={"2.21.5"},
        hosts=1,
        processes=2,
        not_findings=frozenset({"collective-timeout", "connection-refused"}),
        # PyTorch prints the error it tore down for after its teardown message: it leads
        verdict_has=("TCP connection between ranks broke",),
    ),
    "net-socket-forced-ifname-prefix-en-nccl2.11.4.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"socket-ifname-prefix"},
        versions={"2.11.4"},
        hosts=2,
        processes=2,
        not_findings=frozenset({"no-rdma-device", "socket-fallback"}),  # IB was not even probed
    ),
    "no-ib-devices-socket-3-interfaces-nccl2.3.7.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"socket-local-interfaces", "no-rdma-device"},
        versions={"2.3.7"},
        hosts=1,
        processes=2,
    ),
    "nvls-socket-network-split-comm-timeout-nccl2.19-2.20.log": C(
        # network "Socket" is chosen, but a one-node communicator makes no NET connection
        status="PASS",
        inter=set(),
        intra={"NVLS"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=4,
        not_findings=frozenset({"socket-fallback"}),
    ),
    "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log": C(
        # the OFI plugin loaded but IB was assigned: the network is IB, not AWS Libfabric
        status="PASS",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/IPC"},
        findings=set(),
        versions={"2.27.5"},
        hosts=1,
        processes=8,
        gdr="yes",
        verdict_has=("mlx5_",),
    ),
    "ofi-register-memory-enomem-pdsh-double-prefix-nccl2.10.3.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"memlock"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-2nic-gdr-disabled-for-hca-nccl2.19-2.20.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"gdr-disabled-hca"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-9nic-ib-hca-prefix-match-gdrdma-gin-nccl2.29.3.log": C(
        status="WARN",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/IPC"},
        findings={"ib-hca-prefix"},
        versions={"2.29.3"},
        hosts=1,
        processes=8,
        gdr="yes",
        verdict_has=("mlx5_0..7:1",),
    ),
    "roce-completion-error12-vendor129-oneline-nccl2.8.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-completion-error4-vendor81-mlx5-cqe-dump-nccl2.4.2.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-local-protection"},
        versions=set(),
        hosts=2,
        processes=2,
    ),
    "roce-completion-status12-vendor129-recv-hca-nccl2.24.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"completion-retry-exceeded"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-create-cq-failed-2nodes-no-gdr-nccl2.7.8.log": C(
        status="FAIL",
        inter={"NET/IB"},
        intra=set(),
        findings={"gdr-off", "memlock"},
        versions={"2.7.8"},
        hosts=1,
        processes=1,
        gdr="no",
    ),
    "roce-dgxh100-mixed-versions-nccl2.18-and-2.19.3.log": C(
        # only rank 0 printed a version; the other host's lines are 2.17-2.18 formats
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"mixed-nccl-versions"},
        versions={"2.19.3"},
        hosts=2,
        processes=2,
    ),
    "roce-modify-qp-enetunreach-proxy-connect-fail-nccl2.18.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        # the peer closed the proxy's socket after its own QP failure: a broken
        # connection, not a refused one
        findings={"proxy-connect-failed", "modify-qp-enetunreach", "net-socket-error"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("unreachable",),
        not_findings=frozenset({"other-warnings"}),
    ),
    "roce-modify-qp-enodev-no-such-device-nccl2.7.8.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"modify-qp-enodev"},
        versions={"2.7.8"},
        hosts=1,
        processes=1,
    ),
    "roce-modify-qp-etimedout-timestamped-warn-nccl2.27.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"modify-qp-etimedout"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "roce-single-hca-gid3-two-nodes-nccl2.10.3.log": C(
        status="PASS",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/direct pointer"},
        findings=set(),
        versions={"2.10.3"},
        hosts=2,
        processes=2,
        gdr="yes",
    ),
    "roce-single-hca-pxn-gdrdma-ofi-plugin-loaded-nccl2.27.5.log": C(
        status="PASS",
        inter={"NET/IB/GDRDMA"},
        intra={"P2P/IPC"},
        findings=set(),
        versions={"2.27.5"},
        hosts=1,
        processes=8,
        gdr="yes",
    ),
    "shm-direct-shared-memory-cuda-failure-ib-no-gdr-nccl2.4.8.log": C(
        status="FAIL",
        inter={"NET/IB"},
        intra={"P2P/IPC", "SHM/direct shared memory"},
        findings={"cuda-failure", "gdr-off"},
        versions=set(),
        hosts=1,
        processes=6,
    ),
    "socket-ifname-missing-trainer-prefix-family-garbage-nccl2.27.7.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "bootstrap-no-interface"},
        versions=set(),
        hosts=1,
        processes=1,
        verdict_has=("bootstrap",),
    ),
    "tensorflow-bundled-libibverbs-warn-unexpanded-cuda-version-nccl2.5.7.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "libibverbs-missing"},
        versions={"2.5.7"},
        hosts=1,
        processes=1,
    ),
    "torch-comm-aborted-backward-traceback-no-nccl-lines-ncclunknown.log": C(
        # PyTorch < 1.9 form ("was aborted." without the rank); no NCCL_DEBUG lines
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"comm-aborted"},
        versions=set(),
        hosts=0,
        processes=0,
        verdict_has=("aborted",),
    ),
    "torch-watchdog-timeout-allreduce-viewer-line-numbers-ncclunknown.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"collective-timeout"},
        versions=set(),
        hosts=0,
        processes=0,
    ),
    "torchrun-ibext-v8-roce-8nic-p2p-cumem-nccl2.22.3.log": C(
        status="PASS",
        inter=set(),
        intra={"P2P/CUMEM"},
        findings=set(),
        versions={"2.22.3"},
        hosts=1,
        processes=7,
    ),
    "torchrun-rank-prefix-p2p-cumem-libfabric-gdrdma-nccl2.24-or-later.log": C(
        status="PASS",
        inter={"NET/Libfabric/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings=set(),
        versions=set(),
        hosts=1,
        processes=1,
        gdr="yes",
    ),
    "wsl-libibverbs-missing-socket-single-rank-nccl2.21.5.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={"no-rdma-device", "libibverbs-missing"},
        versions={"2.21.5"},
        hosts=1,
        processes=1,
    ),
    # recorded with `hpnet verify --run` on the 4x H200 machine (per-rank files)
    "h200x4-bad-socket-ifname-nccl2.28.9": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"invalid-usage", "peer-exited", "bootstrap-no-interface"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
        verdict_has=("bootstrap",),
    ),
    "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra={"P2P/CUMEM"},
        findings={"socket-fallback", "fake-hosts"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
        not_findings=frozenset({"net-inside-node", "gdr-off"}),
        verdict_has=("TCP", "eth0"),
    ),
    "h200x4-nccl-net-ib-forced-no-device-nccl2.28.9": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"invalid-usage", "no-rdma-device", "no-net-plugin"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
    ),
    "h200x4-net-socket-inside-node-p2p-shm-disabled-nccl2.28.9": C(
        status="WARN",
        inter=set(),
        intra={"NET/Socket"},
        findings={"no-rdma-device", "net-inside-node"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
        not_findings=frozenset({"fake-hosts", "socket-fallback"}),
    ),
    "h200x4-p2p-cumem-nccl2.28.9": C(
        # one host, the communicator whole: no RDMA device is a note (issue 24 rule 4)
        status="PASS",
        inter=set(),
        intra={"P2P/CUMEM"},
        findings={"no-rdma-device"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
        not_findings=frozenset({"gdr-disabled-hca", "net-plugin-load-failed"}),
    ),
    "h100-fake-hosts-one-gpu-ib-hca-matches-nothing-socket-nccl2.28.9": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"ib-hca-matched-nothing", "socket-fallback", "fake-hosts"},
        versions={"2.28.9"},
        hosts=1,
        processes=2,
        not_findings=frozenset({"net-socket-error", "remote-error", "other-warnings"}),
    ),
    "h100-fake-hosts-one-gpu-peer-killed-socket-closed-nccl2.28.9": C(
        status="FAIL",
        inter={"NET/Socket"},
        intra=set(),
        findings={"net-socket-error", "remote-error", "fake-hosts"},
        versions={"2.28.9"},
        hosts=1,
        processes=2,
        not_findings=frozenset({"connection-refused", "ib-hca-matched-nothing"}),
    ),
    "h200x4-shm-p2p-disabled-nccl2.28.9": C(
        status="WARN",
        inter=set(),
        intra={"SHM/direct/direct"},
        findings={"no-rdma-device"},
        versions={"2.28.9"},
        hosts=1,
        processes=4,
    ),
    "deepep-test-internode-h20-over-2-nodes-commabort-proxystop-socket-send-abort-traces-"
    "only-nccl-2.26-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"abort-trail"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "k8s-dra-gb200-two-computedomains-same-nvlink-clique-nccl-tests-enqueue-cuda-launch-"
    "failure-nccl-2.27-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"nccl-tests-failure", "cuda-kernel-fault", "cuda-failure"},
        versions=set(),
        hosts=1,
        processes=2,
    ),
    "nemo-run-slurm-multinode-tree-search-fallback-could-not-find-net-id-0-internal-error-"
    "nccl-2.25.1-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"internal-error", "topology-search-fallback", "topology-net-missing"},
        versions={"2.25.1"},
        hosts=1,
        processes=1,
    ),
    "databricks-serverless-8node-a10-ofi-1.15.0-no-eligible-providers-socket-fallback-r0-"
    "stuck-init-others-tcpstore-recv-0-bytes-nccl-2.26.2-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "ofi-plugin-error",
            "no-rdma-device",
            "init-incomplete",
            "nccl-known-bug-ras-report-during-init-crash",
            "peer-exited",
            "nccl-known-bug-ras-status-memory-corruption",
        },
        versions={"2.26.2"},
        hosts=1,
        processes=1,
    ),
    "dgx-spark-gb10-2node-roce-direct-qsfp-nccl-2.28.9-allgather-busbw-2.8-vs-22-no-gdr-"
    "rail2-linklocal-gid0-EXCERPT.log": C(
        status="WARN",
        inter={"NET/IB"},
        intra=set(),
        findings={
            "gdr-off",
            "nccl-known-bug-ras-status-memory-corruption",
            "gdr-disabled-hca",
            "roce-link-local-gid",
        },
        versions={"2.28.9"},
        hosts=2,
        processes=2,
    ),
    "k8s-pod-vllm-large-model-dev-shm-too-small-shm-transport-setup-failed-to-extend-nccl-"
    "2.21.5-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={"shm-exhausted", "shm-setup-failed", "error-trail"},
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "lumi-mi250x-singularity-rccl-2.20.5-net-plugin-librccl-net-ofi-not-found-socket-over-"
    "hsn0-3-single-rank-EXCERPT.log": C(
        status="UNKNOWN",
        inter=set(),
        intra=set(),
        findings={
            "libibverbs-missing",
            "init-incomplete",
            "socket-ifname-prefix",
            "no-rdma-device",
        },
        versions=set(),
        hosts=1,
        processes=1,
    ),
    "perlmutter-slingshot-cxi-ofi-1.6.0-2node-8xa100-nccl-2.23.4-cross-nic-rings-gdr-"
    "disabled-allreduce-busbw-30-regression.log": C(
        status="WARN",
        inter={"NET/AWS Libfabric/GDRDMA", "NET/AWS Libfabric"},
        intra={"P2P/CUMEM"},
        findings={"gdr-off", "socket-ifname-prefix"},
        versions={"2.23.4"},
        hosts=2,
        processes=8,
    ),
    "sglang-pd-decode-2node-tp16-mixed-nccl-2.29-and-2.27-bootstrap-root-mismatch-then-"
    "connect-refused-EXCERPT.log": C(
        status="FAIL",
        inter=set(),
        intra=set(),
        findings={
            "process-crashed",
            "connection-refused",
            "bootstrap-root-mismatch",
            "remote-error",
        },
        versions=set(),
        hosts=2,
        processes=10,
    ),
    "alcf-polaris-2node-8gpu-ddp-resnet50-aws-ofi-nccl-1.6.0-cxi-gdr-phb-first-allgather-"
    "seqnum1-all-ranks-garbage-last-completed-nccl-2.20.5.log": C(
        status="FAIL",
        inter={"NET/AWS Libfabric/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings={"collective-timeout", "watchdog-teardown", "socket-ifname-prefix"},
        versions={"2.20.5"},
        hosts=4,
        processes=10,
    ),
    "alcf-sirius-2node-8gpu-ddp-vae-aws-ofi-nccl-1.9.1-cxi-gdr-phb-r0-allreduce-6215-others-"
    "broadcast-3861-nccl-2.20.5.log": C(
        status="FAIL",
        inter={"NET/AWS Libfabric/GDRDMA"},
        intra={"P2P/CUMEM"},
        findings={"collective-timeout", "watchdog-teardown"},
        versions={"2.20.5"},
        hosts=3,
        processes=10,
    ),
}


def _report(name: str) -> VerifyReport:
    inputs, notes = collect_inputs([str(LOGS / name)])
    return analyse(read_logs(inputs, jobs=1, notes=notes))


def test_every_log_has_an_expectation() -> None:
    """Every log is judged here, or by the corpus test from its note's Expected block."""
    present = {
        p.name
        for p in LOGS.iterdir()
        if (p.suffix == ".log" or p.is_dir())
        and "\nExpected"
        not in LOGS.joinpath(f"{p.name.removesuffix('.log')}.source.txt").read_text()
    }
    assert present == set(CASES), "add the new log to CASES (or remove a stale entry)"


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdict_matches_what_a_maintainer_concludes(name: str) -> None:
    expected = CASES[name]
    report = _report(name)
    got = {f.id for f in report.findings}
    assert report.status == expected.status, report.verdict
    assert set(report.transports["inter_node"]) == expected.inter
    assert set(report.transports["intra_node"]) == expected.intra
    assert expected.findings <= got, f"missing {expected.findings - got}"
    assert not (expected.not_findings & got), f"wrong {expected.not_findings & got}"
    assert set(report.nccl_versions) == expected.versions
    assert len(report.hosts) == expected.hosts
    assert len(report.ranks) == expected.processes
    for word in expected.verdict_has:
        assert word in report.verdict
    if expected.gdr is not None:
        states = {h.gdr for h in report.hosts if h.gdr}
        # "yes" must hold everywhere; a partial state is shown by some host
        assert states == {"yes"} if expected.gdr == "yes" else expected.gdr in states
    # every finding says what to do, and errors carry evidence
    for finding in report.findings:
        assert finding.cause and finding.fix
        if finding.severity == "error" and finding.id != "mixed-nccl-versions":
            assert finding.evidence, finding.id
    # an excerpt without connection lines says so instead of guessing
    if not report.transports["inter_node"] and not report.transports["intra_node"] and report.ranks:
        assert any("no connection lines" in u for u in report.unknowns)


def _finding(report: VerifyReport, finding_id: str) -> tuple[str, ...]:
    return next(f.conclusions for f in report.findings if f.id == finding_id)


def test_a_failed_connections_error_says_what_the_peer_did() -> None:
    """The system error of a failed TCP connection, read out (sglang #3820: no route, a
    firewall's REJECT among the causes; NVIDIA/nccl#975: 2.18's retry on the same socket
    hides the first error; #1920: a reset)."""
    said = {
        (
            "sglang-bootstrap-root-socketpollconnect-no-route-to-host-113-tp14-nccl2.21.5-"
            "EXCERPT.log"
        ): (
            "socket-failed",
            "'No route to host' (EHOSTUNREACH)",
        ),
        "bootstrap-root-connect-ipoib-ib1-ipv6-linklocal-poll-no-pollout-connection-abort-"
        "nccl2.18.3-2.18.6-EXCERPT.log": ("socket-failed", "'Software caused connection abort'"),
        "bootstrap-intranode-allgather-connect-send-type-reset-by-peer-k8s-timestamps-no-pid-"
        "nccl2.26-EXCERPT.log": ("net-socket-error", "'Connection reset by peer' (ECONNRESET)"),
    }
    for name, (finding_id, start) in said.items():
        conclusions = _finding(_report(name), finding_id)
        assert any(c.startswith(start) for c in conclusions), (name, conclusions)
    # a line without a system error gets none
    report = _report(
        "shm-attach-empty-name-size0-cumem-host-probe-diverges-across-ranks-nccl2.28.7-2.28.9-EXCERPT.log"
    )
    assert not any("(E" in c for f in report.findings for c in f.conclusions)


def test_a_warn_whose_own_thread_passes_the_error_up_recovers_no_other_trail() -> None:
    """pytorch#124380: 7992's "Socket recv failed while polling" is a WARN some caller
    recovers from (proxy.cc), but its own thread's trail follows it (proxy.cc:1076 -> 3):
    that caller did not. So it does not turn 7991's earlier ncclSystemError (its Async
    thread's group.cc:64 -> 2, returned by ncclGroupEnd) into a recovery: 7991 failed
    first, and its proxy's WARNs are failures, not warnings NCCL went on after. Its trail
    comes before any WARN of it, so what it passed up began first: the trail leads."""
    result = _report(
        "pytorch-ddp-intranode-proxy-service-drops-conn-after-local-peer-systemerror-"
        "socketprogress-closed-by-remote-peer-p2p-setup-EXCERPT.log"
    )
    trail = next(f for f in result.findings if f.id == "error-trail")
    assert trail.processes == ("10-12-3-162:7991", "10-12-3-162:7992")
    assert trail.evidence[0].endswith("NCCL INFO group.cc:64 -> 2 [Async thread]")
    assert "ncclSystemError (2)" in trail.title
    # 7991's trail (line 1) is before any WARN of it: its failure came first, and leads
    assert result.findings[0] is trail
    assert "it failed before any WARN of it (its first trail line, line 1)" in trail.conclusions[0]
    assert [f.id for f in result.findings][1:3] == ["proxy-failed", "net-socket-error"]
    assert not any(f.id == "other-warnings" for f in result.findings)
    # a process with no WARN at all (RCCL's rank 0 beside rank 1's failed IPC handle)
    # is a peer failing with the one that says why: its earlier trail does not lead
    rccl = _report("rdna3-gfx1100-p2p-hipipcgetmemhandle-invalid-argument-rccl2.22.3-EXCERPT.log")
    assert rccl.findings[0].id == "p2p-setup-failed"
    # NVIDIA/nccl: the proxy's IB connect failed (lines 1-6) before its WARN (line 8) and
    # the connection the proxy then closed (line 10); nccl#629: host -2's proxy failed
    # (line 1) before host -3's "Connection reset by peer" (line 6)
    for name in (
        "roce-ib-connect-oob-tcp-connect-poll-no-pollout-proxy-closes-conn-closed-by-remote-peer-"
        "tree-setup-nccl2.13.4-EXCERPT.log",
        "nccl-tests-two-a100-nodes-gdr-level5-proxy-net-fail-then-illegal-access-in-commfree-"
        "nccl2.10.3-EXCERPT.log",
    ):
        ids = [f.id for f in _report(name).findings]
        closed = "net-socket-error" if "net-socket-error" in ids else "proxy-connect-failed"
        assert ids.index("error-trail") < ids.index(closed), (name, ids)


def test_loopback_first_in_the_socket_list_is_the_bootstrap_of_nccl_up_to_2_4_7() -> None:
    """kubeflow/pytorch-operator#202: NCCL 2.3 to 2.4.7 bootstrap over NET/Socket's device
    0 (bootstrap.cc: ncclBootstrapNet = &ncclNetSocket); with lo listed first the root
    publishes 127.0.0.1 to the other pods. Said where nothing puts the release at 2.4.8 or
    later (which prints its own 'Bootstrap : Using' list); not where the job's other
    processes are of a later release (an AWS container whose ranks print 2.13-2.23
    forms)."""
    found = _finding(
        _report(
            "k8s-pod-bootstrap-root-on-lo-127.0.0.1-first-interface-ifname-includes-lo-"
            "nccl2.4.2-2.4.7-EXCERPT.log"
        ),
        "socket-local-interfaces",
    )
    assert any(
        "lo is the first of its socket interfaces, which NCCL 2.3 to 2.4.7" in c for c in found
    )
    later = _finding(
        _report(
            "aws-g5-ofi-plugin-init-failed-no-ib-socket-fallback-lo-eth0-container-"
            "awsofi1.4.0aws-EXCERPT.log"
        ),
        "socket-local-interfaces",
    )
    assert later and not any("2.4.7" in c for c in later)


def test_an_error_trail_names_the_stage_it_failed_in() -> None:
    """The trail's files name where NCCL was: NVIDIA/nccl#1099 printed no WARN at all
    (2.18.1's socketPollConnect fails silently), its trail passes bootstrap.cc:270; a
    bootstrap over 2.2's NET transport is bootstrap, not the Socket transport."""
    silent = _report(
        "bootstrap-root-connect-silent-systemerror-no-warn-socketpollconnect-dgx-nccl2.18.1.log"
    )
    assert "failed in bootstrap" in silent.verdict
    assert "(bootstrap.cc:270 in its trail)" in _finding(silent, "error-trail")[0]
    old = _report(
        "old-format-no-nccl-tag-bootstrap-root-thread-connect-back-timed-out-nccl2.2.13-EXCERPT.log"
    )
    assert "(bootstrap.cu:" in _finding(old, "error-trail")[0]
    shm = _report(
        "shm-attach-empty-name-size0-cumem-host-probe-diverges-across-ranks-nccl2.28.7-2.28.9-EXCERPT.log"
    )
    assert (
        "the shared-memory (SHM) transport (transport/shm.cc:634" in _finding(shm, "error-trail")[0]
    )


def test_a_system_error_in_the_shared_memory_transport_says_what_it_usually_is() -> None:
    """CPM-2-Finetune#2: the WARN was not pasted; code 2 through transport/shm.cc is a
    system call of its /dev/shm segment (a CUDA call there returns 1), and the rerun asks
    for the SHM subsystem, not NET."""
    report = _report(
        "docker-shm-recv-setup-shmopen-fail-warn-not-pasted-8gpu-v100-nccl2.8.3-2.8.4-EXCERPT.log"
    )
    (said,) = _finding(report, "error-trail")
    assert "(transport/shm.cc:101 in its trail); a system call failed there" in said
    assert "(shm_open, fallocate, mmap)" in said
    trail = next(f for f in report.findings if f.id == "error-trail")
    assert "NCCL_DEBUG_SUBSYS=INIT,SHM to see" in trail.fix
    # a WARN says what failed (attaching to a segment named ""): no guess beside it
    shm = _report(
        "shm-attach-empty-name-size0-cumem-host-probe-diverges-across-ranks-nccl2.28.7-2.28.9-EXCERPT.log"
    )
    assert not any("a system call failed" in c for c in _finding(shm, "error-trail"))


def test_a_launchers_report_that_a_process_failed_is_a_failure() -> None:
    """NVIDIA/nccl#983: the NCCL lines end at connection setup; mpirun says a process
    returned non-zero and aborted the job: not a WARN about GPUDirect RDMA. A torchrun
    report names the process and its signal (an MI250 job's segfault)."""
    mpirun = _report(
        "mpirun-docker-ib-ncclcomminitrank-last-net-ib-connect-then-process-nonzero-exit-"
        "sigbus-title-nccl2.13.4-EXCERPT.log"
    )
    assert mpirun.verdict.startswith(
        "the launcher reports a process of the job failed, and ended the job — "
    ), mpirun.verdict
    torchrun = _report(
        "mi250-rccl-init-segfault-after-affinity-faulthandler-barrier-torchrun-exitcode-11-"
        "srun-prefix-rccl-unknown-version-EXCERPT.log"
    )
    said = _finding(torchrun, "launcher-reported-failure")
    assert said[0].startswith("a process (pid 2128869, local rank 0) ended by SIGSEGV (exit"), said


def test_an_efa_error_and_a_bind_error_are_read_out() -> None:
    """libfabric's EFA error 4126 is a peer that never answered the handshake (its
    process most likely gone), and 'Peer host id: N/A' says no handshake reached it; a
    bind's EADDRNOTAVAIL is an address not on this host (NVIDIA/nccl#331: NCCL_COMM_ID
    naming the host's address inside a Docker bridge network)."""
    efa = _report(
        "eks-efa-ofi-cm-connect-unresponsive-receiver-4126-handshake-failed-peer-host-na-"
        "lazy-ring-connect-deepspeed-nccl2.27.3.log"
    )
    said = _finding(efa, "efa-completion-error")
    assert said[0].startswith("error 4126 (FI_EFA_ERR_UNESTABLISHED_RECV_UNRESP)"), said
    assert "the peer's host is not known (no handshake reached it)" in said
    bind = _report(
        "nccl-comm-id-host-ip-inside-docker-bridge-no-subnet-match-root-bind-cannot-assign-"
        "nccl2.4.8-EXCERPT.log"
    )
    assert _finding(bind, "socket-bind-failed")[0].startswith(
        "'Cannot assign requested address' (EADDRNOTAVAIL)"
    )


def test_a_libfabric_rc_and_a_timeout_on_an_open_connection_are_read_out() -> None:
    """aws-ofi-nccl's RC is libfabric's error number, an errno (nccl#1928: 113, no route
    to host); ETIMEDOUT on a send or receive is a connection that was up and stopped
    being acknowledged (nccl#706), not a connect nothing answered."""
    ofi = _report(
        "torch-distbackenderror-net-ofi-request-undeliverable-rc113-hpe-lustre-host-"
        "nccl2.28.8-EXCERPT.log"
    )
    assert "RC 113: EHOSTUNREACH (No route to host)" in _finding(ofi, "efa-completion-error")
    tcp = _report(
        "horovod-k8s-net-socket-proxy-send-etimedout-fatal-error-then-hang-nccl2.12.12-EXCERPT.log"
    )
    said = _finding(tcp, "net-socket-error")
    assert any("on a connection that was up" in s for s in said), said
    assert not any("nothing answered at all" in s for s in said), said


def test_a_23_rank_line_is_the_communicator_its_next_line_names() -> None:
    """NCCL 2.3 prints "rank 0 nranks 4" (init.cu:618, before the communicator exists)
    and then "comm 0x... rank 0 nranks 4" (init.cu:174): one communicator, not two
    (byteps#61, NCCL 2.3.7)."""
    report = _report(
        "k8s-pod-no-libibverbs-veth-eth0-no-pci-path-soc-socket-intranode-byteps-nccl2.3.7-EXCERPT.log"
    )
    assert [(c.nranks, c.ranks_seen) for c in report.communicators] == [(4, 4)]


def test_a_failed_flush_is_placed_between_the_nic_and_its_gpu() -> None:
    """'(Flush)' names the request a completion error belongs to: NCCL's GPUDirect flush,
    an RDMA read over a queue pair connected to itself (accelerate#2960): not the network,
    not the peer the line names."""
    report = _report(
        "slurm-ib-gdr-flush-rdma-read-remote-op-error-status11-vendor137-mlx5-cqe-dump-"
        "nccl2.20.5-EXCERPT.log"
    )
    said = _finding(report, "completion-error")
    assert "status 11 is IBV_WC_REM_OP_ERR (rdma-core's ibv_wc_status)" in said
    assert any(s.startswith("(Flush) is NCCL's GPUDirect flush") for s in said), said


def test_connections_through_a_host_only_interface_are_an_error() -> None:
    """Oneflow #3586: NCCL 2.7's default filter (^docker,lo) let a container's veth, with
    only an IPv6 link-local address, into the socket list as interface 1, and the channel
    lines go via NET/Socket/1: connections there cannot reach the other node (its connects
    time out). A host-only interface that no connection line shows in use stays a warning
    (an mpirun job whose socket list is lo alone, its excerpt without connection lines)."""
    report = _report(
        "socket-transport-uses-docker-veth-ipv6-linklocal-nic-connect-timed-out-oneflow-"
        "nccl2.7-EXCERPT.log"
    )
    first = report.findings[0]
    assert (first.id, first.severity) == ("socket-local-interfaces", "error")
    assert (
        "process worker:101542: its connections go via NET/Socket/1, which is veth25f2e72: "
        "they cannot reach another node through it"
    ) in first.conclusions
    assert any(":10: " in quote for quote in first.evidence)  # the connection line
    listed = _report("mpirun-tags-no-ib-socket-lo-nccl2.5.6.log")
    local = next(f for f in listed.findings if f.id == "socket-local-interfaces")
    assert local.severity == "warning" and not any("go via" in c for c in local.conclusions)


@pytest.mark.parametrize(
    "name",
    [
        "multi-5ops-dgx2-12gpu-g12-allgather-FAILED-ncclTests2.0-2.9-c864b73.txt",
        "hypercube-1node-8xb200-16-FAILED-ompi-abort-EXCERPT-ncclTests2.13.4-2.14.0.txt",
        "multi-10ops-2node-16xb200-hypercube-FAILED-ncclTests2.13.4-2.14.0.txt",
    ],
)
def test_nccl_tests_wrong_data_is_what_failed(name: str) -> None:
    """'# Out of bounds values : N FAILED': a collective returned wrong data. It leads,
    before mpirun's abort that follows from it (the DGX-2 run had been UNKNOWN)."""
    found, notes = collect_inputs([str(DATA / "nccl-tests" / name)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    assert report.status == "FAIL"
    assert report.verdict.startswith("nccl-tests found wrong results: its check of the"), (
        report.verdict
    )
    assert report.findings[0].id == "nccl-tests-wrong-data"


def test_a_cuda_call_failing_in_the_cumem_probe_is_no_failure() -> None:
    """pytorch#130113: one rank's 'Cuda failure 3' at misc/cudawrap.cc:36 is a check in
    ncclIsCuMemSupported (2.20.x), which returns a flag: NCCL goes on without cuMem there
    (the same process bootstraps on the next line). Not 'fatal: NCCL returned an error'."""
    report = _report(
        "torchrun-one-rank-cuinit-fails-cumem-probe-cudawrap-initialization-error-3-nccl2.20.x-"
        "EXCERPT.log"
    )
    finding = next(f for f in report.findings if f.id == "cuda-failure")
    assert (finding.severity, finding.fatal) == ("warning", False)
    assert report.status == "UNKNOWN"
    assert finding.conclusions[0].startswith(
        "misc/cudawrap.cc:36 is a check in NCCL's cuMem probe (ncclIsCuMemSupported"
    )


def test_a_vendor_builds_full_path_names_its_stage() -> None:
    """ROCm/vllm#390: RCCL prints its build's full path, which holds "/src/" twice
    (.../src/out/.../build/rccl/hipify/src/transport/p2p.cc): the WARN is the P2P
    transport's ('hipIpcGetMemHandle failed : invalid argument'), and so is the trail."""
    report = _report("rdna3-gfx1100-p2p-hipipcgetmemhandle-invalid-argument-rccl2.22.3-EXCERPT.log")
    assert report.findings[0].id == "p2p-setup-failed"
    trail = _finding(report, "error-trail")
    assert any("failed in the P2P (GPU to GPU) transport (/longer_pathname" in c for c in trail)


def test_ranks_on_one_gpu_that_nccl_accepted_are_not_a_duplicate_gpu() -> None:
    """Recorded on the H200: two ranks on GPU 0 as two NCCL hosts (NCCL_HOSTID, not
    echoed); each printed its nNodes line and Init COMPLETE, which NCCL prints only after
    its duplicate-GPU check passed: no ranks-share-a-gpu error."""
    name = "torchrun-plant-second-process-sigkill-nccl-debug-init-h200-torch2.11-nccl2.28.9.txt"
    found, notes = collect_inputs([str(DATA / "hang" / name)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    ids = [f.id for f in report.findings]
    assert "ranks-share-a-gpu" not in ids
    assert "launcher-reported-failure" in ids
    inside = next(f for f in report.findings if f.id == "net-inside-node")
    assert "NCCL_HOSTID made NCCL hosts of one machine" in inside.cause


def test_the_network_a_gpudirect_line_names_is_the_one_chosen() -> None:
    """nccl#901: topo.cc prints "NET/<the communicator's network> : GPU Direct RDMA ... for
    HCA n 'name'" for each of its devices: Socket, though no line says "Using network";
    net_ib.cc's own probe ("... (no module)", 2.4-2.13) is the IB module's, used or not."""
    report = _report(
        "net-socket-gdr-disabled-benign-hgx-nvswitch-4gpu-hang-cause-not-shown-nccl2.18-2.19-"
        "EXCERPT.log"
    )
    assert report.verdict.startswith(
        "NCCL chose NET/Socket (inferred from its GPU Direct RDMA lines) on all 3 processes"
    ), report.verdict
    probe = parse_nccl_log(
        ["n1:7:7 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)"]
    )
    assert choice_of(probe.processes[0]) is None


def test_what_a_line_s_own_process_says_decides_how_it_reads() -> None:
    """Three fresh posts. NVIDIA/nccl#1919: 2.23+'s "async fatal event on QP" counts as
    fatal to the communicator (ncclIbQpFatalError), and rdma-core's event text is named.
    mosaicml/diffusion#110: the proxy service failed Connect (retcode 6) and closed the
    socket its own rank then found closed: one failure, not a broken TCP connection. A
    single-node DeepSpeed job on p4d: the OFI plugin gave up where every communicator had
    nNodes 1, so NCCL's Socket fallback cost the job nothing: a warning, not a FAIL."""
    fatal = _report(
        "nccl-tests-alltoall-2node-h100-ib-async-fatal-qp-invalid-request-nccl-2.25.1-EXCERPT.log"
    )
    (event,) = fatal.findings
    assert event.fatal and "IBV_EVENT_QP_REQ_ERR on mlx5_1 port 1" in event.conclusions[0]
    assert "communicator encountered a fatal error" in event.conclusions[0]
    closed = _report("composer-2node-4090-socket-proxy-connect-closed-nccl-2.14.3-EXCERPT.log")
    proxy = closed.findings[0]
    assert proxy.id == "proxy-connect-failed" and len(proxy.evidence) == 3
    assert "with ncclRemoteError (6) and closed rank 1's connection" in proxy.conclusions[0]
    single = _report(
        "deepspeed-p4d-efa-ofi-plugin-init-failed-socket-fallback-single-node-nccl-2.27.7.log"
    )
    ofi = next(f for f in single.findings if f.id == "ofi-plugin-error")
    assert ofi.severity == "warning" and not ofi.fatal
    assert "nNodes 1" in ofi.conclusions[-1] and "NCCL went on with Socket" in ofi.conclusions[-1]


def test_a_crash_says_where_its_report_says_the_signal_stopped_it() -> None:
    """verify reads the lines around a crash line again and says the place hang says:
    UCX's frames before faulthandler's line (sglang#3837), TVM FFI's after its banner
    (vllm#27868), abseil's PC line (a GB10 log)."""
    expected = {
        "sglang-deepseek-r1-two-instances-sigsegv-saveproxy-hoststreamcallback-faulthandler-"
        "nccl-2.21.5-EXCERPT.log": "line 16 in NCCL's SaveProxy (proxy.cc:518)",
        "vllm-p2p-nccl-connector-segfault-in-cumemcreate-cumem-host-numa-probe-comminitrank-"
        "rtx3080-nccl2.27.5-EXCERPT.log": "line 4 in cuMemCreate, called from NCCL's "
        "ncclCuMemHostEnable (misc/cudawrap.cc:92)",
        "gb10-roce-gdr0-allreduce-30min-stall-then-sigsegv-in-nccllocalopappend-desync-report-"
        "blames-peer-nccl2.28.9-EXCERPT.log": "line 5 in ncclLocalOpAppend",
    }
    for name, place in expected.items():
        crashed = next(f for f in _report(name).findings if f.id == "process-crashed")
        assert any(place in c for c in crashed.conclusions), (name, crashed.conclusions)


def test_a_plugin_whose_init_failed_was_not_chosen() -> None:
    """Polaris, NCCL 2.28.3: aws-ofi-nccl found no provider and gave up, and NCCL said
    "Failed to initialize any NET plugin": the plugin's own lines prove no choice of it."""
    report = _report(
        "polaris-slingshot-aws-ofi-nccl-1.21.1-v11-no-eligible-providers-failed-to-initialize-"
        "any-net-plugin-nccl-2.28.3-EXCERPT.log"
    )
    failed = next(r for r in report.ranks if r.process.startswith("x3002c0s31b0n0:"))
    assert failed.chose is None and failed.network == ()
