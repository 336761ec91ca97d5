"""The node facts check --all and isolate share (hpnet.cluster.facts): one NCCL per node,
the one its ranks load (issue 26's finding, now isolate's too)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from hpnet.detect import DetectOptions, detect
from hpnet.isolate.facts import node_facts
from hpnet.node.versions import LibraryInfo, NcclInfo, TorchInfo, Versions


def test_isolate_compares_the_nccl_torch_loads_not_every_library_installed(
    sysfs_tree: Callable[[str], Path],
) -> None:
    # NVIDIA's CUDA images hold apt's libnccl2 beside the wheel torch loads: one node,
    # one NCCL (listing both made isolate's drift see two versions on identical nodes)
    env: dict[str, str] = {}
    inventory = detect(DetectOptions(sysfs_root=str(sysfs_tree("cx6-ib-dgx"))), env=env,
                       python_path=[])  # fmt: skip
    lib = LibraryInfo(name="libibverbs", path=None)
    none = Versions(nvidia_driver=None, cuda_driver=None, nccl=(), torch=None, rdma_core=None,
                    libibverbs=lib, librdmacm=lib, providers=(), kernel=None)  # fmt: skip
    apt = NcclInfo(version="2.28.3", path="/usr/lib/x86_64-linux-gnu/libnccl.so.2", source="loader")
    pip = NcclInfo(version="2.28.9", path="/venv/nvidia/nccl/lib/libnccl.so.2", source="wheel")
    both = dataclasses.replace(none, nccl=(apt, pip))
    with_torch = dataclasses.replace(
        both, torch=TorchInfo(version="2.11.0", cuda="13.0", nccl="2.28.9")
    )
    facts = node_facts(dataclasses.replace(inventory, versions=with_torch), env)
    assert facts["versions.nccl"] == "2.28.9"
    # without torch to say which, every library found is what the node has
    facts = node_facts(dataclasses.replace(inventory, versions=both), env)
    assert facts["versions.nccl"] == "2.28.3, 2.28.9"
