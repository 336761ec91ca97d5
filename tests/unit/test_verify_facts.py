"""Issue 24 rule 4: a healthy run gets no warning that does not apply, and the facts that
explain a number are reported on the log's own lines (text and ``--json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.ncclog.explain import explaining_facts
from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"
DOC = (Path(__file__).parents[2] / "docs" / "verify-schema.md").read_text()


def _report(name: str) -> VerifyReport:
    found, notes = collect_inputs([str(LOGS / name)])
    return analyse(read_logs(found, jobs=1, notes=notes))


def _ids(lines: list[str]) -> list[str]:
    return [f.id for f in explaining_facts(parse_nccl_log(lines))]


def test_no_rdma_device_on_a_single_host_run_is_a_note_not_a_warning() -> None:
    """4 processes on one machine, the communicator whole there: 'nothing to do' is info."""
    report = _report("h200x4-p2p-cumem-nccl2.28.9")
    finding = next(f for f in report.findings if f.id == "no-rdma-device")
    assert finding.severity == "info"
    assert "nothing to do" in finding.fix
    assert report.status == "PASS"


def test_no_rdma_device_stays_a_warning_where_the_log_spans_two_machines() -> None:
    report = _report("libibverbs-missing-socket-same-hostname-two-nodes-nccl2.18.3.log")
    assert any(f.id == "no-rdma-device" and f.severity == "warning" for f in report.findings)


def test_a_link_local_bootstrap_is_a_fact_quoting_its_line() -> None:
    """NVIDIA/nccl#1291: gh1 bootstraps on ib0's fe80:: address."""
    report = _report("gh200-nccl-tests-bootstrap-ib0-ipv6-link-local-fe80-hang-ncclunknown.log")
    (fact,) = report.facts
    assert fact.id == "bootstrap-link-local"
    assert "fe80::a288:c203:d2:aaf2%ib0" in fact.text
    assert re.search(r"\.log:8: gh1:180172:180172 \[0\] NCCL INFO Bootstrap", fact.evidence[0])


def test_only_the_first_bootstrap_interface_counts() -> None:
    """2.4.8-2.7.8 list every interface; NCCL publishes the first: here IPv4 ens5."""
    report = _report(
        "ansi-reset-remnant-prefix-socket-ens5-plus-docker-veth-ipv6-linklocal-nccl2.7.8.log"
    )
    assert not any(f.id == "bootstrap-link-local" for f in report.facts)


def test_nvls_channels_and_pxn_are_facts() -> None:
    nvls = _report("ibext-v8-roce-bond-nvls-no-gdr-nccl2.20.log")
    assert [f.id for f in nvls.facts] == ["nvls"]
    assert "16 NVLS channels" in nvls.facts[0].text
    assert "16 nvls channels" in nvls.facts[0].evidence[0]
    pxn = _report("roce-single-hca-pxn-gdrdma-ofi-plugin-loaded-nccl2.27.5.log")
    assert [f.id for f in pxn.facts] == ["pxn"]
    assert "use ring PXN 1" in pxn.facts[0].evidence[0]


def test_collnet_channel_counts_alone_prove_no_collnet() -> None:
    """2.28.9 on a VM without SHARP prints '24 collnet channels' (h200x4 logs)."""
    line = (
        "vm:919:919 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, "
        "32 p2p channels, 32 p2p channels per peer"
    )
    assert _ids([line]) == []


def test_a_topology_file_is_a_fact_with_the_channel_count_beside_it() -> None:
    """The env line's form (param.cc) with the channel line of the same process."""
    ids = _ids(
        [
            "n1:7:7 [0] NCCL INFO NCCL_TOPO_FILE set by environment to "
            "/opt/microsoft/ndv4-topo.xml",
            "n1:7:7 [0] NCCL INFO 2 coll channels, 0 nvls channels, 2 p2p channels, 2 p2p "
            "channels per peer",
        ]
    )
    assert ids == ["topology-file"]


def test_nic_distance_sys_needs_the_release_that_numbers_it() -> None:
    """NVIDIA/nccl#1151's line: path type 7 is SYS in 2.12-2.25 only; without a version
    the number is not named (2.26 calls 7 PHB, 2.27.5 PXN)."""
    line = "h:5:5 [0] NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)"
    assert _ids([line]) == []
    versioned = ["h:5:5 [0] NCCL INFO NCCL version 2.18.5+cuda12.0", line]  # composed
    assert _ids(versioned) == ["nic-distance-sys"]


def test_the_schema_doc_names_every_fact_key_and_id(capsys: pytest.CaptureFixture[str]) -> None:
    main(["verify", "--json", str(LOGS / "ibext-v8-roce-bond-nvls-no-gdr-nccl2.20.log")])
    data = json.loads(capsys.readouterr().out)
    row = next(line for line in DOC.splitlines() if line.startswith("| `facts` |"))
    assert set(data["facts"][0]) == {"id", "text", "evidence", "processes"}
    assert all(f"`{key}`" in row for key in data["facts"][0])
    for fact_id in (
        "topology-file",
        "bootstrap-link-local",
        "nic-distance-sys",
        "pxn",
        "shm-between-nvlink",
    ):
        assert f"`{fact_id}`" in row
    assert "`nvls`" in row and "`collnet`" in row


def test_facts_are_rendered_in_text(capsys: pytest.CaptureFixture[str]) -> None:
    main(["verify", str(LOGS / "roce-single-hca-pxn-gdrdma-ofi-plugin-loaded-nccl2.27.5.log")])
    out = capsys.readouterr().out
    assert "[pxn] PXN on" in out


def test_shm_between_gpus_nvlink_connects_is_a_fact_with_its_three_lines() -> None:
    """2x H200 (NV18), NCCL_P2P_DISABLE=1: the topology's NVL link, the SHM channel and
    the variable, quoted; the same run with P2P on has no such fact."""
    report = _report("h200x2-p2p-disabled-shm-between-nvlink-gpus-graph-subsys-nccl2.28.9.log")
    fact = next(f for f in report.facts if f.id == "shm-between-nvlink")
    quoted = " ".join(fact.evidence)
    assert "via SHM/direct/direct" in quoted and "+ NVL[370.8] - NVS/0-0" in quoted
    assert "NCCL_P2P_DISABLE set by environment to 1" in quoted
    report = _report("h200x2-p2p-on-cumem-nvlink-graph-subsys-nccl2.28.9.log")
    assert not any(f.id == "shm-between-nvlink" for f in report.facts)


def test_a_slow_pcie_link_in_the_topology_dump_is_a_fact() -> None:
    """NVIDIA/nccl-tests#256: a VM's emulated switches hang off links NCCL rates 0.2 GB/s
    (x1 at 2.5 GT/s); the links under them (48.0) are noise as before."""
    report = _report(
        "vm-qemu-x3130-switch-pcie-root-link-x1-2.5gts-pci0.2-topology-h200-nccl2.24plus-EXCERPT.log"
    )
    (fact,) = [f for f in report.facts if f.id == "slow-pci-link"]
    assert "to a PCI switch or bridge 0.2 GB/s (on 1 process): x1 at 2.5 GT/s" in fact.text
    assert [e.split(": ", 1)[0].rsplit(":", 1)[1] for e in fact.evidence] == ["4", "9", "14"]


def test_links_nccl_rates_3_gb_s_or_more_say_nothing() -> None:
    lines = [
        "vm:1:1 [0] NCCL INFO + PCI[24.0] - GPU/1000 (0)",
        "vm:1:1 [0] NCCL INFO               + PCI[3.0] - PCI/2000 (1000c01010000000)",
        "vm:1:1 [0] NCCL INFO + PCI[12] - GPU/1000 (0)",  # 2.5's constant width, no GB/s
    ]
    assert _ids(lines) == []
    (fact,) = explaining_facts(parse_nccl_log(["vm:1:1 [0] NCCL INFO + PCI[0.8] - NIC/3000"]))
    assert "a NIC 0.8 GB/s (on 1 process): x1 at 8 GT/s or x2 at 5 GT/s or x4 at 2.5" in fact.text
    (unknown,) = explaining_facts(parse_nccl_log(["vm:1:1 [0] NCCL INFO + PCI[0.0] - GPU/3000"]))
    assert "did not know the link's speed as sysfs printed it" in unknown.text


def test_the_topology_file_nccl_loaded_is_nccl_topo_file() -> None:
    """A GRAPH line names the file NCCL read (Azure's NCv4 image, NVIDIA/nccl#1008), and
    aws-ofi-nccl says which it set (NVIDIA/nccl#526): both are NCCL_TOPO_FILE's value; the
    virtual-topology daemon's default file is no setting."""
    azure = _report(
        "azure-ncv4-hyperv-vmbus-nic-not-pci-topo-file-injected-failure-not-shown-nccl2.18.5-"
        "EXCERPT.log"
    )
    assert [f.id for f in azure.facts] == ["topology-file"]
    assert azure.facts[0].text.startswith("NCCL_TOPO_FILE=/opt/microsoft/ncv4/topo.xml")
    aws = _report(
        "aws-p4d-efa-16-node-init-hang-plugin-loaded-no-warn-shown-nccl2.9-2.10-EXCERPT.log"
    )
    assert aws.facts[0].text.startswith(
        "NCCL_TOPO_FILE=/usr/local/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml (on 1 process)"
    )
    default = (
        "vm:1:1 [0] NCCL INFO Loading topology file /var/run/nvidia-topologyd/virtualTopology.xml"
    )
    assert _ids([default]) == []


def test_a_bootstrap_on_dockers_default_bridge_is_a_fact() -> None:
    """NVIDIA/nccl#367: every process of a container bootstraps on eth0:172.17.0.2."""
    report = _report(
        "docker-bridge-same-ip-172-17-0-2-on-both-hosts-socket-transport-nccl2.4.8-EXCERPT.log"
    )
    (fact,) = [f for f in report.facts if f.id == "bootstrap-docker-bridge"]
    assert fact.text.startswith("bootstrap on eth0:172.17.0.2 (on 6 processes), in 172.17.0.0/16")
    assert len(fact.processes) == 6
    assert _ids(["h:1:1 [0] NCCL INFO Bootstrap : Using eth0:172.18.0.2<0>"]) == []
