"""GPU discovery: nvidia-smi's real XML, the PCI bus, and the fallback chain."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.detect import DetectOptions, choose_gpu_report, detect
from hpnet.errors import ParseError
from hpnet.node.gpus import (
    NVIDIA_SMI_XML,
    GpuReport,
    normalize_bus_id,
    parse_nvidia_smi_xml,
    read_gpus_nvidia_smi,
    read_gpus_sysfs,
)
from hpnet.node.sysfs import FsRoot
from hpnet.runner import CommandResult, RecordedRunner
from tests.conftest import DATA

H100_XML = (DATA / "commands" / "nvidia-smi-q-x-h100.xml").read_text()


def test_nvidia_smi_xml_of_an_h100() -> None:
    report = parse_nvidia_smi_xml(H100_XML)
    assert report.source == "nvidia-smi"
    assert (report.driver_version, report.cuda_driver_version) == ("580.159.04", "13.0")
    (gpu,) = report.gpus
    assert gpu.name == "NVIDIA H100 80GB HBM3"
    assert gpu.pci_bus_id == "0000:00:06.0"
    assert gpu.uuid == "GPU-c68e5ba4-7872-f3af-75b3-c364cd040979"
    assert gpu.memory_total_mib == 81559


@pytest.mark.parametrize(
    ("text", "message"),
    [("not xml at all", "not nvidia-smi XML"), ("<other/>", "not <nvidia_smi_log>")],
)
def test_nvidia_smi_xml_rejects_other_input(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_nvidia_smi_xml(text)


def test_nvidia_smi_through_the_runner_adds_sysfs_facts(
    sysfs_tree: Callable[[str], Path],
) -> None:
    fs = FsRoot(sysfs_tree("h100-vm"))
    runner = RecordedRunner(
        {NVIDIA_SMI_XML: CommandResult(argv=NVIDIA_SMI_XML, returncode=0, stdout=H100_XML)}
    )
    report = read_gpus_nvidia_smi(fs, runner)
    (gpu,) = report.gpus
    assert gpu.pci_path == ("pci0000:00", "0000:00:06.0")
    assert gpu.numa_node is None  # numa_node is -1 in the VM
    assert runner.calls == [NVIDIA_SMI_XML]


def test_missing_nvidia_smi_is_reported_not_raised(tmp_path: Path) -> None:
    report = read_gpus_nvidia_smi(FsRoot(tmp_path), RecordedRunner({}))
    assert report.source == "none" and report.error == "nvidia-smi: not found"


def test_gpu_on_the_pci_bus_of_the_h100_vm(sysfs_tree: Callable[[str], Path]) -> None:
    (gpu,) = read_gpus_sysfs(FsRoot(sysfs_tree("h100-vm"))).gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.name) == (0, "0000:00:06.0", "NVIDIA device 0x2330")
    inv = detect(
        DetectOptions(sysfs_root=sysfs_tree("h100-vm")),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    assert inv.gpu_source == "sysfs" and inv.rdma_devices == ()
    assert inv.gpudirect is not None and inv.gpudirect.nvidia_module_version == "580.159.04"


def test_bus_id_spellings() -> None:
    assert normalize_bus_id("00000000:00:06.0") == "0000:00:06.0"
    assert normalize_bus_id("0000:3B:00.0") == "0000:3b:00.0"


SMI = parse_nvidia_smi_xml(H100_XML)
NONE = GpuReport(source="none", error="NVML unavailable: Driver Not Loaded")


def fail() -> GpuReport:
    raise AssertionError("must not be asked")


def test_chain_prefers_nvml() -> None:
    nvml = GpuReport(source="nvml", gpus=SMI.gpus)
    report, problems = choose_gpu_report(
        GpuReport(source="none"), driver_loaded=True, nvml=lambda: nvml, nvidia_smi=fail
    )
    assert report is nvml and problems == ()


def test_chain_falls_back_to_nvidia_smi() -> None:
    report, problems = choose_gpu_report(
        GpuReport(source="none"), driver_loaded=True, nvml=lambda: NONE, nvidia_smi=lambda: SMI
    )
    assert report is SMI and problems == ()


def test_chain_without_driver_asks_neither_and_names_the_problem() -> None:
    on_bus = GpuReport(source="sysfs", gpus=SMI.gpus)
    report, problems = choose_gpu_report(on_bus, driver_loaded=False, nvml=fail, nvidia_smi=fail)
    assert report is on_bus
    assert [p.code for p in problems] == ["gpu-driver-not-loaded"]


def test_chain_when_everything_fails_keeps_the_bus_view() -> None:
    on_bus = GpuReport(source="sysfs", gpus=SMI.gpus)
    smi_fail = GpuReport(source="none", error="nvidia-smi: exit 9")
    report, problems = choose_gpu_report(
        on_bus, driver_loaded=True, nvml=lambda: NONE, nvidia_smi=lambda: smi_fail
    )
    assert report is on_bus
    assert problems[0].code == "gpu-query-failed"
    assert "Driver Not Loaded" in problems[0].what and "exit 9" in problems[0].what
