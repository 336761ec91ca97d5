"""``hpnet verify``'s leading finding on fresh public logs whose conclusions were written
before hpnet read them (each .source.txt): which finding leads, and what is not fatal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA

ROOT = Path(__file__).parents[2]
LOGS = DATA / "nccl-logs"

#: log -> (the leading finding, its fatal flag, findings that must not be fatal)
LEADS = {
    # NCCL's socket calls cut short by the abort flag (misc/socket.cc socketProgressOpt)
    "deepep-test-internode-h20-over-2-nodes-commabort-proxystop-socket-send-abort-traces-"
    "only-nccl-2.26-EXCERPT.log": ("abort-trail", True, ()),
    # the watchdog's timeouts are what the abort trail after them follows
    "torch-watchdog-timeouts-then-socket-trail-alltoall-nccl2.2x.log": (
        "watchdog-timeout", True, (),
    ),
    # the search's fallback names NET 0, which NIC fusion left without a NIC (nccl#1748)
    "nemo-run-slurm-multinode-tree-search-fallback-could-not-find-net-id-0-internal-error-"
    "nccl-2.25.1-EXCERPT.log": ("topology-net-missing", True, ("topology-search-fallback",)),
    "k8s-dra-gb200-two-computedomains-same-nvlink-clique-nccl-tests-enqueue-cuda-launch-"
    "failure-nccl-2.27-EXCERPT.log": ("cuda-kernel-fault", True, ()),
    # aws-ofi-nccl found no provider, NCCL went on with Socket: the rendezvous lost a rank
    "databricks-serverless-8node-a10-ofi-1.15.0-no-eligible-providers-socket-fallback-r0-"
    "stuck-init-others-tcpstore-recv-0-bytes-nccl-2.26.2-EXCERPT.log": (
        "peer-exited", True, ("ofi-plugin-error",),
    ),
    # a 2.29 root reads a 2.27 peer's hello: 'offset' is its sockaddr's first bytes
    "sglang-pd-decode-2node-tp16-mixed-nccl-2.29-and-2.27-bootstrap-root-mismatch-then-"
    "connect-refused-EXCERPT.log": ("bootstrap-root-mismatch", True, ()),
}  # fmt: skip


def _verify(path: Path) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, "-m", "hpnet", "verify", "--json", str(path)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(LEADS))
def test_the_finding_that_leads_is_what_broke(name: str) -> None:
    lead, fatal, not_fatal = LEADS[name]
    findings = _verify(LOGS / name)["findings"]
    assert (findings[0]["id"], findings[0]["fatal"]) == (lead, fatal)
    assert all(not f["fatal"] for f in findings if f["id"] in not_fatal)


def test_a_roce_port_on_its_link_local_gid_is_named_with_its_lines() -> None:
    """Rail 2 of two DGX Sparks set its queue pairs up on GID 0 (fe80::, MAC-made) while
    rail 1 used ::ffff:10.0.1.x: the port has no RoCE v2 GID with an address."""
    name = (
        "dgx-spark-gb10-2node-roce-direct-qsfp-nccl-2.28.9-allgather-busbw-2.8-vs-22-no-gdr-"
        "rail2-linklocal-gid0-EXCERPT.log"
    )
    found = next(f for f in _verify(LOGS / name)["findings"] if f["id"] == "roce-link-local-gid")
    assert found["severity"] == "warning" and found["count"] == 2
    assert [e.split(".log:")[1].split(":")[0] for e in found["evidence"]] == ["316", "319"]
    assert any("fe80::4ebb:47ff:fe2f:fb9c" in c and ".log:316" in c for c in found["conclusions"])


def test_cross_nic_rings_are_named_where_they_gave_a_gpu_a_far_nic() -> None:
    """Perlmutter, NCCL 2.23.4 with NCCL_CROSS_NIC=1: 16 of 64 NET connections lost
    GPUDirect ('distance 7 > 6'): the finding says why a GPU met a far NIC, and quotes the
    environment line that set it (NERSC/nccl-ofi-plugin turned it off later)."""
    name = (
        "perlmutter-slingshot-cxi-ofi-1.6.0-2node-8xa100-nccl-2.23.4-cross-nic-rings-gdr-"
        "disabled-allreduce-busbw-30-regression.log"
    )
    found = next(f for f in _verify(LOGS / name)["findings"] if f["id"] == "gdr-off")
    assert "NCCL_CROSS_NIC=1 is set" in found["cause"]
    assert "unset NCCL_CROSS_NIC (or set 0)" in found["fix"]
    assert any(e.endswith("NCCL_CROSS_NIC set by environment to 1.") for e in found["evidence"])
