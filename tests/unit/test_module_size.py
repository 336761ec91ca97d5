"""Modules stay small: one concept each, under ~500 lines (STYLE.md 13, issue 16).

A module that grows past the limit is split by concept (not by line count), the way
ncclog/conclusions.py became network.py, gdr.py and environment.py.
"""

from __future__ import annotations

from pathlib import Path

import hpnet

MAX_LINES = 500
SRC = Path(hpnet.__file__).resolve().parent

#: data tables, not code: one literal row per NCCL variable (every NCCL_* setting
#: with its releases and doc link) and per failure signature (its pattern, cause and
#: fix). Cutting a table in two would split one lookup across modules for no reader's
#: benefit; the code that reads them stays under the limit.
DATA_TABLES = frozenset({"nccl/catalog_data.py", "ncclog/signatures.py"})


def test_every_module_is_at_most_500_lines() -> None:
    too_long = {}
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name in DATA_TABLES:
            continue
        with path.open(encoding="utf-8") as handle:
            num_lines = sum(1 for _ in handle)
        if num_lines > MAX_LINES:
            too_long[name] = num_lines
    assert too_long == {}, f"split these by concept (at most {MAX_LINES} lines): {too_long}"


def test_the_data_tables_exist() -> None:
    """The exceptions name real files: a renamed table must not leave a stale pass."""
    for name in DATA_TABLES:
        assert (SRC / name).is_file(), name
