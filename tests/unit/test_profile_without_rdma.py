"""A profile that needs RDMA, on a node without any RDMA device (issue 26: a newcomer's
`hpnet check --profile pai-dlc-erdma` on a laptop). The doctor said both "pai-dlc-erdma
needs eRDMA, but there is no RDMA device" and, for the profile's NCCL_IB_HCA=erdma,
"matches no RDMA port here; fix: unset NCCL_IB_HCA, export NCCL_IB_DISABLE=1": a fix
that turns off the transport the profile prescribes. What is missing is the devices."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.doctor.gather import diagnose
from hpnet.result import Status

RDMA_PROFILES = ("pai-dlc-erdma", "ecs-erdma", "pai-lingjun", "scnet", "modelarts", "ib", "roce")


@pytest.mark.parametrize("profile", RDMA_PROFILES)
def test_no_fix_turns_off_the_transport_the_profile_needs(
    sysfs_tree: Callable[[str], Path], profile: str
) -> None:
    report = diagnose(sysfs_root=str(sysfs_tree("no-rdma-vm")), profile=profile, environment={})
    checks = {c.id: c for c in report.checks}
    assert checks["vars.transport"].status is Status.WARN
    assert "there is no RDMA device" in checks["vars.transport"].summary
    assert checks["vars.hca"].status is Status.SKIP
    if profile not in ("scnet", "modelarts"):  # one RDMA kind named: its ports are missing
        assert "the devices are what is missing" in checks["vars.hca"].summary
    fixes = "\n".join(c.fix or "" for c in report.checks)
    assert "NCCL_IB_DISABLE" not in fixes and "unset NCCL_IB_HCA" not in fixes


def test_a_value_that_matches_no_port_of_a_node_with_ports_still_fails(
    sysfs_tree: Callable[[str], Path],
) -> None:
    """The rule is about a node without devices: where ports exist, a value matching
    none of them is still vars.hca's FAIL with its fix."""
    report = diagnose(
        sysfs_root=str(sysfs_tree("cx6-ib-dgx")), profile="ib", environment={"NCCL_IB_HCA": "mlx9"}
    )
    hca = next(c for c in report.checks if c.id == "vars.hca")
    assert hca.status is Status.FAIL and "matches no RDMA port" in hca.summary and hca.fix
