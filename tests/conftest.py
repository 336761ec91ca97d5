"""Shared test helpers: real data under tests/data, materialized sysfs trees."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.node.snapshot import materialize

DATA = Path(__file__).parent / "data"


def listing_text(name: str) -> str:
    return (DATA / "listings" / name).read_text()


@pytest.fixture
def sysfs_tree(tmp_path: Path) -> Callable[[str], Path]:
    """Materialize ``tests/data/sysfs/<name>.tree`` and return its root."""

    def build(name: str) -> Path:
        root = tmp_path / name
        if root.exists():  # asked twice in one test: the same tree
            return root
        root.mkdir()
        source = DATA / "sysfs" / f"{name}.tree"
        materialize(source.read_text(), root, source=str(source))
        return root

    return build
