"""A job's verdict through ``hpnet launch``, without a crash around it.

``hpnet check --all`` and ``hpnet isolate`` run as every rank of one job; rank 0
prints the cluster's verdict and exits 1 when the cluster is not ready. torchrun (and
srun, mpirun) take a rank's non-zero exit for a failed job: they end the other ranks,
which then print stack traces ("--- Logging error ---", a TCPStore that went away),
and the verdict ends under a hundred lines of them and ``error[job-failed]``.

So ``hpnet launch`` sets :data:`VERDICT_ENV` on the commands whose output it relays;
rank 0 then prints its exit code as one line (:func:`verdict_line`) and exits 0, every
rank ends cleanly, and ``hpnet launch`` drops the line from what it echoes and exits
with that code (:func:`read_verdict`). Without the variable (torchrun by hand, a Slurm
batch job whose output hpnet does not read) rank 0 exits with its code as before.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

__all__ = ["NUMPY_WARNING", "VERDICT_ENV", "read_verdict", "report_verdict"]

#: set to "1" by ``hpnet launch`` on the commands whose output it relays
VERDICT_ENV = "HPNET_LAUNCH_VERDICT"
#: PYTHONWARNINGS' rule for torch's "Failed to initialize NumPy" (hpnet uses no numpy)
NUMPY_WARNING = "ignore:Failed to initialize NumPy:UserWarning"
_LINE = re.compile(r"^hpnet-verdict: exit (\d{1,3})$")


def report_verdict(code: int, environ: Mapping[str, str] | None = None) -> int:
    """The exit code rank 0 returns for a verdict ``code``: under ``hpnet launch``,
    0 after printing the verdict line; else ``code`` itself."""
    env = os.environ if environ is None else environ
    if env.get(VERDICT_ENV) != "1":
        return code
    sys.stdout.flush()
    print(f"hpnet-verdict: exit {code}", flush=True)
    return 0


def read_verdict(line: str) -> int | None:
    """The exit code a relayed output line carries, or None for any other line.

    >>> read_verdict("hpnet-verdict: exit 1"), read_verdict("hpnet check: NOT READY")
    (1, None)
    """
    found = _LINE.match(line.rstrip("\r"))
    return int(found.group(1)) if found else None
