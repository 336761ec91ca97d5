"""docs/detect-schema.md and `hpnet detect --json` agree, key path by key path.

Paths are written `rdma_devices[].ports[].state`: `[]` for list items. Forward:
every path any output has is documented. Backward: every documented path is
emitted by an inventory with every section filled (a recorded tree, plus the
live-only sections built from real readings of this process).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hpnet.detect import (
    SCHEMA_VERSION,
    DetectOptions,
    NodeInventory,
    detect,
    inventory_from_listings,
)
from hpnet.jsonout import dumps
from hpnet.node.context import classify_context
from hpnet.node.limits import read_limits
from hpnet.node.netdevs import Address
from hpnet.node.versions import LibraryInfo, NcclInfo, TorchInfo, Versions
from hpnet.result import Problem
from hpnet.runner import RecordedRunner
from tests.conftest import DATA, listing_text

DOC = (Path(__file__).parents[2] / "docs" / "detect-schema.md").read_text()


def documented_paths(doc: str) -> set[str]:
    paths: set[str] = set()
    prefix = ""
    for line in doc.splitlines():
        heading = re.match(r"^## .*?(?:\(`([^`]+)`\))?$", line)
        if heading:
            prefix = heading.group(1) or ""
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        keys = re.findall(r"`([^`]+)`", cells[0])
        for key in keys:
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            inner = re.search(r"`\{([^}]+)\}`", cells[2])
            if inner:
                child = f"{path}[]" if cells[1].startswith("list") else path
                for name in re.findall(r"[a-z_]+(?=[,:}]|$)", inner.group(1) + "}"):
                    paths.add(f"{child}.{name}")
    return paths


def emitted_paths(value: object, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            yield path
            yield from emitted_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            yield from emitted_paths(item, f"{prefix}[]")


DOCUMENTED = documented_paths(DOC)


def paths_of(inventory: NodeInventory) -> set[str]:
    data = json.loads(dumps(inventory))
    assert data["schema_version"] == SCHEMA_VERSION
    return set(emitted_paths(data))


def test_the_doc_parses_into_paths() -> None:
    assert {"rdma_devices[].ports[].gids[].kind", "rdma_devices[].uverbs.accessible",
            "limits.shm_bytes", "versions.nccl[].source"} <= DOCUMENTED  # fmt: skip


@pytest.mark.parametrize("name", sorted(p.stem for p in (DATA / "sysfs").glob("*.tree")))
def test_tree_output_is_documented(sysfs_tree: Callable[[str], Path], name: str) -> None:
    inv = detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    assert paths_of(inv) - DOCUMENTED == set()


def test_live_and_listing_output_is_documented() -> None:
    live = detect(DetectOptions(), env=dict(os.environ), python_path=sys.path)
    listing = inventory_from_listings(
        [
            ("a", listing_text("ibv_devinfo-erdma.txt")),
            ("b", listing_text("ibv_devinfo-v-cx3-ib-port-down.txt")),
        ]
    )
    assert (paths_of(live) | paths_of(listing)) - DOCUMENTED == set()


def test_every_documented_path_is_emitted(sysfs_tree: Callable[[str], Path]) -> None:
    """A DGX tree with the live-only sections filled from real readings."""
    inv = detect(
        DetectOptions(sysfs_root=str(sysfs_tree("cx6-ib-dgx"))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    netdevs = list(inv.netdevs)
    netdevs[0] = dataclasses.replace(
        netdevs[0], addresses=(Address(family="inet", address="10.0.0.5", prefix_length=24),)
    )
    library = LibraryInfo(
        name="libibverbs", path="/usr/lib/libibverbs.so.1.14.50.0", version="1.14.50.0"
    )
    full = dataclasses.replace(
        inv,
        hostname="node",
        netdevs=tuple(netdevs),
        versions=Versions(
            nvidia_driver="535.129.03",
            cuda_driver="12.2",
            nccl=(
                NcclInfo(version="2.21.5", path="/x/libnccl.so.2", source="wheel nvidia-nccl-cu12"),
            ),
            torch=TorchInfo(version="2.5.1+cu124", cuda="12.4", nccl="2.21.5"),
            rdma_core="50.0",
            libibverbs=library,
            librdmacm=library,
            providers=(library,),
            kernel="6.8.0",
        ),
        limits=read_limits(),
        context=classify_context(dockerenv=True, containerenv=False, cgroup="", env={}),
        problems=(Problem(code="x", what="y", where="z"),),
    )
    listing = inventory_from_listings(
        [
            ("a", listing_text("ibv_devinfo-erdma.txt")),
            ("b", listing_text("ls-la-dev-infiniband-talos-uverbs-only-no-rdma_cm-umad.txt")),
        ]
    )
    assert DOCUMENTED - (paths_of(full) | paths_of(listing)) == set()
