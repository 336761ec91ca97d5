"""Which rdma-core provider serves which kernel driver.

The provider names are rdma-core's ``providers/<name>`` directories; each installs
``lib<name>-rdmav<ABI>.so`` into the libibverbs driver directory and a
``/etc/libibverbs.d/<name>.driver`` file (rdma-core ``buildlib/rdma_functions.cmake``,
``rdma_provider``). Alibaba's eRDMA provider ships in rdma-core since v45 and in
Alibaba's own ``libibverbs1``/``ibverbs-providers`` packages (seed 002, 004).
"""

from __future__ import annotations

__all__ = ["KERNEL_DRIVER_TO_PROVIDER", "UNKNOWN_PROVIDER", "provider_for"]

UNKNOWN_PROVIDER = "unknown"

#: PCI (or auxiliary) driver the RDMA device's parent is bound to -> provider.
KERNEL_DRIVER_TO_PROVIDER: dict[str, str] = {
    "mlx5_core": "mlx5",
    "mlx5_ib": "mlx5",
    "mlx4_core": "mlx4",
    "mlx4_ib": "mlx4",
    "erdma": "erdma",
    "irdma": "irdma",
    "i40iw": "i40iw",
    "ice": "irdma",
    "i40e": "irdma",
    "efa": "efa",
    "bnxt_en": "bnxt_re",
    "bnxt_re": "bnxt_re",
    "qede": "qedr",
    "qedr": "qedr",
    "hns3": "hns",
    "hns_roce_hw_v2": "hns",
    "rdma_rxe": "rxe",
    "siw": "siw",
    "vmw_pvrdma": "vmw_pvrdma",
    "cxgb4": "cxgb4",
    "ionic": "ionic",
    "mana": "mana",
    "mana_ib": "mana",
    "ocrdma": "ocrdma",
    "be2net": "ocrdma",
    "hfi1": "hfi1verbs",
    "ib_qib": "ipathverbs",
}

# Device names the kernel drivers give (mlx5_0, erdma_0, efa_0, bnxt_re0, rxe0, ...).
_NAME_PREFIXES: tuple[tuple[str, str], ...] = (
    ("mlx5", "mlx5"),
    ("mlx4", "mlx4"),
    ("erdma", "erdma"),
    ("irdma", "irdma"),
    ("i40iw", "i40iw"),
    ("efa", "efa"),
    ("bnxt_re", "bnxt_re"),
    ("qedr", "qedr"),
    ("hns", "hns"),
    ("rxe", "rxe"),
    ("siw", "siw"),
    ("vmw_pvrdma", "vmw_pvrdma"),
    ("cxgb4", "cxgb4"),
    ("ionic", "ionic"),
    ("mana", "mana"),
    ("hfi1", "hfi1verbs"),
    ("qib", "ipathverbs"),
)

# PCI vendor id -> provider (the PCI ids database, pci-ids.ucw.cz).
_VENDOR_PROVIDERS: dict[int, str] = {
    0x1DED: "erdma",  # Alibaba (T-Head)
    0x8086: "irdma",  # Intel E810 / X722
    0x1D0F: "efa",  # Amazon
    0x14E4: "bnxt_re",  # Broadcom
    0x1077: "qedr",  # QLogic / Marvell
    0x19E5: "hns",  # Huawei
    0x15AD: "vmw_pvrdma",  # VMware
    0x1414: "mana",  # Microsoft
}
_MELLANOX_VENDORS = (0x02C9, 0x15B3)  # IEEE OUI as ibv_devinfo prints it, PCI vendor id


def _from_vendor(vendor_id: str | None, part_id: str | None) -> str | None:
    try:
        vendor = int(vendor_id, 0) if vendor_id else None
        part = int(part_id, 0) if part_id else None
    except ValueError:
        return None
    if vendor in _MELLANOX_VENDORS:
        if part is None:
            return None
        # Connect-IB (4113) and every ConnectX-4 or later, BlueField (0xa2d2...) are mlx5;
        # ConnectX-3 and older (4099-4104, 0x673c...) are mlx4 (kernel mlx5/main.c id table).
        return "mlx5" if 4113 <= part < 0x2000 or part >= 0xA2D0 else "mlx4"
    return _VENDOR_PROVIDERS.get(vendor) if vendor is not None else None


def provider_for(
    device_name: str,
    kernel_driver: str | None,
    *,
    vendor_id: str | None = None,
    part_id: str | None = None,
) -> str:
    """The provider family of a device: from its kernel driver, its name, or its ids.

    >>> provider_for("mlx5_0", "mlx5_core")
    'mlx5'
    >>> provider_for("rocep0s6", None, vendor_id="0x02c9", part_id="4119")
    'mlx5'

    A device renamed by udev (``rocep59s0f0``, ``ibp59s0``) with no known driver
    or vendor is ``unknown`` rather than a guess.
    """
    if kernel_driver and kernel_driver in KERNEL_DRIVER_TO_PROVIDER:
        return KERNEL_DRIVER_TO_PROVIDER[kernel_driver]
    for prefix, provider in _NAME_PREFIXES:
        if device_name.startswith(prefix):
            return provider
    by_vendor = _from_vendor(vendor_id, part_id)
    if by_vendor:
        return by_vendor
    return kernel_driver or UNKNOWN_PROVIDER
