"""The one-sentence verdict of ``hpnet verify`` and its status.

:func:`verdict_of` words what the log proves (which network and transports carried
inter- and intra-node traffic, with GPUDirect RDMA or not, on which NICs and how many
processes) and sets PASS, WARN, FAIL or UNKNOWN from the findings and expectations;
:func:`hpnet.ncclog.report.analyse` gathers what it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.ncclog.expectation import ExpectationResult
from hpnet.ncclog.transports import combine_gdr, natural_sorted, range_text, uniq
from hpnet.result import Finding

if TYPE_CHECKING:  # report.py imports this module: its rows are a type here only
    from hpnet.ncclog.report import ProcessRow

__all__ = ["verdict_of"]


#: failures that are the process's or its launcher's, whoever's code was running
_NOT_NCCL = frozenset({"process-crashed", "launcher-reported-failure", "nccl-tests-wrong-data"})


def _processes(covered: int, count: int) -> str:
    """``all 16 processes``, ``3 of 8 processes``, ``the one process``."""
    if count == 1:
        return "the one process"
    if covered == count:
        return f"all {count} processes"
    return f"{covered} of {count} processes"


def _traffic(
    rows: Sequence[ProcessRow], inter: Sequence[str], intra: Sequence[str], chose: str | None
) -> str:
    """What carried traffic between hosts and inside them, on how many processes."""
    count = len(rows)
    if inter:
        inter_rows = [r for r in rows if r.inter_node]
        nets = uniq(t.removesuffix("/GDRDMA") for t in inter)
        sentence = f"inter-node traffic used {' and '.join(nets)}"
        gdr = combine_gdr([r.gdr for r in inter_rows])
        if gdr is not None:
            sentence += {
                "yes": " with GPUDirect RDMA",
                "no": " without GPUDirect RDMA",
                "partial": " with GPUDirect RDMA on some connections only",
            }.get(gdr, f" with GPUDirect RDMA on {gdr.replace(' only', '')} only")
        elif any(t.startswith("NET/Socket") for t in inter):
            sentence += " (TCP, no RDMA)"
        nics = natural_sorted(n for r in inter_rows for n in r.nics)
        if nics:
            sentence += f" on {range_text(list(nics))}"
        sentence += f" on {_processes(len(inter_rows), count)}"
        if intra:
            sentence += f"; intra-node {', '.join(intra)}"
    elif intra:
        covered = sum(1 for r in rows if r.intra_node)
        sentence = (
            f"intra-node traffic used {', '.join(intra)} on {_processes(covered, count)}; "
            "no inter-node connection in this log"
        )
        if chose:
            sentence += f" ({chose} for traffic between hosts)"
    elif chose:
        sentence = f"{chose}; no connection line yet proves traffic"
    else:
        sentence = (
            f"NCCL started on {_processes(count, count)}, but no line says which network it "
            "chose and no connection line proves which transport carried traffic"
        )
    return sentence


def verdict_of(
    rows: Sequence[ProcessRow],
    findings: Sequence[Finding],
    results: Sequence[ExpectationResult],
    inter: Sequence[str],
    intra: Sequence[str],
    *,
    chose: str | None = None,
) -> tuple[str, str]:
    errors = [f for f in findings if f.severity == "error"]
    failed = [r for r in results if not r.met]
    if not rows:
        if errors:
            return "FAIL", f"{errors[0].title} (no NCCL process lines to prove the transport)"
        if findings:  # NCCL's messages pasted without their process prefix
            return "UNKNOWN", (
                f"{findings[0].title} (no NCCL process lines: which network and transports "
                "were used cannot be told)"
            )
        return "UNKNOWN", "no NCCL debug lines found: was NCCL_DEBUG=INFO set for this run?"
    sentence = _traffic(rows, inter, intra, chose)
    if errors:
        # fatal first (findings are sorted so): NCCL returned an error, the job stopped;
        # else NCCL went on, at a cost. Stopped before any connection or network choice,
        # the traffic sentence would only repeat that nothing was proven: the count is
        # what it adds.
        # a crash is the process's, whoever's code it was in
        said = "NCCL failed: " if errors[0].fatal and errors[0].id not in _NOT_NCCL else ""
        if errors[0].fatal and not (inter or intra or chose):
            count = len(rows)
            sentence = f"NCCL started on {_processes(count, count)}; no connection line follows"
        return "FAIL", f"{said}{errors[0].title} — {sentence}"
    if failed:
        return "FAIL", f"expected {failed[0].expectation}: {failed[0].detail} — {sentence}"
    if not inter and not intra:
        return "UNKNOWN", sentence
    if any(f.severity == "warning" for f in findings):
        return "WARN", sentence
    if not inter and len({r.host for r in rows if r.host}) > 1:
        # processes on more than one host, and no line shows what carried traffic between
        # them: the job's network path is not proven, whatever went on inside each host
        return "UNKNOWN", sentence
    return "PASS", sentence
