"""Huawei ModelArts (seed 003): the Horovod / MPI / MindSpore-GPU engine's mpirun."""

from __future__ import annotations

from hpnet.profiles.model import InstanceType, Launch, Profile, Requirements, Setting, Source

__all__ = ["MODELARTS"]

MA = Source(
    title="ModelArts: Horovod/MPI/MindSpore-GPU (startup principle and commands)",
    seed="003_9c2021db6d318afb.txt",
    section="Startup commands",
)
MA_NET = Source(title=MA.title, seed=MA.seed, section="Network communication")


def _ma(name: str, value: str) -> Setting:
    return Setting(name=name, value=value, why="in ModelArts' default OPENMPI_X_ARGS", source=MA)


MODELARTS = Profile(
    name="modelarts",
    title="Huawei ModelArts (Horovod / MPI / MindSpore-GPU, 100 Gbit/s IB or RoCE)",
    transport="rdma",
    summary="ModelArts starts jobs with mpirun and forwards NCCL settings with -x: IB "
    "transport on, interfaces ib0, bond0 or eth0 over IPv4.",
    sources=(MA, MA_NET),
    settings=(  # in OPENMPI_X_ARGS' order
        _ma("HOROVOD_MPI_THREADS_DISABLE", "1"),
        _ma("NCCL_DEBUG", "INFO"),
        _ma("NCCL_SOCKET_IFNAME", "ib0,bond0,eth0"),
        _ma("NCCL_SOCKET_FAMILY", "AF_INET"),
        _ma("NCCL_IB_DISABLE", "0"),
    ),
    detect=("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME"),
    requirements=Requirements(
        notes=(
            "between nodes: a 100 Gbit/s InfiniBand or RoCE NIC; inside a node NVLink and "
            "shared memory",
        ),
        source=MA_NET,
    ),
    launch=Launch(
        engines=("mpirun",),
        mpirun_args=(
            "-np",
            "${OPENMPI_NP}",
            "-hostfile",
            "${OPENMPI_HOST_FILE_PATH}",
            "-mca",
            "plm_rsh_args",
            "-p ${SSHD_PORT}",
            "-tune",
            "${TUNE_ENV_FILE}",
            "-bind-to",
            "none",
            "-map-by",
            "slot",
            "-x",
            "LD_LIBRARY_PATH",
            "-x",
            "HOROVOD_MPI_THREADS_DISABLE=1",
            "-x",
            "NCCL_DEBUG=INFO",
            "-x",
            "NCCL_SOCKET_IFNAME=ib0,bond0,eth0",
            "-x",
            "NCCL_SOCKET_FAMILY=AF_INET",
            "-x",
            "NCCL_IB_DISABLE=0",
            "-mca",
            "pml",
            "ob1",
            "-mca",
            "btl",
            "^openib",
            "-mca",
            "plm_rsh_no_tree_spawn",
            "true",
        ),
        # env | grep -E '^MA_|^SHARED_|^S3_|^PATH|^VC_WORKER_|^SCC|^CRED' | grep -v '=$'
        # (hpnet launch never forwards a secret by prefix, CRED* included: only named
        # with --env, see hpnet.secrets; the prefix stays to say what the guide does)
        forwarded_prefixes=("MA_", "SHARED_", "S3_", "PATH", "VC_WORKER_", "SCC", "CRED"),
        env_file=True,
        notes=(
            "OPENMPI_NP is GPUs x nodes; do not change it, the hostfile or SSHD_PORT",
            "worker-0's variables with those prefixes (non-empty only) go to every worker "
            "through TUNE_ENV_FILE",
            "hpnet launch writes that file itself: a value Open MPI's tune file cannot carry "
            "(a space, tab, ';', a quote at either end) goes by name instead (-x NAME), and a "
            "secret (CRED*, a credential in a URL) only when named with --env",
        ),
        source=MA,
    ),
    instance_types=(
        InstanceType(
            name="GPU: 8 x NVIDIA-V100 | CPU: 72 cores | Memory: 512 GB", gpus=8, source=MA_NET
        ),
    ),
)
