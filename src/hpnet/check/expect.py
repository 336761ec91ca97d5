"""What the hardware should give: the peak of the link a collective crosses, and the
floor below which a measured bus bandwidth means something is wrong.

Inside a node: NVLink, counted from NVML (active links x the per-link rate of their
generation), or the GPU's PCIe link from sysfs (``current_link_speed`` x
``current_link_width``). Between nodes: the line rate of the active RDMA ports
(sysfs ``ports/N/rate``). Rates per direction, GB/s (1e9 bytes):

* NVLink 2, 3 and 4 move 25 GB/s per link per direction, NVLink 5 50 GB/s, NVLink 1
  20 GB/s (NVIDIA's P100 / V100 / A100 / H100 / B200 datasheets: 160, 300, 600, 900 GB/s
  and 1.8 TB/s for 4, 6, 12, 18 and 18 links, both directions together).
* PCIe: GT/s per lane x lanes x 128/130 (3.0 and later) or 8/10 (1.x, 2.x) / 8.
* A NIC: its rate in Gb/s / 8.

The floors are fractions of those peaks, from what healthy machines measure:
all_reduce busbw reaches about 80% of NVLink's per-direction peak at large sizes (4x
H200: 364 of 450 GB/s, ANCHORS.md), and about 96% of a NIC's line rate across nodes
(12 GB/s per 100 Gb/s NIC, 46-48 per 400 Gb/s: NCCL.md, "Expected bandwidth"). A
sweep that stops at 256 MiB sees less (2x H200: 300 of 450 GB/s), so the floor for
PASS is half the peak, and below a quarter is a failure.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from hpnet.result import Status

__all__ = [
    "Judgement",
    "LinkExpectation",
    "judge",
    "net_expectation",
    "nvlink_expectation",
    "pcie_expectation",
]

#: NVML's nvmlNvlinkVersion_t (nvml.h: NVML_NVLINK_VERSION_1_0 = 1 ... 4_0 = 6, 5_0 = 7;
#: an H200 reports 6) -> (the version, GB/s per link per direction)
NVML_NVLINK = {
    1: ("1.0", 20.0),
    2: ("2.0", 25.0),
    3: ("2.2", 25.0),
    4: ("3.0", 25.0),
    5: ("3.1", 25.0),
    6: ("4.0", 25.0),
    7: ("5.0", 50.0),
}
#: a measurement this far above a link's peak means the link was misjudged
IMPOSSIBLE = 1.2
PASS_FRACTION = 0.5
FAIL_FRACTION = 0.25


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LinkExpectation:
    link: str  # "NVLink 4 x18", "PCIe 5.0 x16", "2 x 400 Gb/s RDMA"
    peak_gbps: float  # per direction
    source: str  # how it was found


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Judgement:
    status: Status
    measured_gbps: float | None
    size_bytes: int | None
    expectation: LinkExpectation | None
    fraction: float | None  # measured / peak
    detail: str


def nvlink_expectation(links: Mapping[int, tuple[int, int]]) -> LinkExpectation | None:
    """From NVML's view per GPU: (active links, NVML's NVLink version code). The
    slowest GPU sets the pace of a collective.

    >>> nvlink_expectation({0: (18, 6), 1: (18, 6)})  # two H200s, as NVML reports them
    LinkExpectation(link='NVLink 4.0 x18', peak_gbps=450.0, source='NVML: active NVLinks per GPU')
    """
    usable = [(n, v) for n, v in links.values() if n > 0 and v in NVML_NVLINK]
    if not usable or len(usable) < len(links):
        return None
    count, code = min(usable, key=lambda lv: lv[0] * NVML_NVLINK[lv[1]][1])
    version, per_link = NVML_NVLINK[code]
    return LinkExpectation(
        link=f"NVLink {version} x{count}",
        peak_gbps=count * per_link,
        source="NVML: active NVLinks per GPU",
    )


def pcie_expectation(speed: str | None, width: int | None) -> LinkExpectation | None:
    """A GPU's PCIe link from sysfs (``16.0 GT/s PCIe``, 16).

    >>> pcie_expectation("32.0 GT/s PCIe", 16).peak_gbps
    63.0
    """
    if not speed or not width:
        return None
    found = re.match(r"\s*([\d.]+)\s*GT/s", speed)
    if not found:
        return None
    rate = float(found.group(1))
    encoding = 128 / 130 if rate >= 8 else 8 / 10
    generation = {2.5: "1.0", 5.0: "2.0", 8.0: "3.0", 16.0: "4.0", 32.0: "5.0", 64.0: "6.0"}.get(
        rate, f"{rate:g} GT/s"
    )
    return LinkExpectation(
        link=f"PCIe {generation} x{width}",
        peak_gbps=round(rate * width * encoding / 8, 1),
        source="sysfs current_link_speed and current_link_width of the GPU",
    )


def net_expectation(rates_gbit: Sequence[float]) -> LinkExpectation | None:
    """The active RDMA ports' line rates (Gb/s): all of them carry a multi-node job's
    traffic (NCCL spreads channels over the NICs).

    >>> net_expectation([400.0, 400.0]).peak_gbps
    100.0
    """
    rates = [r for r in rates_gbit if r > 0]
    if not rates:
        return None
    same = len(set(rates)) == 1
    link = f"{len(rates)} x {rates[0]:g} Gb/s RDMA" if same else f"{sum(rates):g} Gb/s RDMA"
    return LinkExpectation(
        link=link, peak_gbps=sum(rates) / 8, source="sysfs: active RDMA ports' rate"
    )


def judge(
    measured_gbps: float | None, size_bytes: int | None, expectation: LinkExpectation | None
) -> Judgement:
    """PASS at or above half the link's peak, FAIL below a quarter, WARN between.

    >>> nvlink = nvlink_expectation({0: (18, 6), 1: (18, 6)})
    >>> [str(judge(gbps, 256 << 20, nvlink).status) for gbps in (300.0, 50.0)]
    ['PASS', 'FAIL']
    >>> str(judge(300.0, 256 << 20, pcie_expectation("32.0 GT/s PCIe", 16)).status)  # not PCIe
    'SKIP'
    """
    if measured_gbps is None:
        return Judgement(
            status=Status.SKIP, measured_gbps=None, size_bytes=None, expectation=expectation,
            fraction=None, detail="nothing was measured",
        )  # fmt: skip
    if expectation is None:
        return Judgement(
            status=Status.SKIP, measured_gbps=measured_gbps, size_bytes=size_bytes,
            expectation=None, fraction=None,
            detail=f"busbw {measured_gbps:.2f} GB/s; the link's peak is not known here",
        )  # fmt: skip
    fraction = measured_gbps / expectation.peak_gbps
    if fraction > IMPOSSIBLE:
        return Judgement(
            status=Status.SKIP, measured_gbps=measured_gbps, size_bytes=size_bytes,
            expectation=None, fraction=None,
            detail=f"busbw {measured_gbps:.2f} GB/s is above {expectation.link}'s peak "
            f"({expectation.peak_gbps:g} GB/s): the GPUs talk over a faster link than the one "
            "found (NVLink that NVML did not report?)",
        )  # fmt: skip
    status = (
        Status.PASS
        if fraction >= PASS_FRACTION
        else Status.FAIL
        if fraction < FAIL_FRACTION
        else Status.WARN
    )
    return Judgement(
        status=status,
        measured_gbps=measured_gbps,
        size_bytes=size_bytes,
        expectation=expectation,
        fraction=fraction,
        detail=(
            f"busbw {measured_gbps:.2f} GB/s at {_size(size_bytes)} is {fraction:.0%} of "
            f"{expectation.link} ({expectation.peak_gbps:g} GB/s per direction)"
        ),
    )


def _size(size: int | None) -> str:
    if size is None:
        return "?"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"
