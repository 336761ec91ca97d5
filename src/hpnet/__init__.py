"""hpnet: make the high-performance network of a GPU cluster work for NCCL, and prove it.

Importing this package does no work and imports nothing heavy; the command line
lives in :mod:`hpnet.cli.main` and the node inventory in :mod:`hpnet.detect`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "resolve_env"]


def __getattr__(name: str) -> Any:
    """``hpnet.resolve_env`` without importing it (and detection) with the package."""
    if name == "resolve_env":
        from hpnet.api import resolve_env  # noqa: PLC0415

        return resolve_env
    raise AttributeError(f"module 'hpnet' has no attribute {name!r}")
