"""Every file under tests/data says where it came from (a .source.txt beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA

NOT_DATA = {"SOURCE.txt", "FORMAT.md"}
FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file() and not p.name.endswith(".source.txt") and p.name not in NOT_DATA
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_has_provenance(path: Path) -> None:
    notes = [path.with_name(f"{path.stem}.source.txt"), path.with_name(f"{path.name}.source.txt")]
    note = next((n for n in notes if n.exists()), None)
    assert note is not None, f"{path} has no .source.txt"
    text = note.read_text()
    assert "Source" in text or "source" in text
    assert "conclude" in text.lower(), f"{note} does not say what a correct tool concludes"
    assert path.name in (path.parent / "SOURCE.txt").read_text(), "missing from SOURCE.txt"
