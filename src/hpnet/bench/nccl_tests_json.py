"""Read nccl-tests' ``-J`` JSON output (2.17.3+) into the bench result model.

:func:`parse_nccl_tests_json` takes the file already parsed, :func:`parse_json_text`
its text; a field of the wrong type is a :class:`~hpnet.errors.ParseError` that names
it (``results[3].size``). The text reader is :mod:`hpnet.bench.nccl_tests`.
"""

from __future__ import annotations

import math

from hpnet.bench.model import BenchReport, BenchRun, Measurement, Row, average_busbw
from hpnet.bench.nccl_tests import op_from
from hpnet.bench.nccl_tests_rows import INTEGER, MAX_DIGITS
from hpnet.errors import ParseError

__all__ = ["parse_json_text", "parse_nccl_tests_json"]


_JSON_FIX = "pass the file nccl-tests -J wrote, or its text output"


def parse_json_text(text: str, source: str) -> BenchReport:
    """nccl-tests' ``-J`` file (version 1-3, src/util.cu); a field of the wrong type is
    a ParseError that names it (``results[3].size``)."""
    from hpnet.inputfile import parse_json  # noqa: PLC0415 - JSON input only

    return parse_nccl_tests_json(
        parse_json(text, source=source, fix=_JSON_FIX, code="bad-result"), source=source
    )


def parse_nccl_tests_json(data: object, *, source: str = "<json>") -> BenchReport:
    """The report of nccl-tests' ``-J`` file, already parsed (:func:`json.loads`)."""
    path = ["the top level"]  # where the reading is, for the error
    try:
        return _json_report(data, source, path)
    except (AttributeError, KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ParseError(
            f"not nccl-tests -J JSON: {path[-1]}: {type(exc).__name__}: {exc}",
            source=source,
            fix=_JSON_FIX,
            code="bad-result",
        ) from None


def _json_number(value: object) -> float:
    """A double as -J writes it: a number, or the string ``"nan"`` (util.cu:290-296)."""
    number = float(str(value))
    if math.isinf(number):
        raise ValueError(f"{value!r} is out of range")
    return number


def _json_int(value: object) -> int:
    text = str(value).strip()
    if len(text) > MAX_DIGITS:
        raise ValueError(f"{text[:40]!r} is out of range")
    return int(_json_number(text)) if not INTEGER.fullmatch(text) else int(text)


def _json_report(data: object, source: str, path: list[str]) -> BenchReport:
    """``path[-1]`` names the part being read, for the caller's error."""
    data = _json_dict(data)
    path.append("args")
    args = _json_list(data.get("args", []))
    op = op_from(" ".join(str(a) for a in args)) or "unknown"
    path.append("config")
    config = _json_dict(data.get("config", {}))
    path.append("config.devices")
    devices = _json_list(config.get("devices", []))
    rows = []

    def measure(part: object) -> Measurement | None:
        if not part:
            return None
        part = _json_dict(part)
        wrong = part.get("nwrong")
        return Measurement(
            time_us=_json_number(part.get("time", 0)),
            algbw_gbps=_json_number(part.get("alg_bw", 0)),
            busbw_gbps=_json_number(part.get("bus_bw", 0)),
            wrong=_json_int(wrong) if wrong is not None else None,
        )

    path.append("results")
    for index, item in enumerate(_json_list(data.get("results", []))):
        path.append(f"results[{index}]")
        result = _json_dict(item)
        root = str(result.get("root", "-1")).strip()
        rows.append(
            Row(
                size_bytes=_json_int(result["size"]),
                count=_json_int(result["count"]),
                dtype=str(result.get("type", "")),
                redop=str(result.get("redop", "") or "none"),
                root=_json_int(root) if root else -1,
                out_of_place=measure(result.get("out_of_place")),
                in_place=measure(result.get("in_place")),
            )
        )
    path.append("average_bus_bandwidth")
    avg = _json_dict(data.get("average_bus_bandwidth", {})).get("bandwidth")
    average = _json_number(avg) if avg is not None else average_busbw(rows)
    path.append("out_of_bounds")
    oob = _json_dict(data.get("out_of_bounds", {})).get("count")
    out_of_bounds = _json_int(oob) if oob is not None else None
    path.append("config.graph")
    graph = _json_int(config.get("graph", 0) or 0)
    run = BenchRun(
        op=op,
        nranks=len(devices) or None,
        rows=tuple(rows),
        avg_busbw_gbps=average,
        out_of_bounds=out_of_bounds,
        graph_launches=graph,
    )
    version = data.get("nccl_version")
    if not isinstance(version, (str, int, type(None))):
        version = str(version)
    return BenchReport(source=source, runs=(run,), metadata={"nccl_version": version, "args": args})


_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", bool: "true or false"}


def _json_kind(value: object) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), "a number")


def _json_list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError(f"{_json_kind(value)}, not a list")
    return value


def _json_dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TypeError(f"{_json_kind(value)}, not an object")
    return value
