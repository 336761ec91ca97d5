"""Scnet (seed 001): the platform's preset NCCL variables and its torchrun example."""

from __future__ import annotations

from hpnet.profiles.model import Launch, PackageSet, Profile, Requirements, Setting, Source

__all__ = ["SCNET"]

SCNET_VARS = Source(
    title="Scnet: RDMA, distributed training over the high-performance network",
    seed="001_2a9a15a98fd62c43.txt",
    section="1. configure high-performance network variables (default variables)",
)
SCNET_CASE = Source(
    title=SCNET_VARS.title, seed=SCNET_VARS.seed, section="2. RDMA use case: PyTorch"
)


def _scnet(name: str, value: str, why: str) -> Setting:
    return Setting(name=name, value=value, why=why, source=SCNET_VARS)


SCNET = Profile(
    name="scnet",
    title="Scnet (Mellanox RDMA, InfiniBand or RoCE)",
    transport="rdma",
    summary="Scnet's preset variables: mlx5 devices, TC 136, GID index 3, long timeouts, "
    "8 QPs per connection, IB transport forced on.",
    sources=(SCNET_VARS, SCNET_CASE),
    settings=(
        _scnet(
            "NCCL_IB_TC",
            "136",
            "matches the network's mapping rule; unset or wrong hurts performance",
        ),
        _scnet("NCCL_IB_GID_INDEX", "3", "the recommended value; unset or wrong makes NCCL fail"),
        _scnet(
            "NCCL_SOCKET_IFNAME",
            "eth",
            "the port connections are set up on; specifications "
            "differ; unset or wrong can make connection setup fail",
        ),
        _scnet("NCCL_DEBUG", "INFO", "more NCCL log output to locate problems"),
        _scnet(
            "NCCL_IB_HCA", "mlx5", "the RDMA NICs; their number and naming differ between nodes"
        ),
        _scnet("NCCL_IB_TIMEOUT", "22", "a longer RDMA timeout makes jobs more fault tolerant"),
        _scnet("NCCL_IB_QPS_PER_CONNECTION", "8", "more QPs per connection raise throughput"),
        _scnet("NCCL_IB_DISABLE", "0", "keeps the InfiniBand transport enabled"),
    ),
    # NCCL_IB_HCA=mlx5: Mellanox NICs
    providers=("mlx5",),
    requirements=Requirements(
        notes=(
            "ibstatus or ibv_devices must list the RDMA devices",
            "an RDMA driver such as libibverbs-dev must be installed",
            "the same PyTorch and CUDA versions on every node",
        ),
        source=SCNET_CASE,
    ),
    packages=(
        PackageSet(
            # The guide names a Debian-family package ("install an RDMA driver such as
            # libibverbs-dev", which pulls in libibverbs1 and ibverbs-providers) and checks
            # the node with `ibstatus` or `ibv_devices`: infiniband-diags and ibverbs-utils
            # carry those two commands (rdma-core's debian/control).
            distros=("ubuntu", "debian"),
            manager="apt",
            packages=("libibverbs-dev", "ibverbs-utils", "infiniband-diags"),
            source=SCNET_CASE,
        ),
    ),
    launch=Launch(
        engines=("torchrun",),
        notes=(
            "each node exports MASTER_ADDR, MASTER_PORT (e.g. 29500), WORLD_SIZE and RANK "
            "and starts the script with init_method='env://'",
            "on hosts the interface is ib0; inside pods it is eth0, and vcjob pods get the "
            "NCCL variables injected",
            "success: 'via NET/IB' in the NCCL_DEBUG=INFO log",
        ),
        source=SCNET_CASE,
    ),
)
