"""PyTorch Flight Recorder dumps, read without torch and without running their code.

Torch writes one dump per rank: on a watchdog timeout (``TORCH_NCCL_DUMP_ON_TIMEOUT``)
to ``TORCH_FR_DUMP_TEMP_FILE`` + rank (default ``/tmp/nccl_trace_rank_<rank>``), or when
asked (``torch._C._distributed_c10d._dump_fr_trace`` / ``_dump_fr_trace_json``). The
default dump is a pickle of plain containers; the JSON one has the same keys
(torch/csrc/distributed/c10d/FlightRecorder*.cpp, format ``version`` "2.x"):
``entries`` (one per collective or p2p op: ``pg_id``, ``process_group`` [name, desc],
``collective_seq_id``, ``p2p_seq_id``, ``is_p2p``, ``profiling_name`` such as
``nccl:all_reduce``, ``input_sizes``, ``input_dtypes``, ``output_sizes``, ``state``
scheduled / started / completed, ``time_created_ns``, ``timeout_ms``, ``frames``),
``pg_config`` (name -> desc and ranks) and ``pg_status`` (pg_id -> last enqueued,
started and completed sequence number). The rank is not in the dump: torch's own
analyser (torch/distributed/flight_recorder/components/loader.py) takes it from the
file name's trailing digits, and so does this.

A pickle can run code when loaded; :class:`PlainUnpickler` builds only the plain
containers a dump holds and refuses every class, so a crafted file is an input error,
never code run.
"""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hpnet.errors import InputError

__all__ = ["Entry", "RankDump", "load_dump", "looks_like_dump", "rank_of"]

#: what one rank's dump may be at most (a 20,000-entry buffer with frames is ~50 MB)
MAX_DUMP_BYTES = 512 * 1024 * 1024
_TORCH_NAME = re.compile(r"nccl_trace_rank_\d+$")
_TRAILING_DIGITS = re.compile(r"(\d+)(?:\.(?:json|pkl|pickle))?$")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """One recorded collective (or p2p op) of one rank."""

    pg: str  # the process group's name (``process_group[0]``: "0" is the default group)
    pg_desc: str
    seq: int  # collective_seq_id (p2p ops: p2p_seq_id, with ``p2p`` set)
    p2p: bool
    op: str  # profiling_name without the backend: all_reduce, all_gather, ...
    backend: str  # nccl, gloo
    input_sizes: tuple[tuple[int, ...], ...]
    output_sizes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    state: str  # scheduled, started, completed
    created_ns: int
    timeout_ms: int | None

    @property
    def signature(self) -> tuple[object, ...]:
        """What every rank of a collective must agree on."""
        return (self.op, self.input_sizes, self.output_sizes, self.dtypes)

    def describe(self) -> str:
        sizes = ",".join("x".join(str(d) for d in s) or "scalar" for s in self.input_sizes)
        dtypes = ",".join(self.dtypes)
        return f"{self.op} [{sizes}] {dtypes}".strip()


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankDump:
    """One rank's Flight Recorder dump."""

    rank: int
    path: str
    version: str
    entries: tuple[Entry, ...]
    #: pg name -> its global ranks, where the dump lists them (gloo's often does not)
    pg_ranks: Mapping[str, tuple[int, ...]]
    #: every rank any group of the dump lists, named or not (each is a rank of the job)
    listed: tuple[int, ...]
    #: pg id -> (last enqueued, last started, last completed); -1 where none
    pg_status: Mapping[str, tuple[int, int, int]]
    #: pg id -> pg name, from the entries
    pg_names: Mapping[str, str]


class PlainUnpickler(pickle.Unpickler):
    """Builds dicts, lists, tuples, strings, numbers, booleans and None; any class or
    function a pickle names (the way a pickle runs code) is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused: the dump names {module}.{name}")


def rank_of(path: str) -> int | None:
    """The rank a dump's file name ends with, as torch names them.

    >>> rank_of("/tmp/nccl_trace_rank_12"), rank_of("fr_dump_3.json"), rank_of("trace")
    (12, 3, None)
    """
    found = _TRAILING_DIGITS.search(Path(path).name)
    return int(found.group(1)) if found else None


def looks_like_dump(head: bytes, name: str = "") -> bool:
    """Whether a file that starts with ``head`` may be a dump: a pickle (protocol 2+
    starts with 0x80), a JSON object naming Flight Recorder's ``entries``, or a file
    named as torch names its dumps (``nccl_trace_rank_<rank>``: a truncated one is a
    dump that cannot be read, not a log).

    >>> looks_like_dump(b'{"comm_lib_version": "", "entries": [{"coll'), looks_like_dump(b"x")
    (True, False)
    >>> looks_like_dump(b'{"comm_lib', "nccl_trace_rank_3")
    True
    """
    if head[:1] == b"\x80" or _TORCH_NAME.match(name):
        return True
    return head.lstrip()[:1] == b"{" and b'"entries"' in head


def _decode(raw: bytes, path: str) -> Mapping[str, Any]:
    try:
        data = PlainUnpickler(io.BytesIO(raw)).load() if raw[:1] == b"\x80" else json.loads(raw)
    except (pickle.UnpicklingError, ValueError, EOFError, TypeError, IndexError) as exc:
        raise InputError(
            f"not a Flight Recorder dump: {str(exc)[:200]}",
            code="hang-dump",
            where=path,
            fix="pass the files torch wrote on the timeout (TORCH_FR_DUMP_TEMP_FILE, "
            "default /tmp/nccl_trace_rank_<rank>), whole",
        ) from None
    if (
        isinstance(data, dict)
        and "entries" not in data
        and "version" in data
        and "pg_config" in data
    ):
        # torch leaves "entries" out where it has none to write: a dump of only the
        # active collectives when none is (a clean job), or a buffer of 0
        return {**data, "entries": []}
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise InputError(
            "not a Flight Recorder dump: no list of entries",
            code="hang-dump",
            where=path,
            fix="pass the files torch wrote on the timeout, whole",
        )
    return data


def _ints(value: object) -> tuple[int, ...]:
    """The integers of a list (anything else in it is left out, as a whole non-list is).

    >>> _ints([0, "1", "x", 2.0]), _ints("[0]")
    ((0, 1, 2), ())
    """
    if not isinstance(value, list | tuple):
        return ()
    return tuple(int(v) for v in value if isinstance(v, int | float) or str(v).isdigit())


def _sizes(value: object) -> tuple[tuple[int, ...], ...]:
    return tuple(_ints(v) for v in value) if isinstance(value, list | tuple) else ()


def _number(value: object, default: int = -1) -> int:
    try:
        return int(str(value))
    except ValueError:
        return default


def _entry(raw: Mapping[str, Any]) -> Entry:
    group = raw.get("process_group") or ["", ""]
    name = str(raw.get("profiling_name") or "")
    backend, _, op = name.rpartition(":")
    p2p = bool(raw.get("is_p2p"))
    return Entry(
        pg=str(group[0]),
        pg_desc=str(group[1]) if len(group) > 1 else "",
        seq=_number(raw.get("p2p_seq_id" if p2p else "collective_seq_id"), 0),
        p2p=p2p,
        op=op or name,
        backend=backend,
        input_sizes=_sizes(raw.get("input_sizes")),
        output_sizes=_sizes(raw.get("output_sizes")),
        dtypes=tuple(str(d) for d in raw.get("input_dtypes") or ()),
        state=str(raw.get("state") or ""),
        created_ns=_number(raw.get("time_created_ns"), 0),
        timeout_ms=_number(raw.get("timeout_ms")) if raw.get("timeout_ms") is not None else None,
    )


def _pg_ranks(config: object, *, unnamed: bool = False) -> dict[str, tuple[int, ...]]:
    """pg name -> its ranks; ``unnamed``: also a group listed under the empty name
    (gloo's dumps list the world there)."""
    out: dict[str, tuple[int, ...]] = {}
    if not isinstance(config, dict):
        return out
    for name, value in config.items():
        ranks = value.get("ranks") if isinstance(value, dict) else None
        if isinstance(ranks, str):  # torch writes the list as text: "[0, 1, 2]"
            try:
                ranks = json.loads(ranks)
            except ValueError:
                ranks = None
        if isinstance(ranks, list) and ranks and (str(name) or unnamed):
            out[str(name)] = _ints(ranks)
    return out


def load_dump(path: str, raw: bytes, rank: int | None = None) -> RankDump:
    """One rank's dump from its bytes; ``rank`` from the file name unless given."""
    rank = rank if rank is not None else rank_of(path)
    if rank is None:
        raise InputError(
            "a Flight Recorder dump whose file name does not end with its rank",
            code="hang-dump",
            where=path,
            fix="keep torch's names (nccl_trace_rank_<rank>): the dump does not hold its rank",
        )
    data = _decode(raw, path)
    entries = tuple(_entry(e) for e in data["entries"] if isinstance(e, dict))
    status = {}
    for pg_id, value in (data.get("pg_status") or {}).items():
        if isinstance(value, dict):
            status[str(pg_id)] = (
                _number(value.get("last_enqueued_collective")),
                _number(value.get("last_started_collective")),
                _number(value.get("last_completed_collective")),
            )
    names = {}
    for e in data["entries"]:
        if isinstance(e, dict) and e.get("process_group"):
            names[str(e.get("pg_id"))] = str(e["process_group"][0])
    return RankDump(
        rank=rank,
        path=path,
        version=str(data.get("version") or ""),
        entries=entries,
        pg_ranks=_pg_ranks(data.get("pg_config")),
        listed=tuple(
            sorted({r for v in _pg_ranks(data.get("pg_config"), unnamed=True).values() for r in v})
        ),
        pg_status=status,
        pg_names=names,
    )
