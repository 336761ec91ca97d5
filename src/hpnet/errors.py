"""One error hierarchy for hpnet, caught once by the CLI.

Every error carries a short kebab-case ``code``, ``what`` went wrong, ``where``
(the file, line, value or device) and a ``fix``. The CLI prints it as::

    error[<code>]: <what> — <where> — <fix>

and exits with the error's :class:`ExitCode`. Library code raises these and never
prints; ``hpnet --debug`` shows the traceback.
"""

from __future__ import annotations

import enum
import warnings

__all__ = [
    "ExitCode",
    "HpnetError",
    "InputError",
    "MissingDependencyError",
    "ParseError",
    "Terminated",
    "UnknownErrorCode",
    "UsageError",
]


class ExitCode(enum.IntEnum):
    """Process exit codes, documented in docs/exit-codes.md (README.md has the short table)."""

    OK = 0
    #: a check or an expectation failed (the command ran, the answer is "no")
    FAILED = 1
    #: bad usage or bad input: nothing was judged
    USAGE = 2


class UnknownErrorCode(UserWarning):
    """An error was raised with a code :data:`hpnet.error_codes.ERROR_CODES` lacks: a bug.

    A warning, not an exception: the user still gets the error (and its exit code),
    while the test suite, which turns warnings into errors, fails on it.
    """


class HpnetError(Exception):
    """Base of every error hpnet raises on purpose; ``code`` is one of
    :data:`hpnet.error_codes.ERROR_CODES`."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, what: str, *, code: str, where: str = "", fix: str = "") -> None:
        from hpnet.error_codes import ERROR_CODES  # noqa: PLC0415 - `hpnet --help` imports none

        if code not in ERROR_CODES:
            warnings.warn(
                f"error code {code!r} is not in hpnet.error_codes", UnknownErrorCode, stacklevel=2
            )
        super().__init__(what)
        self.what = what
        self.code = code
        self.where = where
        self.fix = fix

    def render(self) -> str:
        """The one-line message, ``error[code]: what — where — fix``."""
        parts = [self.what]
        if self.where:
            parts.append(self.where)
        if self.fix:
            parts.append(self.fix)
        # a value from a file (a path, a log line) may hold control characters: shown
        # escaped, so that the message stays one inert line on a terminal
        text = " — ".join(parts)
        return f"error[{self.code}]: " + "".join(
            f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 else c for c in text
        )


class UsageError(HpnetError):
    """The command line itself is wrong (unknown command, bad flag value)."""


class InputError(HpnetError):
    """An input (file, directory, value) cannot be used."""


class ParseError(InputError):
    """Text that should be a known tool's output is not.

    ``source`` names the input (a path or ``<stdin>``), ``line_number`` is 1-based
    and 0 when the problem is not tied to one line.
    """

    def __init__(
        self, what: str, *, source: str, line_number: int = 0, fix: str = "", code: str = "parse"
    ) -> None:
        where = f"{source}:{line_number}" if line_number else source
        super().__init__(what, code=code, where=where, fix=fix)
        self.source = source
        self.line_number = line_number


class MissingDependencyError(HpnetError):
    """An optional dependency (torch for ``hpnet bench``) is not installed."""


class Terminated(BaseException):
    """A signal (SIGTERM, SIGHUP) asked hpnet to stop while it had processes to end first.

    Not an :class:`Exception`, so that nothing on the way swallows it; the CLI exits
    with ``128 + signum``, as a shell reports a process that signal ended.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum
