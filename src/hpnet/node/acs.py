"""PCIe Access Control Services on the bridges between GPUs and NICs.

With ACS P2P Request/Completion Redirect on, a switch sends peer-to-peer traffic
(GPUDirect RDMA between a GPU and a NIC under it) up to the root complex: slower,
and with IOMMUs a known cause of hangs. NCCL's troubleshooting guide disables it
with ``setpci -s <BDF> ECAP_ACS+0x6.w=0000``.

The ACS extended capability (ID 0x000D) lives in PCIe extended config space
(offset 0x100 on, readable in ``/sys/bus/pci/devices/<BDF>/config`` by root only);
its Control register is at +6: bit 2 P2P Request Redirect, bit 3 P2P Completion
Redirect (PCIe Base Specification, "ACS Extended Capability").
"""

from __future__ import annotations

from collections.abc import Iterable

from hpnet.node.sysfs import FsRoot

__all__ = ["ACS_CAP_ID", "acs_redirect", "bridges_between", "read_acs"]

ACS_CAP_ID = 0x000D
_REDIRECT = 0x0004 | 0x0008  # P2P Request Redirect, P2P Completion Redirect


def acs_redirect(config: bytes) -> bool | None:
    """Whether a device's ACS redirects P2P traffic; None if extended config space
    is not in ``config`` (a non-root read returns only the first 64 or 256 bytes).

    A bridge without the ACS capability redirects nothing (False).
    """
    if len(config) < 0x108:
        return None
    offset, seen = 0x100, set()
    while offset and offset not in seen and offset + 8 <= len(config):
        seen.add(offset)
        header = int.from_bytes(config[offset : offset + 4], "little")
        if header in (0, 0xFFFFFFFF):
            return False
        if header & 0xFFFF == ACS_CAP_ID:
            control = int.from_bytes(config[offset + 6 : offset + 8], "little")
            return bool(control & _REDIRECT)
        offset = (header >> 20) & 0xFFC
    return False


def bridges_between(chain_a: tuple[str, ...], chain_b: tuple[str, ...]) -> list[str]:
    """The bridge ports on the PCIe path between two devices under one root bus."""
    if not chain_a or not chain_b or chain_a[0] != chain_b[0]:
        return []
    common = 0
    for left, right in zip(chain_a, chain_b, strict=False):
        if left != right:
            break
        common += 1
    # the deepest shared bridge, then each side's bridges below it (not the endpoints)
    shared = [chain_a[common - 1]] if common > 1 else []
    return shared + list(chain_a[common:-1]) + list(chain_b[common:-1])


def read_acs(fs: FsRoot, bridges: Iterable[str]) -> dict[str, bool | None]:
    """``acs_redirect`` of each bridge's config space under ``fs``."""
    result: dict[str, bool | None] = {}
    for bdf in sorted(set(bridges)):
        config = fs.read_bytes(f"sys/bus/pci/devices/{bdf}/config")
        result[bdf] = acs_redirect(config) if config is not None else None
    return result
