"""rdma-core as the distributions package it: what an image needs when its platform's
guide names no packages of its own (ModelArts, the generic InfiniBand and RoCE
profiles), and what ``hpnet doctor`` proposes without a profile.

The package names are those rdma-core's own packaging builds: ``debian/control``
(Debian and Ubuntu: ``libibverbs1``, ``ibverbs-providers`` with every provider,
``librdmacm1``, ``ibverbs-utils`` with ``ibv_devinfo``) and ``redhat/rdma-core.spec``
(the RHEL family: ``rdma-core``, ``libibverbs`` with the providers, ``librdmacm``,
``libibverbs-utils``), https://github.com/linux-rdma/rdma-core. ``ibv_devinfo`` is how
the guides check a node (ECS eRDMA: ``PORT_ACTIVE`` on every device).
"""

from __future__ import annotations

from hpnet.distros import FAMILIES
from hpnet.profiles.model import PackageSet, Source

__all__ = ["RDMA_CORE", "RDMA_CORE_APT", "RDMA_CORE_PACKAGING", "RDMA_CORE_YUM"]

RDMA_CORE_PACKAGING = Source(
    title="rdma-core's packaging: debian/control and redhat/rdma-core.spec",
    url="https://github.com/linux-rdma/rdma-core",
)

RDMA_CORE_APT = PackageSet(
    distros=FAMILIES["apt"],
    manager="apt",
    packages=("libibverbs1", "ibverbs-providers", "librdmacm1", "ibverbs-utils"),
    source=RDMA_CORE_PACKAGING,
)
RDMA_CORE_YUM = PackageSet(
    distros=FAMILIES["yum"],
    manager="yum",
    packages=("rdma-core", "libibverbs", "librdmacm", "libibverbs-utils"),
    source=RDMA_CORE_PACKAGING,
)
RDMA_CORE: tuple[PackageSet, ...] = (RDMA_CORE_APT, RDMA_CORE_YUM)
