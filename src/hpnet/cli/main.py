"""``hpnet`` entry point: a lazy command table and the one error funnel.

``hpnet --help`` and ``hpnet --version`` import no command module (and so no
torch): a command's module is imported only when that command runs. Every
command module exposes ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args) -> int``; one with subcommands (``hpnet bench import``) also names
their modules, built the same way, in ``SUBCOMMANDS``. ``run`` finds the whole
command line in ``args.command_line``.

Exit codes (docs/exit-codes.md): 0 ok, 1 a check or expectation failed,
2 usage or input error, 3 an internal error (a bug in hpnet: please report it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from hpnet import __version__
from hpnet.errors import ExitCode, HpnetError, Terminated, UsageError

__all__ = ["COMMANDS", "main"]

#: name -> (module, one-line summary). Literal on purpose: no import-time registration.
COMMANDS: dict[str, tuple[str, str]] = {
    "bench": (
        "hpnet.cli.bench",
        "collective benchmarks with nccl-tests' semantics; import, compare, plot; training",
    ),
    "check": (
        "hpnet.cli.check",
        "one verdict: will jobs here use the fast network, at the bandwidth they should?",
    ),
    "detect": (
        "hpnet.cli.detect",
        "inventory this node: RDMA devices, GIDs, netdevs, GPUs, PCIe topology, versions, limits",
    ),
    "doctor": (
        "hpnet.cli.doctor",
        "pre-flight checks with a verdict and the exact fix for each failure",
    ),
    "env": (
        "hpnet.cli.env",
        "the NCCL environment for this node: profile + detection + overrides, with origins",
    ),
    "hang": (
        "hpnet.cli.hang",
        "why a job is stuck: which rank, group and collective, from Flight Recorder and logs",
    ),
    "image": (
        "hpnet.cli.image",
        "Dockerfiles, docker run flags and pod settings for a profile; check an image",
    ),
    "isolate": (
        "hpnet.cli.isolate",
        "in one job: find the node, NIC or link that makes the cluster slow, and why",
    ),
    "launch": (
        "hpnet.cli.launch",
        "start a job on torchrun, mpirun, Slurm or Kubernetes with the environment on every rank",
    ),
    "profiles": ("hpnet.cli.profiles", "list or show the platform profiles and their sources"),
    "verify": (
        "hpnet.cli.verify",
        "read NCCL debug logs and prove which transport each connection used",
    ),
}

INTERNAL_ERROR = 3


class _Parser(argparse.ArgumentParser):
    """argparse that reports through the error funnel instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, code="usage", where=self.prog, fix=f"see `{self.prog} --help`")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter without its ``import shutil`` (5 ms of every start):
    ``add_argument`` builds a formatter even when no help is printed."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            try:
                width = os.get_terminal_size(sys.stdout.fileno()).columns - 2
            except (OSError, ValueError):
                width = 78
        super().__init__(prog, indent_increment, max_help_position, width)


def _top_help() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [
        "usage: hpnet [--version] [--debug] <command> [options]",
        "",
        "Make the high-performance network of a GPU cluster work for NCCL, and prove it.",
        "",
        "commands:",
    ]
    lines += [f"  {name.ljust(width)}  {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += [
        "",
        "options:",
        "  -h, --help  show this help",
        "  --version   print hpnet's version",
        "  --debug     show the traceback of an error",
        "",
        "`hpnet <command> --help` describes a command. Exit codes: 0 ok, 1 a check failed,",
        "2 usage or input error, 3 internal error (a bug: please report it with --debug).",
    ]
    return "\n".join(lines) + "\n"


def _split(argv: Sequence[str]) -> tuple[bool, list[str]]:
    """Pull ``--debug`` out wherever it stands."""
    args = list(argv)
    debug = "--debug" in args
    return debug, [a for a in args if a != "--debug"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hpnet`` with ``argv`` (default: the process's) and return the exit code."""
    debug, args = _split(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except HpnetError as exc:
        if debug:
            _print_traceback()
        print(exc.render(), file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print("error[interrupted]: stopped by the user", file=sys.stderr)
        return 130
    except Terminated as exc:  # SIGTERM / SIGHUP while ranks ran: they were ended first
        import signal  # noqa: PLC0415

        name = signal.Signals(exc.signum).name if exc.signum in signal.valid_signals() else ""
        print(f"error[terminated]: stopped by {name or f'signal {exc.signum}'}", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        # `hpnet detect | head`: the reader left; nothing more to say.
        return int(ExitCode.OK)
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into a message
        if debug:
            _print_traceback()
        print(
            f"error[internal]: {type(exc).__name__}: {exc} — hpnet {__version__} — "
            "this is a bug in hpnet: rerun with --debug and report the traceback",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def _print_traceback() -> None:
    import traceback  # noqa: PLC0415 - only with --debug

    traceback.print_exc()


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in {"-h", "--help"}:
        stream = sys.stdout if args else sys.stderr
        stream.write(_top_help())
        return int(ExitCode.OK if args else ExitCode.USAGE)
    if args[0] == "--version":
        print(f"hpnet {__version__}")
        return int(ExitCode.OK)
    name, rest = args[0], args[1:]
    if name.startswith("-"):
        raise UsageError(
            f"unknown option {name}",
            code="usage",
            where="hpnet",
            fix="command options follow the command: see `hpnet --help`",
        )
    if name not in COMMANDS:
        import difflib  # noqa: PLC0415 - only for a mistyped command

        close = difflib.get_close_matches(name, list(COMMANDS), n=1)
        hint = f"did you mean `hpnet {close[0]}`?" if close else "see `hpnet --help`"
        raise UsageError(
            f"unknown command {name!r}", code="unknown-command", where="hpnet", fix=hint
        )
    module_name, summary = COMMANDS[name]
    module = importlib.import_module(module_name)
    prog = f"hpnet {name}"
    subcommands: dict[str, str] = getattr(module, "SUBCOMMANDS", {})
    if rest and rest[0] in subcommands:
        prog = f"{prog} {rest[0]}"
        module = importlib.import_module(subcommands[rest[0]])
        rest = rest[1:]
    parser = _Parser(
        prog=prog,
        description=getattr(module, "DESCRIPTION", summary),
        formatter_class=_Formatter,
    )
    module.add_arguments(parser)
    try:
        namespace = parser.parse_args(rest)
    except SystemExit as exc:  # --help prints and exits 0
        return int(exc.code or 0)
    namespace.command_line = (*prog.split(), *rest)
    if isinstance(getattr(namespace, "sysfs_root", None), str):
        from hpnet.node.snapshot import sysfs_root_from  # noqa: PLC0415

        # a recorded .tree file is read as the directory it records (tests/data/sysfs)
        namespace.sysfs_root = sysfs_root_from(namespace.sysfs_root)
    result: int = module.run(namespace)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
