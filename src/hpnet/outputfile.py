"""Writing a file hpnet makes (a report, a saved result, a figure, a generated script)
where a symlink may have been planted: a shared ``--report`` directory, ``/tmp``.

``open(path, "w")`` follows a symlink at ``path`` and overwrites whatever it points
to. Here the content goes to a new file beside the target instead (``mkstemp``:
O_CREAT | O_EXCL, O_NOFOLLOW, mode 0600 from the start), its mode set on the open
descriptor, then renamed over the target: whatever was at the path, a symlink
included, is replaced, never written through; a reader never sees half a file;
nothing outside the directory is written or chmod'ed. ``hpnet launch``'s generated
files, ``hpnet check`` / ``hpnet isolate --report`` and ``hpnet bench --save / --plot``
are written this way.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["write_file"]


def write_file(path: str, content: str | bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``content`` (text is written as UTF-8), through an
    exclusive temporary file in the same directory renamed over it. ``mode``: the
    file's permissions (default: 0666 less the umask, as ``open()`` would make it).
    The directory must exist; OSError as ``open()`` raises it, and no temporary file
    is left behind.

    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     victim, target = Path(directory, "victim"), Path(directory, "out")
    ...     _ = victim.write_text("mine")
    ...     target.symlink_to(victim)
    ...     write_file(str(target), "report")
    ...     victim.read_text(), target.read_text(), target.is_symlink()
    ('mine', 'report', False)
    """
    directory = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                     suffix=".tmp")  # fmt: skip
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), _default_mode() if mode is None else mode)
            handle.write(content.encode() if isinstance(content, str) else content)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _default_mode() -> int:
    """0666 less the process's umask (read by setting it and putting it back)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask
