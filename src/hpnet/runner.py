"""The one seam through which hpnet runs other programs.

Commands are argv lists, never shell strings; ``shlex.join`` is only for display.
Tests pass a :class:`RecordedRunner` holding real outputs recorded on real machines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = ["CommandResult", "RecordedRunner", "Runner", "SubprocessRunner"]

#: returncode used when the program does not exist (as a shell would say)
NOT_FOUND = 127
#: returncode used when the program ran past its time limit (as timeout(1) says)
TIMED_OUT = 124


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class Runner(Protocol):
    def __call__(self, argv: Sequence[str], *, timeout_seconds: float) -> CommandResult: ...


class SubprocessRunner:
    """Runs a program with a time limit; a missing program is a result, not an error."""

    def __call__(self, argv: Sequence[str], *, timeout_seconds: float) -> CommandResult:
        import subprocess  # noqa: PLC0415 - 6 ms of start-up, paid only when a command runs

        args = tuple(argv)
        try:
            done = subprocess.run(
                args,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout_seconds,
                check=False,
            )
        except FileNotFoundError:
            return CommandResult(argv=args, returncode=NOT_FOUND, stdout="", stderr="not found")
        except PermissionError as exc:
            return CommandResult(argv=args, returncode=NOT_FOUND, stdout="", stderr=str(exc))
        except subprocess.TimeoutExpired:
            return CommandResult(
                argv=args,
                returncode=TIMED_OUT,
                stdout="",
                stderr=f"timed out after {timeout_seconds:g} s",
            )
        return CommandResult(
            argv=args, returncode=done.returncode, stdout=done.stdout, stderr=done.stderr
        )


class RecordedRunner:
    """Answers from recorded outputs keyed by argv; anything else is 'not found'."""

    def __init__(self, outputs: Mapping[tuple[str, ...], CommandResult]) -> None:
        self.outputs = dict(outputs)
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str], *, timeout_seconds: float) -> CommandResult:
        args = tuple(argv)
        self.calls.append(args)
        found = self.outputs.get(args)
        if found is None:
            return CommandResult(argv=args, returncode=NOT_FOUND, stdout="", stderr="not found")
        return found
