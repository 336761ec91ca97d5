"""docs/detect-schema.md documents every key `hpnet detect --json` emits."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hpnet.detect import SCHEMA_VERSION, DetectOptions, detect, inventory_from_listings
from hpnet.jsonout import dumps
from hpnet.runner import RecordedRunner
from tests.conftest import DATA, listing_text

DOC = (Path(__file__).parents[2] / "docs" / "detect-schema.md").read_text()
# every identifier written in code spans, e.g. `uverbs`, `{name, path}`, `limits.shm_bytes`
DOCUMENTED = {
    word for span in re.findall(r"`([^`]+)`", DOC) for word in re.findall(r"[a-z_][a-z0-9_]*", span)
}


def keys(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


@pytest.mark.parametrize("name", sorted(p.stem for p in (DATA / "sysfs").glob("*.tree")))
def test_tree_output_is_documented(sysfs_tree: Callable[[str], Path], name: str) -> None:
    inv = detect(
        DetectOptions(sysfs_root=sysfs_tree(name)),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    data = json.loads(dumps(inv))
    assert data["schema_version"] == SCHEMA_VERSION
    assert set(keys(data)) - DOCUMENTED == set()


def test_live_and_listing_output_is_documented() -> None:
    live = json.loads(dumps(detect(DetectOptions(), env=dict(os.environ), python_path=sys.path)))
    listing = json.loads(
        dumps(
            inventory_from_listings(
                [
                    ("x", listing_text("ibv_devinfo-erdma.txt")),
                    ("y", listing_text("ibstat-cx4-eth-active-ib-down.txt")),
                ]
            )
        )
    )
    assert (set(keys(live)) | set(keys(listing))) - DOCUMENTED == set()
