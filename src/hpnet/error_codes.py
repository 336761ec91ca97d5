"""Every error code hpnet prints, once, with what it means and the exit status it goes with.

An error is printed as ``error[<code>]: <what> — <where> — <fix>`` (see
:mod:`hpnet.errors`). The code is the stable part a script may match on; this table is
its one definition, docs/errors.md is generated from it (``tests/unit/test_error_codes.py``
checks both, and that every code raised in ``src/hpnet`` is here and every code here is
raised). Codes of result objects (a doctor check's ``Problem``, a ``Finding``) are not
errors and are not listed.

The codes of :class:`~hpnet.errors.HpnetError` exit with the error's class's
``exit_code`` (2 for all of them); the few the CLI prints itself name their own status.
"""

from __future__ import annotations

import dataclasses

__all__ = ["ERROR_CODES", "ErrorCode", "markdown"]


@dataclasses.dataclass(frozen=True, slots=True)
class ErrorCode:
    """What a code means, and the exit status hpnet ends with when it prints it."""

    meaning: str
    exit_status: str = "2"


#: code -> its meaning, in alphabetical order
ERROR_CODES: dict[str, ErrorCode] = {
    "bad-baseline": ErrorCode(
        "a baseline for `hpnet isolate` is not the --json output of an earlier run"
    ),
    "bad-command": ErrorCode(
        "a word of the command to launch holds a NUL byte or is not UTF-8 text"
    ),
    "bad-count": ErrorCode(
        "a count (ranks, processes per node, nodes) is not a number or out of range"
    ),
    "bad-dtype": ErrorCode("`hpnet bench -d`: an unknown or unsupported data type"),
    "bad-env": ErrorCode(
        "a variable to forward to the ranks (--env) is not a name, not set, or not a safe value"
    ),
    "bad-expect": ErrorCode("`hpnet verify --expect` is not a known expectation"),
    "bad-groups": ErrorCode("`hpnet isolate --groups` has a line that is not NODE GROUP"),
    "bad-host": ErrorCode("a host name (--hosts, a hostfile) is not a host name or address"),
    "bad-image": ErrorCode("`hpnet image dockerfile --base` is not an image reference"),
    "bad-job-name": ErrorCode("a job name cannot be a Slurm or Kubernetes job name"),
    "bad-nodelist": ErrorCode("a Slurm node list (SLURM_JOB_NODELIST) cannot be expanded"),
    "bad-path": ErrorCode(
        "a path holds a NUL byte, a line break or a comma a launcher would split"
    ),
    "bad-port": ErrorCode("a TCP port is outside 1-65535"),
    "bad-rank-env": ErrorCode(
        "a launcher's rank variables (RANK, WORLD_SIZE, LOCAL_RANK, their MPI and Slurm "
        "equivalents) are not whole numbers, or the rank is not below the size"
    ),
    "bad-redop": ErrorCode(
        "`hpnet bench --op`: an unknown reduction, or one the data type does not take"
    ),
    "bad-result": ErrorCode(
        "a file given as a benchmark result (nccl-tests output or hpnet JSON) cannot be read as one"
    ),
    "bad-size": ErrorCode(
        "a message size (-b, -e, --size, isolate --bytes) is not a size hpnet reads"
    ),
    "bad-value": ErrorCode("a variable's value cannot be written in the chosen output format"),
    "bad-variable-name": ErrorCode(
        "a name in a config or --set is not an upper-case environment variable name"
    ),
    "bench-failed": ErrorCode("a benchmark rank failed or wrote no result"),
    "check-failed": ErrorCode("a rank of `hpnet check`'s cluster benchmark failed"),
    "config-bad-value": ErrorCode("an hpnet config holds a value of the wrong type"),
    "config-syntax": ErrorCode("an hpnet config is not UTF-8 TOML"),
    "config-too-large": ErrorCode("an hpnet config is larger than a config can be"),
    "config-unknown-key": ErrorCode("an hpnet config holds a key hpnet does not know"),
    "config-unreadable": ErrorCode(
        "an hpnet config is missing, not a regular file, or cannot be read"
    ),
    "distro-not-covered": ErrorCode(
        "the profile's guide has no install steps for the distribution"
    ),
    "empty-plot": ErrorCode("a result has no row to plot"),
    "env-file-too-large": ErrorCode("`hpnet doctor --env-file` is larger than an env file can be"),
    "env-file-unreadable": ErrorCode(
        "`hpnet doctor --env-file` is missing, not a regular file, or cannot be read"
    ),
    "hang-dump": ErrorCode(
        "`hpnet hang`: a file that looks like a Flight Recorder dump cannot be read as one "
        "(truncated, not torch's format, a pickle naming a class, no rank in its name)"
    ),
    "hang-input": ErrorCode("`hpnet hang`: a path given cannot be read"),
    "hang-no-evidence": ErrorCode(
        "`hpnet hang`: no Flight Recorder dump and no rank error line under the paths given"
    ),
    "image-profile": ErrorCode("the profile has no image steps (auto, socket)"),
    "internal": ErrorCode(
        "a bug in hpnet: rerun with --debug and report the traceback", exit_status="3"
    ),
    "interrupted": ErrorCode("stopped by Ctrl-C, after every rank was ended", exit_status="130"),
    "invalid-value": ErrorCode("a value set for an NCCL variable is one NCCL would misread"),
    "isolate-failed": ErrorCode("a rank of `hpnet isolate` could not run its rounds"),
    "isolate-input-too-large": ErrorCode(
        "a file `hpnet isolate` reads (--baseline, --groups) is larger than such a file can be"
    ),
    "isolate-no-round": ErrorCode("`hpnet isolate` recorded results with no round pending"),
    "isolate-nodes": ErrorCode("`hpnet isolate` needs at least two distinct nodes"),
    "isolate-rails": ErrorCode("`hpnet isolate` was given fewer than one rail"),
    "isolate-unknown-test": ErrorCode(
        "`hpnet isolate` got a result for a test its round did not plan"
    ),
    "job-failed": ErrorCode(
        "`hpnet launch`: a node of the job failed",
        exit_status="the rank's; 4 when the rank exited 2 or 3 (hpnet's own codes)",
    ),
    "listing-binary": ErrorCode("a saved listing is a binary file"),
    "listing-incomplete": ErrorCode(
        "a listing shows RDMA devices but not whether a process can use them"
    ),
    "listing-malformed": ErrorCode("an ibv_devinfo or ibstat listing is out of order"),
    "listing-not-a-file": ErrorCode("a saved listing is not a regular file"),
    "listing-not-found": ErrorCode("a saved listing does not exist"),
    "listing-too-large": ErrorCode("a saved listing is larger than a listing can be"),
    "listing-unreadable": ErrorCode("a saved listing (or standard input) cannot be read"),
    "listing-unrecognised": ErrorCode("a listing is empty or not the output of a tool hpnet reads"),
    "log-dir-empty": ErrorCode("a log directory holds no readable file"),
    "log-dir-too-large": ErrorCode("a log directory holds more files than one job writes"),
    "log-not-a-file": ErrorCode("a log path is not a regular file, a pipe or a directory"),
    "log-timeout": ErrorCode("no log arrived on a pipe within --idle-timeout"),
    "log-unreadable": ErrorCode("a log cannot be read"),
    "logs-in-use": ErrorCode("another hpnet bench keeps its rank logs in the --logs directory"),
    "missing-matplotlib": ErrorCode("a PNG figure needs matplotlib, which is not installed"),
    "missing-torch": ErrorCode("`hpnet bench` needs torch, which is not installed"),
    "nested-launch": ErrorCode(
        "`hpnet launch` is already inside a job of the engine it would start"
    ),
    "no-gpu": ErrorCode("the node has no NVIDIA GPU that NVML can see"),
    "no-log": ErrorCode("none of the inputs is a readable text log"),
    "no-master-addr": ErrorCode("a scheduler started the ranks but MASTER_ADDR is not set"),
    "no-nccl-lines": ErrorCode("the input holds no NCCL debug line"),
    "no-reference": ErrorCode("the profile records no bus bandwidth to compare with"),
    "no-result": ErrorCode("the input holds no nccl-tests table"),
    "not-an-nccl-variable": ErrorCode("a variable set in hpnet belongs to another tool, not NCCL"),
    "not-enough-memory": ErrorCode(
        "`hpnet bench --device cpu`: the local ranks would need more memory than MemAvailable"
    ),
    "not-found": ErrorCode("a program to launch is not found or cannot start"),
    "nothing-to-compare": ErrorCode("two results share no op and size"),
    "out-of-memory": ErrorCode(
        "a benchmark rank was killed by SIGKILL, by the kernel's out-of-memory killer "
        "(its cgroup's oom_kill counter rose) or most likely so"
    ),
    "parse": ErrorCode(
        "text that should be a known format (a NAME=VALUE file, JSON, a hostfile) is not"
    ),
    "port-taken": ErrorCode(
        "another process holds the rendezvous port (the one hpnet chose, or --master-port)"
    ),
    "probe-failed": ErrorCode("`hpnet verify`'s probe job wrote no log"),
    "ras-query": ErrorCode(
        "`hpnet hang --ras`: the job's NCCL RAS service could not be asked, or did not answer "
        "with a status report"
    ),
    "snapshot-io": ErrorCode("the sysfs snapshot tool could not read or write a path"),
    "sysfs-root-missing": ErrorCode("--sysfs-root is not a directory"),
    "sysfs-root-no-sys": ErrorCode("--sysfs-root has no sys/ directory"),
    "sysfs-root-not-a-tree": ErrorCode("--sysfs-root names a file that is not a recorded tree"),
    "sysfs-root-too-large": ErrorCode("--sysfs-root names a file too large to be a recorded tree"),
    "sysfs-root-unreadable": ErrorCode("--sysfs-root names a file that cannot be read"),
    "terminated": ErrorCode(
        "stopped by signal N, after every rank was ended", exit_status="128 + N"
    ),
    "too-many-ranks": ErrorCode("more CPU ranks than the node's cores can run"),
    "unknown-command": ErrorCode("`hpnet <command>` names no command"),
    "unknown-distro": ErrorCode("--distro names no distribution hpnet knows"),
    "unknown-engine": ErrorCode("--engine names no launch engine"),
    "unknown-op": ErrorCode("`hpnet bench` names no collective hpnet runs"),
    "unknown-profile": ErrorCode("--profile names no profile"),
    "unknown-variable": ErrorCode("an NCCL_* name is not an NCCL variable (NCCL would ignore it)"),
    "unreadable": ErrorCode("a file hpnet reads (a result, a launch file) cannot be read"),
    "unwritable": ErrorCode(
        "a file or directory hpnet writes (a result, a report, logs) cannot be written"
    ),
    "usage": ErrorCode("the command line is wrong: a flag, a value or a combination"),
}


def markdown() -> str:
    """docs/errors.md: the codes as a Markdown table.

    >>> markdown().splitlines()[0]
    '# Error codes'
    """
    lines = [
        "# Error codes",
        "",
        "<!-- generated from src/hpnet/error_codes.py (markdown());",
        "     tests/unit/test_error_codes.py checks that it is current -->",
        "",
        "hpnet prints an error as `error[<code>]: <what> — <where> — <fix>` and exits with the",
        "status below ([exit-codes.md](exit-codes.md)). The code is what a script may",
        "match on.",
        "",
        "| code | exit | meaning |",
        "|---|---|---|",
    ]
    lines += [
        f"| `{code}` | {entry.exit_status} | {entry.meaning} |"
        for code, entry in ERROR_CODES.items()
    ]
    return "\n".join(lines) + "\n"
