"""NVIDIA GPUs: through NVML, else ``nvidia-smi``, else the PCI bus in sysfs.

Never imports torch. NVML comes from ``nvidia-ml-py`` (module ``pynvml``), a thin
ctypes binding that needs ``libnvidia-ml.so.1`` from the driver; a node without
the driver simply has no NVML.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence

from hpnet.errors import ParseError
from hpnet.node.sysfs import BDF_RE, FsRoot, pci_chain
from hpnet.runner import Runner

__all__ = [
    "Gpu",
    "GpuReport",
    "normalize_bus_id",
    "parse_nvidia_smi_xml",
    "read_gpus_nvidia_smi",
    "read_gpus_nvml",
    "read_gpus_sysfs",
    "visible_gpu_count",
]

NVIDIA_VENDOR = "0x10de"
# PCI class codes: 0x0300xx VGA controller, 0x0302xx 3D controller (datacenter GPUs).
GPU_CLASS_PREFIXES = ("0x0300", "0x0302")
NVIDIA_SMI_XML = ("nvidia-smi", "-q", "-x")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Gpu:
    index: int
    name: str
    pci_bus_id: str  # 0000:3b:00.0, lower case, 4-digit domain (sysfs spelling)
    uuid: str | None = None
    memory_total_mib: int | None = None
    numa_node: int | None = None
    pci_path: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GpuReport:
    """GPUs plus the driver facts the same source reported."""

    source: str  # "nvml", "nvidia-smi", "sysfs" or "none"
    gpus: tuple[Gpu, ...] = ()
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    error: str | None = None  # why a better source was not used


def visible_gpu_count(gpus: Sequence[Gpu], environ: Mapping[str, str]) -> int:
    """The GPUs a CUDA program started here sees: NVML's, narrowed by
    CUDA_VISIBLE_DEVICES, which CUDA reads up to its first invalid entry (an index out
    of range, ``-1``, a UUID that names no GPU); an empty value hides every GPU.

    >>> four = [Gpu(index=i, name="H200", pci_bus_id="", uuid=f"GPU-{i}abc") for i in range(4)]
    >>> [visible_gpu_count(four, e) for e in ({}, {"CUDA_VISIBLE_DEVICES": "0,2"})]
    [4, 2]
    >>> [visible_gpu_count(four, {"CUDA_VISIBLE_DEVICES": v}) for v in ("", "-1", "1,7,2", "GPU-3")]
    [0, 0, 1, 1]
    """
    value = environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return len(gpus)
    count = 0
    for raw in value.split(","):
        entry = raw.strip()
        if entry.isdigit():
            valid = int(entry) < len(gpus)
        elif entry.startswith("GPU-"):  # a UUID or a unique prefix of one
            valid = sum(1 for g in gpus if (g.uuid or "").startswith(entry)) == 1
        else:  # MIG-... instances NVML lists elsewhere; anything else is invalid
            valid = entry.startswith("MIG-")
        if not valid:
            break
        count += 1
    return count


def normalize_bus_id(bus_id: str) -> str:
    """NVML's ``00000000:3B:00.0`` -> sysfs's ``0000:3b:00.0``.

    >>> normalize_bus_id("00000000:3B:00.0")
    '0000:3b:00.0'
    """
    text = bus_id.strip().lower()
    domain, _, rest = text.partition(":")
    if rest and len(domain) > 4:
        domain = domain[-4:]
    return f"{domain}:{rest}" if rest else text


def _with_sysfs(fs: FsRoot, gpu: Gpu) -> Gpu:
    """Add the NUMA node and PCI path of a GPU found by NVML or nvidia-smi."""
    rel = f"sys/bus/pci/devices/{gpu.pci_bus_id}"
    resolved = fs.resolve(rel)
    numa = fs.read_int(f"{rel}/numa_node")
    return dataclasses.replace(
        gpu,
        numa_node=numa if numa is not None and numa >= 0 else None,
        pci_path=pci_chain(resolved) if resolved else (),
    )


def read_gpus_nvml(fs: FsRoot) -> GpuReport:
    """GPUs through NVML. Raises nothing: errors come back in ``GpuReport.error``."""
    try:
        import pynvml  # noqa: PLC0415 - optional at run time, imported only here
    except ImportError:
        return GpuReport(source="none", error="nvidia-ml-py (pynvml) is not installed")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return GpuReport(source="none", error=f"NVML unavailable: {exc}")
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            gpus.append(
                _with_sysfs(
                    fs,
                    Gpu(
                        index=index,
                        name=_text(pynvml.nvmlDeviceGetName(handle)),
                        pci_bus_id=normalize_bus_id(
                            _text(pynvml.nvmlDeviceGetPciInfo(handle).busId)
                        ),
                        uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
                        memory_total_mib=int(memory.total) // (1024 * 1024),
                    ),
                )
            )
        cuda = int(pynvml.nvmlSystemGetCudaDriverVersion_v2())
        return GpuReport(
            source="nvml",
            gpus=tuple(gpus),
            driver_version=_text(pynvml.nvmlSystemGetDriverVersion()),
            cuda_driver_version=f"{cuda // 1000}.{cuda % 1000 // 10}",
        )
    except pynvml.NVMLError as exc:
        return GpuReport(source="none", error=f"NVML query failed: {exc}")
    finally:
        with contextlib.suppress(pynvml.NVMLError):
            pynvml.nvmlShutdown()


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def parse_nvidia_smi_xml(text: str, *, source: str = "nvidia-smi -q -x") -> GpuReport:
    """Parse ``nvidia-smi -q -x`` output (pure).

    Raises :class:`~hpnet.errors.ParseError` when the text is not that XML.
    """
    import xml.etree.ElementTree as ET  # noqa: PLC0415 - only the nvidia-smi fallback needs it

    try:
        root = ET.fromstring(text)  # noqa: S314 - nvidia-smi's own output
    except ET.ParseError as exc:
        raise ParseError(
            f"not nvidia-smi XML output ({exc})",
            source=source,
            fix="pass the output of `nvidia-smi -q -x`",
        ) from exc
    if root.tag != "nvidia_smi_log":
        raise ParseError(
            f"XML root is <{root.tag}>, not <nvidia_smi_log>",
            source=source,
            fix="pass the output of `nvidia-smi -q -x`",
        )
    gpus = []
    for index, node in enumerate(root.findall("gpu")):
        bus_id = node.get("id") or node.findtext("pci/pci_bus_id") or ""
        memory = (node.findtext("fb_memory_usage/total") or "").split()
        minor = node.findtext("minor_number")
        gpus.append(
            Gpu(
                index=int(minor) if minor and minor.isdigit() else index,
                name=(node.findtext("product_name") or "unknown").strip(),
                pci_bus_id=normalize_bus_id(bus_id),
                uuid=(node.findtext("uuid") or "").strip() or None,
                memory_total_mib=int(memory[0]) if memory and memory[0].isdigit() else None,
            )
        )
    # minor_number is the /dev/nvidiaN number, not the CUDA/NVML index, which
    # follows PCI bus order; keep the document order as the index.
    gpus = [dataclasses.replace(gpu, index=i) for i, gpu in enumerate(gpus)]
    return GpuReport(
        source="nvidia-smi",
        gpus=tuple(gpus),
        driver_version=(root.findtext("driver_version") or "").strip() or None,
        cuda_driver_version=(root.findtext("cuda_version") or "").strip() or None,
    )


def read_gpus_nvidia_smi(fs: FsRoot, runner: Runner) -> GpuReport:
    """GPUs through ``nvidia-smi -q -x``; a missing or failing tool is reported."""
    result = runner(NVIDIA_SMI_XML, timeout_seconds=20)
    if not result.ok:
        detail = (result.stderr or result.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit {result.returncode}"
        return GpuReport(source="none", error=f"nvidia-smi: {reason}")
    try:
        report = parse_nvidia_smi_xml(result.stdout)
    except ParseError as exc:
        return GpuReport(source="none", error=exc.what)
    return dataclasses.replace(report, gpus=tuple(_with_sysfs(fs, g) for g in report.gpus))


def read_gpus_sysfs(fs: FsRoot) -> GpuReport:
    """NVIDIA display and 3D controllers on the PCI bus, named by device id.

    Finds GPUs even when the driver is not loaded (or on a recorded tree).
    """
    gpus: list[Gpu] = []
    # CUDA and NVML number GPUs in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID).
    for bdf in fs.listdir("sys/bus/pci/devices", natural=False):
        if not BDF_RE.match(bdf):
            continue
        rel = f"sys/bus/pci/devices/{bdf}"
        if fs.read(f"{rel}/vendor") != NVIDIA_VENDOR:
            continue
        pci_class = fs.read(f"{rel}/class") or ""
        if not pci_class.startswith(GPU_CLASS_PREFIXES):
            continue
        device_id = fs.read(f"{rel}/device") or "?"
        gpus.append(
            _with_sysfs(
                fs,
                Gpu(
                    index=len(gpus),
                    name=f"NVIDIA device {device_id}",
                    pci_bus_id=bdf.lower(),
                ),
            )
        )
    return GpuReport(source="sysfs" if gpus else "none", gpus=tuple(gpus))
