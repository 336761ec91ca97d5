"""What the Flight Recorder analyzer's report says (torch's ``fr_trace`` /
``torchfrtrace``, the text it prints after reading every rank's dump): a collective
some ranks never joined, or one whose ranks disagree; pure.

The report's forms (torch/distributed/flight_recorder/components/utils.py
``error_analysis`` and types.py ``EntryState.log``; the analyzer logs with the format
``%(message)s``, so its lines carry no prefix)::

    Not all ranks joining collective, sequence number: 31117     (late 2024 on; ":" in
                                                                 one build's output)
    Not all ranks joining collective 5 at entry 4                (late 2024)
    Collective sequence number: 39 has errors                    (late 2024 on)
    Collective 39 at entry 38 errors                             (late 2024)
    Input/output mismatch in the collective sequence number: 7   (all_to_all sizes)

each followed by ``name: value`` lines (``internal record id``, ``group info``
(``<pg name>:<desc>``), ``collective`` (``nccl:all_reduce``), ``missing ranks``
(a set), ``input sizes``, ``output sizes``, ``world size``, ``expected ranks`` (a set;
its count in the form with "at entry"), ``collective state``, ``error msg``
(``Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, <details>, Culprit rank ...``),
``collective stack trace``). Its rules: a rank "missing" from a collective has no entry
for it in its dump; from late 2024 on only ranks that dumped are called missing, before
that a rank without a dump was too. A "culprit" is a rank whose entry differs from the
first rank's, so the culprits may be the healthy side: which side is wrong is not shown.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.hang.model import MISMATCH_FIX, Cause, ranks_text

__all__ = ["Analysis", "analysis_causes", "analysis_summary", "read_analysis"]

_HEADS = (
    (
        "missing",
        re.compile(
            r"Not all ranks joining collective"
            r"(?:[,:] sequence number: (\d+)| (\d+) at entry \d+)$"
        ),
    ),
    (
        "errors",
        re.compile(r"Collective(?: sequence number:)? (\d+)(?: at entry \d+)? (?:has )?errors$"),
    ),
    ("sizes", re.compile(r"Input/output mismatch in the collective sequence number: (\d+)$")),
)
_FIELD = re.compile(r"(internal record id|group info|collective|missing ranks|input sizes"
                    r"|output sizes|world size|expected ranks|collective state|error msg"
                    r"|total input numel|total output numel): (.*)$")  # fmt: skip
_CULPRIT = re.compile(r"Culprit rank (\d+); Error type: (\w+)")
#: the kinds of disagreement that are different calls (a state mismatch is not: one rank
#: finished a collective another only started)
_CALLS = ("SIZE_OR_SYNTAX_MISMATCH", "COLLECTIVE_TYPE_MISMATCH", "COLLECTIVE_DTYPE_MISMATCH")
MAX_ANALYSES = 64


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Analysis:
    """One collective the analyzer reported, with the lines that say so."""

    what: str  # missing, errors, sizes
    seq: int
    #: the form before late 2024 ("... at entry N"): a missing rank may have left no dump
    older: bool
    pg: str = ""
    pg_desc: str = ""
    collective: str = ""  # all_reduce (without the backend's "nccl:")
    missing: tuple[int, ...] = ()
    expected: tuple[int, ...] = ()  # where the report lists them
    world: int | None = None
    state: str = ""
    sizes: str = ""  # the input sizes, as printed
    #: (rank, error type) of each culprit the ``error msg`` line names
    culprits: tuple[tuple[int, str], ...] = ()
    error_msg: str = ""
    evidence: tuple[str, ...] = ()


def _ints(text: str) -> tuple[int, ...]:
    return tuple(sorted({int(n) for n in re.findall(r"-?\d+", text)}))


def read_analysis(path: str, text: str) -> list[Analysis]:
    """Every collective the analyzer reported in ``text`` (none when it holds no report)."""
    found: list[Analysis] = []
    current: dict[str, object] | None = None
    quotes: list[str] = []

    def close() -> None:
        if current is not None and len(found) < MAX_ANALYSES:
            found.append(Analysis(**current, evidence=tuple(quotes[:12])))  # type: ignore[arg-type]

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        head = next(((what, m) for what, rx in _HEADS if (m := rx.match(line))), None)
        if head is not None:
            close()
            what, match = head
            seq = next(g for g in match.groups() if g is not None)
            current = {"what": what, "seq": int(seq), "older": " at entry " in line}
            quotes = [f"{path}:{number}: {line}"]
            continue
        field = _FIELD.match(line) if current is not None else None
        if field is None or current is None:
            continue
        quotes.append(f"{path}:{number}: {line[:300]}")
        current.update(_field(*field.groups()))
    close()
    return found


def _field(name: str, value: str) -> dict[str, object]:
    """What one ``name: value`` line of a report sets."""
    value = value.strip()
    if name == "group info":
        pg, _, desc = value.partition(":")
        return {"pg": pg, "pg_desc": desc}
    if name == "collective":
        return {"collective": value.split(":", 1)[-1].strip()}
    if name == "missing ranks":
        return {"missing": _ints(value)}
    if name == "expected ranks":  # the ranks; their count in the form with "at entry"
        if value.startswith("{"):
            return {"expected": _ints(value)}
        return {"world": int(value)} if value.isdigit() else {}
    if name == "world size":
        return {"world": int(value)} if value.isdigit() else {}
    if name == "collective state":
        return {"state": value}
    if name == "input sizes":
        return {"sizes": value}
    if name == "error msg":
        culprits = tuple((int(r), t) for r, t in _CULPRIT.findall(value))
        return {"error_msg": value, "culprits": culprits}
    return {}


def _label(a: Analysis) -> str:
    group = f"{a.pg} ({a.pg_desc})" if a.pg_desc else a.pg
    return f"{a.collective or 'collective'} #{a.seq}" + (f" of group {group}" if group else "")


def analysis_causes(analyses: Sequence[Analysis]) -> list[Cause]:
    """The causes the reports name: ranks that never joined a collective, and ranks whose
    call differs from the others' (another op, size or dtype)."""
    causes = []
    for a in analyses:
        if a.what == "missing" and a.missing:
            joined = tuple(r for r in a.expected if r not in a.missing)
            none = "no entry for it in their dumps" + (", or no dump" if a.older else "")
            causes.append(
                Cause(
                    kind="never-entered",
                    pg=a.pg,
                    pg_desc=a.pg_desc,
                    seq=a.seq,
                    collective=a.collective,
                    ranks=a.missing,
                    waiting=joined,
                    evidence=a.evidence,
                    summary=f"{ranks_text(a.missing)} never joined {_label(a)} ({none}; the "
                    "Flight Recorder analyzer's report)"
                    + (f"; {ranks_text(joined)} called it ({a.state})" if joined else ""),
                    fix="see where these ranks stopped: their own last collectives (fr_trace "
                    "-j prints each rank's entries), their logs, whether they died; a rank "
                    "that took another branch never calls this collective",
                )
            )
        calls = [(r, t) for r, t in a.culprits if t in _CALLS]
        if a.what == "errors" and calls:
            named = tuple(sorted({r for r, _ in calls}))
            kinds = ", ".join(dict.fromkeys(t for _, t in calls))
            causes.append(
                Cause(
                    kind="mismatch",
                    pg=a.pg,
                    pg_desc=a.pg_desc,
                    seq=a.seq,
                    collective=a.collective,
                    ranks=named,
                    waiting=(),
                    majority=False,
                    evidence=a.evidence,
                    fix=MISMATCH_FIX,
                    summary=f"{ranks_text(named)} called {_label(a)} unlike the first rank "
                    f"the Flight Recorder analyzer compared them with ({kinds}; it called it "
                    f"with input sizes {a.sizes or 'not shown'}): which side is wrong is not "
                    "shown",
                )
            )
    return causes


def analysis_summary(analyses: Sequence[Analysis]) -> str | None:
    """What the reports say where they name no cause: a collective with errors whose
    ``error msg`` is not in the input (or says only that states differ), sizes that do
    not add up."""
    for a in analyses:
        shown = f"{_label(a)} ({', '.join(p for p in (a.sizes, a.state) if p)}"
        shown += f"; {a.world} ranks)" if a.world else ")"
        if a.what == "errors" and not a.culprits:
            return (
                f"the Flight Recorder analyzer found errors in {shown}: which ranks disagree, "
                "and how, is on its 'error msg' line, which this input does not hold"
            )
        if a.what == "errors":
            states = ", ".join(f"rank {r}" for r, _ in a.culprits)
            return (
                f"the Flight Recorder analyzer found {shown} in another state on {states} "
                "than on the first rank it compared (one finished or started it, the other "
                "not): the ranks stand at different places, no call differs"
            )
        if a.what == "sizes":
            return (
                f"the Flight Recorder analyzer found the sizes of {shown} not adding up across "
                "the ranks (total input and output element counts differ): a rank called it "
                "with other sizes; which one is not shown"
            )
    return None
