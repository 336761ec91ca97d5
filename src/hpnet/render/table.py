"""Plain-text tables that read well in a terminal and in a pasted issue."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["format_pairs", "format_table"]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], indent: int = 2) -> str:
    """Left-aligned columns separated by two spaces; None prints as ``-``.

    >>> print(format_table(["a", "bb"], [[1, None]]))
      a  bb
      1  -
    """
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, text in enumerate(row):
            widths[i] = max(widths[i], len(text))
    pad = " " * indent
    lines = [pad + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for row in cells:
        lines.append(pad + "  ".join(t.ljust(w) for t, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def format_pairs(rows: Sequence[tuple[str, object]], indent: int = 2) -> str:
    """Two columns, label and value, without a header.

    >>> print(format_pairs([("NCCL", "2.21.5"), ("CUDA driver", None)]))
      NCCL         2.21.5
      CUDA driver  -
    """
    return format_table(["", ""], rows, indent=indent).split("\n", 1)[1]


def _cell(value: object) -> str:
    if value is None or value == "":
        return "-"
    return str(value)
