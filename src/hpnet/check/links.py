"""Live readings of the links a collective crosses inside a node (NVML's NVLinks, the
GPUs' PCIe links in sysfs); the judgement is pure (hpnet.check.expect)."""

from __future__ import annotations

__all__ = ["read_nvlinks", "read_pcie"]

#: NVML_NVLINK_MAX_LINKS (nvml.h): 18 from Hopper on
MAX_LINKS = 18


def read_nvlinks() -> dict[int, tuple[int, int]]:
    """GPU index -> (active NVLinks, NVLink version); {} when NVML is not there."""
    try:
        import pynvml  # noqa: PLC0415 - optional at run time

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no NVML: no NVLink reading, said by the caller
        return {}
    found: dict[int, tuple[int, int]] = {}
    try:
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            active, version = 0, 0
            for link in range(MAX_LINKS):
                try:
                    if pynvml.nvmlDeviceGetNvLinkState(handle, link) != 1:
                        continue
                    active += 1
                    version = max(version, int(pynvml.nvmlDeviceGetNvLinkVersion(handle, link)))
                except pynvml.NVMLError:  # a link number this GPU does not have
                    break
            found[index] = (active, version)
    finally:
        pynvml.nvmlShutdown()
    return found


def read_pcie(sysfs_root: str, bus_id: str) -> tuple[str | None, int | None]:
    """(current_link_speed, current_link_width) of a PCI function in sysfs."""
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    fs = FsRoot(sysfs_root)
    base = f"sys/bus/pci/devices/{bus_id}"
    return fs.read(f"{base}/current_link_speed"), fs.read_int(f"{base}/current_link_width")
