from __future__ import annotations

import pytest

from hpnet.rdma.providers import provider_for


@pytest.mark.parametrize(
    ("name", "driver", "vendor", "part", "expected"),
    [
        ("mlx5_0", "mlx5_core", None, None, "mlx5"),
        ("mlx4_1", None, None, None, "mlx4"),
        ("erdma_0", None, None, None, "erdma"),
        ("erdma_0", "erdma", "0x1ded", "0x107f", "erdma"),
        ("irdma1", None, "0x8086", "5522", "irdma"),
        ("efa_0", None, None, None, "efa"),
        ("bnxt_re0", "bnxt_en", None, None, "bnxt_re"),
        ("rxe0", None, None, None, "rxe"),
        # udev-renamed devices: ids decide (ConnectX-5 part 4119 is mlx5, ConnectX-3 4099 mlx4)
        ("rocep0s6", None, "0x02c9", "4119", "mlx5"),
        ("ibp59s0", None, "0x15b3", "0x1003", "mlx4"),
        ("rocep1s0", "irdma", None, None, "irdma"),
        ("rocep9s0", None, None, None, "unknown"),
    ],
)
def test_provider_for(
    name: str, driver: str | None, vendor: str | None, part: str | None, expected: str
) -> None:
    assert provider_for(name, driver, vendor_id=vendor, part_id=part) == expected
