"""Alibaba Cloud: PAI Lingjun (seed 000 and the English page, see below), ECS eRDMA
with AIACC (seed 002), PAI-DLC eRDMA (seed 004). Every value below is taken from the
guide its ``Source`` names; the seeds are the copies under ``shared/seeds/``."""

from __future__ import annotations

from hpnet.profiles.model import (
    SEED_URLS,
    BandwidthReference,
    InstanceType,
    Launch,
    PackageSet,
    Profile,
    Requirements,
    Setting,
    Source,
)

__all__ = ["ECS_ERDMA", "PAI_DLC_ERDMA", "PAI_LINGJUN"]

# -------------------------------------------------------------------- PAI Lingjun

LINGJUN = Source(
    title="PAI: configure a high-performance network for DLC jobs on Lingjun resources",
    seed="000_834719b22dbb6842.txt",
    section="PAI default settings / NCCL environment variables",
)
# The seed (Japanese) lost every cell of its per-specification table: it names neither
# NCCL_IB_SL nor NCCL_NET_PLUGIN, nor the specifications. Those values are the English
# Lingjun page's (shared/guide/PRODUCT.md records them: its profile table, "the English
# page lists specs ..."): this source cites that page, which a user can open, not the
# seed.
LINGJUN_TABLE = Source(
    title="PAI Lingjun default NCCL settings per specification: the English Lingjun page "
    "(its table; the seed's Japanese copy of the table is empty)",
    url=SEED_URLS["000_834719b22dbb6842.txt"],
    section="PAI default settings (table)",
)
LINGJUN_IMAGE = Source(title=LINGJUN.title, seed=LINGJUN.seed, section="Custom images")


def _lingjun(name: str, value: str, why: str) -> Setting:
    return Setting(name=name, value=value, why=why, source=LINGJUN_TABLE)


PAI_LINGJUN = Profile(
    name="pai-lingjun",
    title="Alibaba PAI Lingjun (serverless DLC, RoCE)",
    transport="roce",
    summary="PAI's defaults for DLC jobs on Lingjun resources: RoCE with Alibaba's QoS "
    "mapping (TC 136, SL 5), GID index 3, long IB timeouts, 8 QPs per connection.",
    sources=(LINGJUN, LINGJUN_TABLE),
    settings=(
        _lingjun(
            "NCCL_IB_TC",
            "136",
            "Alibaba Cloud's network mapping rule; unset or wrong hurts network performance",
        ),
        _lingjun("NCCL_IB_SL", "5", "service level of Alibaba Cloud's network mapping"),
        _lingjun("NCCL_IB_GID_INDEX", "3", "the GID RDMA uses; unset or wrong makes NCCL fail"),
        _lingjun(
            "NCCL_SOCKET_IFNAME",
            "eth",
            "the IP interface NCCL connects over; depends on the specification",
        ),
        _lingjun("NCCL_DEBUG", "INFO", "recommended to speed up troubleshooting"),
        _lingjun("NCCL_IB_HCA", "mlx5", "the RDMA devices; their number and names differ by node"),
        _lingjun("NCCL_IB_TIMEOUT", "22", "a longer timeout makes jobs more tolerant of faults"),
        _lingjun(
            "NCCL_IB_QPS_PER_CONNECTION", "8", "more queue pairs per connection raise throughput"
        ),
        _lingjun("NCCL_NET_PLUGIN", "none", "use NCCL's built-in IB transport, no plugin"),
    ),
    requirements=Requirements(
        cuda_min="11.2", nccl_min="2.12.10", python="3", source=LINGJUN_IMAGE
    ),
    # NCCL_IB_HCA=mlx5 and the Mellanox rdma-core installer: ConnectX NICs
    providers=("mlx5",),
    packages=(
        PackageSet(
            distros=("ubuntu",),
            manager="apt",
            packages=(
                "libnl-3-dev",
                "libnl-route-3-dev",
                "libnl-3-200",
                "libnl-route-3-200",
                "iproute2",
                "udev",
                "dmidecode",
                "ethtool",
            ),
            # the guide's `apt-get install -y --allow-downgrades ...` (seed 000, Custom images)
            install_flags=(
                "--allow-downgrades",
                "--allow-change-held-packages",
                "--no-install-recommends",
            ),
            installer="http://pythonrun.oss-cn-zhangjiakou.aliyuncs.com/rdma/"
            "nic-libs-mellanox-rdma-5.2-2/nic-lib-rdma-core-installer-ubuntu.tar.gz",
            source=LINGJUN_IMAGE,
        ),
    ),
    launch=Launch(
        engines=("dlc",),
        notes=("PAI sets these variables in DLC jobs; keep its defaults unless measured",),
        source=LINGJUN,
    ),
    instance_types=tuple(
        InstanceType(name=name, source=LINGJUN_TABLE)
        for name in (
            "ml.gu7xf.c96m1600.8-gu108",
            "ml.gu7xf.8xlarge-gu108",
            "ml.gu7ef.c96m1600.8-gu100",
            "ml.gu8xf.8xlarge-gu108",
        )
    ),
)

# -------------------------------------------------------------------- ECS eRDMA + AIACC

ECS = Source(
    title="ECS: deploy an AI training cluster on eRDMA-enhanced instances",
    seed="002_ef36f584565cda0e.txt",
)
ECS_AIACC = Source(title=ECS.title, seed=ECS.seed, section="AIACC environment")
ECS_CONTAINER = Source(
    title=ECS.title, seed=ECS.seed, section="Option 2: start training in containers"
)
ECS_TEST = Source(title=ECS.title, seed=ECS.seed, section="Step 4: performance tests")

ECS_ERDMA = Profile(
    name="ecs-erdma",
    title="Alibaba ECS eRDMA instances with the AIACC NCCL plugin",
    transport="erdma",
    summary="eRDMA through Alibaba's AIACC NCCL plugin, which finds the eRDMA devices "
    "itself: no NCCL variable is required; NCCL_DEBUG=INFO to verify.",
    sources=(ECS, ECS_AIACC, ECS_CONTAINER, ECS_TEST),
    settings=(
        Setting(
            name="NCCL_DEBUG",
            value="INFO",
            why="the guide's mpirun line sets it to verify",
            source=ECS_TEST,
        ),
    ),
    # The plugin selects devices and interfaces itself ("no extra communication
    # parameters are needed ... recognised automatically"): nothing to fill from the node.
    detect=(),
    providers=("erdma",),
    requirements=Requirements(
        nccl_min="2.8",
        nccl_max="2.16",
        notes=(
            "the AIACC nccl-plugin supports NCCL 2.8.x to 2.16.x",
            "operating systems: CentOS 7/8, Alibaba Cloud Linux, Ubuntu 18/20",
        ),
        source=ECS_AIACC,
    ),
    packages=(
        PackageSet(
            distros=("centos7", "centos8", "alinux2", "alinux3"),
            manager="yum",
            packages=("libibverbs", "rdma-core", "librdmacm", "libibverbs-utils"),
            repository="https://mirrors.aliyun.com/erdma/yum/redhat/$releasever/erdma/x86_64",
            gpg_key="https://mirrors.aliyun.com/erdma/GPGKEY",
            repo_name="erdma",
            # the AIACC NCCL plugin the profile relies on: rpm -i after download
            plugin_package="https://ali-perseus-release.oss-cn-huhehaote.aliyuncs.com/ACSpeed/"
            "nccl-plugin/rpm/aiacc-nccl-plugin-1.0.2.rpm",
            source=ECS_CONTAINER,
        ),
        PackageSet(
            distros=("ubuntu20.04",),
            manager="apt",
            packages=("libibverbs1", "ibverbs-providers", "ibverbs-utils", "librdmacm1"),
            repository="deb [ arch=amd64 ] https://mirrors.aliyun.com/erdma/apt/ubuntu "
            "focal/erdma main",
            gpg_key="https://mirrors.aliyun.com/erdma/GPGKEY",
            repo_name="erdma",
            plugin_package="https://ali-perseus-release.oss-cn-huhehaote.aliyuncs.com/ACSpeed/"
            "nccl-plugin/deb/aiacc-nccl-plugin-1.0.2.deb",
            source=ECS_CONTAINER,
        ),
        PackageSet(
            distros=("ubuntu18.04",),
            manager="apt",
            packages=("libibverbs1", "ibverbs-providers", "ibverbs-utils", "librdmacm1"),
            repository="deb [ arch=amd64 ] https://mirrors.aliyun.com/erdma/apt/ubuntu "
            "bionic/erdma main",
            gpg_key="https://mirrors.aliyun.com/erdma/GPGKEY",
            repo_name="erdma",
            plugin_package="https://ali-perseus-release.oss-cn-huhehaote.aliyuncs.com/ACSpeed/"
            "nccl-plugin/deb/aiacc-nccl-plugin-1.0.2.deb",
            source=ECS_CONTAINER,
        ),
    ),
    container_flags=(
        "--runtime=nvidia",
        "--shm-size=8g",
        "--ipc=host",
        "--device=/dev/infiniband/rdma_cm",
        "--device=/dev/infiniband/uverbs0",
        "--device=/dev/infiniband/uverbs1",
        "--ulimit memlock=-1",
        "--net=host",
    ),
    launch=Launch(
        engines=("mpirun", "torchrun"),
        mpirun_args=(
            "--allow-run-as-root",
            "-np",
            "16",
            "-npernode",
            "8",
            "--hostfile",
            "hostfile.txt",
            "-x",
            "PATH",
            "-x",
            "LD_LIBRARY_PATH",
            "-x",
            "NCCL_DEBUG=INFO",
            "--bind-to",
            "none",
            "-mca",
            "btl_tcp_if_include",
            "eth0",
        ),
        notes=(
            "nccl-tests: all_reduce_perf -b 1B -e 512M -f 2 -g 1 -n 1000 -w 1000 -c 0 -z 0 "
            "-o sum under that mpirun",
            "end-to-end: python -m torch.distributed.launch --nproc_per_node 8 --nnodes N "
            "--node_rank R --master_addr A --master_port 6000 benchmark.py",
        ),
        source=ECS_TEST,
    ),
    instance_types=(
        InstanceType(name="ecs.ebmgn7ex.32xlarge", rdma_nics=2, gpus=8, source=ECS_CONTAINER),
    ),
    bandwidth=(
        BandwidthReference(
            op="all_reduce",
            hosts=2,
            ranks=16,
            size_bytes=512 << 20,
            busbw_gbps=18.61,
            tool="all_reduce_perf -b 1B -e 512M -f 2 -g 1 -n 1000 -w 1000 -c 0 -z 0 -o sum",
            source=ECS_TEST,
        ),
    ),
    reference=(
        "2 nodes x 8 GPUs, all_reduce_perf: busbw 18.61 GB/s at 512 MiB, ~92 us at small sizes",
        "end-to-end benchmark, 16 GPUs: 1306 samples/s at p50 (0.098 s per step)",
    ),
    notes=("ibv_devinfo must show PORT_ACTIVE on both eRDMA devices inside the container",),
)

# -------------------------------------------------------------------- PAI-DLC eRDMA

DLC = Source(
    title="PAI-DLC: use eRDMA with general computing resources",
    seed="004_0b7006ad006b14ad.txt",
)
DLC_VARS = Source(
    title=DLC.title, seed=DLC.seed, section="eRDMA high-performance network variables"
)
DLC_PUBLIC = Source(title=DLC.title, seed=DLC.seed, section="Public environment variables")
DLC_IMAGE = Source(title=DLC.title, seed=DLC.seed, section="Configure a custom image")
DLC_TYPES = Source(title=DLC.title, seed=DLC.seed, section="Limits (instance types)")


def _dlc(name: str, value: str, why: str) -> Setting:
    return Setting(name=name, value=value, why=why, source=DLC_VARS)


PAI_DLC_ERDMA = Profile(
    name="pai-dlc-erdma",
    title="Alibaba PAI-DLC general computing resources with eRDMA",
    transport="erdma",
    summary="PAI's preset variables for eRDMA instance types: the erdma devices through "
    "NCCL's own IB transport (no plugin), GID index 1, 8 QPs, at least 16 channels.",
    sources=(DLC, DLC_VARS, DLC_PUBLIC, DLC_IMAGE, DLC_TYPES),
    settings=(
        _dlc("NCCL_DEBUG", "INFO", "PAI's preset"),
        _dlc("NCCL_SOCKET_IFNAME", "eth0", "PAI's preset"),
        _dlc("NCCL_IB_GID_INDEX", "1", "PAI's preset"),
        _dlc("NCCL_IB_HCA", "erdma", "PAI's preset: the eRDMA devices"),
        _dlc("NCCL_IB_QPS_PER_CONNECTION", "8", "PAI's preset"),
        _dlc("NCCL_MIN_NCHANNELS", "16", "PAI's preset"),
        _dlc("NCCL_NET_PLUGIN", "none", "PAI's preset: NCCL's built-in IB transport"),
        Setting(name="PYTHONUNBUFFERED", value="1", why="PAI's public preset", source=DLC_PUBLIC),
    ),
    not_applicable=("NCCL_IB_TC", "NCCL_IB_SL", "NCCL_IB_TIMEOUT"),
    providers=("erdma",),
    requirements=Requirements(
        cuda_min="12.1",
        nccl_min="2.19",
        python="3",
        notes=("the eRDMA feature needs NCCL 2.19 or later",),
        source=DLC_IMAGE,
    ),
    packages=(
        PackageSet(
            distros=("ubuntu22.04",),
            manager="apt",
            packages=("libibverbs1", "ibverbs-providers", "ibverbs-utils", "librdmacm1"),
            repository="deb [ ] http://mirrors.aliyun.com/erdma/apt/ubuntu jammy/erdma main",
            gpg_key="http://mirrors.aliyun.com/erdma/GPGKEY",
            repo_name="erdma",
            # "If the RDMA library is already installed in the image, uninstall it first."
            remove_first=(
                "libibverbs1",
                "ibverbs-providers",
                "ibverbs-utils",
                "librdmacm1",
                "/etc/apt/sources.list.d/mellanox_mlnx_ofed.list",
            ),
            source=DLC_IMAGE,
        ),
    ),
    launch=Launch(
        engines=("mpijob", "pytorchjob", "dlc"),
        notes=(
            "PAI sets these variables itself for eRDMA instance types; nccl-tests run as an MPIJob",
        ),
        source=DLC,
    ),
    # The seed lists ecs.gn8is-4x.16xlarge twice, with the same count.
    instance_types=tuple(
        InstanceType(name=name, rdma_nics=nics, source=DLC_TYPES)
        for name, nics in (
            ("ecs.ebmgn7v.32xlarge", 2),
            ("ecs.ebmgn8v.48xlarge", 2),
            ("ecs.ebmgn8is.32xlarge", 2),
            ("ecs.ebmgn8i.32xlarge", 4),
            ("ecs.gn8is.2xlarge", 1),
            ("ecs.gn8is.4xlarge", 1),
            ("ecs.gn8is-2x.8xlarge", 1),
            ("ecs.gn8is-4x.16xlarge", 1),
        )
    ),
    notes=("TZ is also preset, to the job's region (usually Asia/Shanghai)",),
)
