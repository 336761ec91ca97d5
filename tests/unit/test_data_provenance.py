"""Every file under tests/data says where it came from (a .source.txt beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA

NOT_DATA = {"SOURCE.txt", "FORMAT.md", "CORPUS.md"}  # indexes, not recordings
FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file() and not p.name.endswith(".source.txt") and p.name not in NOT_DATA
)


def _note_and_index(path: Path) -> tuple[list[Path], Path, str]:
    """The notes that may describe ``path``, the SOURCE.txt that must list it, and the
    name it is listed under.

    A file directly in a data folder has ``<name>.source.txt`` beside it. A directory
    inside a data folder is one recording (per-rank logs of one job): one
    ``<dir>.source.txt`` beside the directory describes all its files, so that the
    directory holds nothing but logs and can be read as ``hpnet verify DIR/``.
    """
    if path.parent.parent == DATA:
        notes = [
            path.with_name(f"{path.stem}.source.txt"),
            path.with_name(f"{path.name}.source.txt"),
        ]
        return notes, path.parent / "SOURCE.txt", path.name
    recording = path.parent
    return (
        [recording.with_name(f"{recording.name}.source.txt")],
        recording.parent / "SOURCE.txt",
        (f"{recording.name}/"),
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_has_provenance(path: Path) -> None:
    notes, index, listed_as = _note_and_index(path)
    note = next((n for n in notes if n.exists()), None)
    assert note is not None, f"{path} has no .source.txt"
    text = note.read_text()
    assert "Source" in text or "source" in text
    assert "conclude" in text.lower(), f"{note} does not say what a correct tool concludes"
    assert listed_as in index.read_text(), f"missing from {index}"
