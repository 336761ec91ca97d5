"""A report folder (``--report DIR``): report.json (the data) and report.html (one page
that opens from disk with no network and no script), written one way and with one
look for ``hpnet check`` (its node and cluster views) and ``hpnet isolate``.

The files are written through :func:`hpnet.outputfile.write_file`: a symlink planted
at either name is replaced, never followed. A directory that cannot be made or written
is ``error[unwritable]`` naming ``--report``; the report was printed before."""

from __future__ import annotations

import os

__all__ = ["STYLE", "page_head", "write_report_files"]

#: the look of hpnet's report pages; a command adds its own rules after these
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222}
.verdict{padding:1em;border-radius:6px;font-size:1.2em}
.ready{background:#e3f6e3;border:1px solid #3a3}.notready{background:#fbe4e4;border:1px solid #c33}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f3f3f3}code{background:#f3f3f3;padding:1px 3px}
.fix{color:#333}.impact{font-weight:bold}
"""


def page_head(title: str, style: str = STYLE) -> str:
    """A page's start, up to its ``<body>``: ``title`` is HTML already (escaped by the
    caller, who knows what its text may hold).

    >>> print(page_head("hpnet check: READY", style="p{}"))
    <!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>
    <title>hpnet check: READY</title>
    <style>p{}</style></head><body>
    """
    return "\n".join(
        (
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            f"<title>{title}</title>",
            f"<style>{style}</style></head><body>",
        )
    )


def write_report_files(directory: str, data: str, page: str) -> None:
    """report.json (``data``, the JSON text as printed) and report.html (``page``) in
    ``directory``, made with its parents; InputError naming the directory when they
    cannot be written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_report_files(os.path.join(folder, "report"), "{}", "<p>ok</p>")
    ...     sorted(os.listdir(os.path.join(folder, "report")))
    ['report.html', 'report.json']
    """
    from hpnet.cluster.folder import as_unwritable  # noqa: PLC0415
    from hpnet.outputfile import write_file  # noqa: PLC0415

    with as_unwritable(
        "the report could not be written",
        where=f"--report {directory}",
        fix="--report a writable directory",
        after=" (it is printed above)",
    ):
        os.makedirs(directory, exist_ok=True)
        write_file(os.path.join(directory, "report.json"), data)
        write_file(os.path.join(directory, "report.html"), page)
