"""Add the data files git tracks under tests/data/<folder>/ that the folder's SOURCE.txt
index does not list yet, one line each with the first line of the file's note (as the
index's other lines are); a folder without an index gets one. Run from the repository
root after adding inputs: ``python tools/data_index.py``.
tests/unit/test_data_provenance.py checks that every data file is listed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path("tests/data")
NOT_DATA = {"SOURCE.txt", "FORMAT.md", "CORPUS.md"}
WIDTH = 100  # characters of the note's first line kept, as in the existing entries


def _note(path: Path) -> Path | None:
    for name in (f"{path.stem}.source.txt", f"{path.name}.source.txt"):
        if path.with_name(name).exists():
            return path.with_name(name)
    return None


def main() -> int:
    tracked = subprocess.run(
        ["git", "ls-files", str(DATA)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    added = 0
    for name in tracked:
        path = Path(name)
        if path.parent.parent != DATA or path.name in NOT_DATA or path.name.endswith(".source.txt"):
            continue  # per-rank folders are listed as the folder, by hand
        index = path.parent / "SOURCE.txt"
        text = (
            index.read_text()
            if index.exists()
            else (
                f"# {path.parent}: index of provenance\n\nEvery data file here has a "
                "`<name>.source.txt` beside it: where it came from and what a correct tool "
                "concludes. This index lists each data file with the first line of its note.\n\n"
            )
        )
        if path.name in text:
            continue
        note = _note(path)
        if note is None:
            print(f"{path}: no .source.txt beside it", file=sys.stderr)
            continue
        first = note.read_text().splitlines()[0][:WIDTH]
        index.write_text(text.rstrip("\n") + f"\n- {path.name} — {note.name}: {first}\n")
        added += 1
    print(f"{added} entries added")
    return 0


if __name__ == "__main__":
    sys.exit(main())
