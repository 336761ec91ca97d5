"""Every ``--json`` document is built by :func:`hpnet.jsonout.envelope`: no other module
writes the ``schema_version`` key itself."""

from __future__ import annotations

import ast
import dataclasses
import enum
import json
from pathlib import Path
from typing import ClassVar

import pytest

from hpnet.jsonout import dump_envelope, dumps, envelope, inert, to_data

SRC = Path(__file__).resolve().parents[2] / "src" / "hpnet"
KEY = "schema_version"


def _builds_the_key(node: ast.AST) -> bool:
    """``{"schema_version": ...}``, ``dict(schema_version=...)``, ``d["schema_version"] = ...``."""
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == KEY for k in node.keys)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return any(k.arg == KEY for k in node.keywords)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(
            isinstance(t, ast.Subscript)
            and isinstance(t.slice, ast.Constant)
            and t.slice.value == KEY
            for t in targets
        )
    return False


def test_only_jsonout_writes_the_schema_version_key() -> None:
    found = [
        f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC) != Path("jsonout.py")
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if _builds_the_key(node)
    ]
    assert not found, f"build these documents with hpnet.jsonout.envelope: {found}"


def test_the_scan_sees_each_shape() -> None:
    for text in ('{"schema_version": 1}', "dict(schema_version=1)", 'd["schema_version"] = 1'):
        assert any(_builds_the_key(n) for n in ast.walk(ast.parse(text))), text


class _Colour(str, enum.Enum):
    RED = "red"


@dataclasses.dataclass(frozen=True)
class _Body:
    status: _Colour
    nodes: tuple[str, ...]


def test_envelope_key_order_and_conversion() -> None:
    data = envelope(
        _Body(status=_Colour.RED, nodes=("a",)),
        schema_version=3,
        verdict="ok",
        after={"exit_code": 1},
    )
    assert list(data) == ["schema_version", "verdict", "status", "nodes", "exit_code"]
    assert data == {
        "schema_version": 3,
        "verdict": "ok",
        "status": "red",
        "nodes": ["a"],
        "exit_code": 1,
    }
    # a body key that repeats an earlier one wins its value, not its place ({**a, **b})
    assert list(envelope({"verdict": "body"}, schema_version=1, verdict="x").items()) == [
        ("schema_version", 1),
        ("verdict", "body"),
    ]


def test_envelope_refuses_a_body_that_is_not_an_object() -> None:
    with pytest.raises(TypeError):
        envelope(["a"], schema_version=1)


class _Number(enum.IntEnum):
    THREE = 3


@dataclasses.dataclass(frozen=True)
class _WithProperty:
    value: object
    more: object = ()
    JSON_PROPERTIES: ClassVar[tuple[str, ...]] = ("doubled",)

    @property
    def doubled(self) -> list[object]:
        return [self.value, self.value]


# every kind of value a report holds, and the corners json.dumps writes its own way
_CORNERS: dict[object, object] = {
    "numbers": [0, -1, 10**30, 1.5, -0.0, 1e300, float("inf"), -float("inf"), float("nan")],
    "words": ["", "é", "\x9b2J", "\u2028", "\u202e", "\x00\x1f", '"\\', "\t\n"],
    "flags": (True, False, None),
    "enums": (_Colour.RED, _Number.THREE),
    "nested": [[[]], {}, (), [{}], {"a": []}],
    "body": _WithProperty(value=_Colour.RED, more={1: (), None: {}, "k": Path("/a b")}),
    "counter": __import__("collections").Counter(a=2),
    "subclasses": [type("Text", (str,), {})("x"), type("Real", (float,), {})(2.5)],
    7: "a key that is not text",
}


def test_dumps_writes_what_json_dumps_writes() -> None:
    expected = inert(json.dumps(to_data(_CORNERS), indent=2, ensure_ascii=False))
    assert dumps(_CORNERS) == expected
    assert "\\u009b" in expected and "NaN" in expected  # the corners are in it


def test_dump_envelope_is_dumps_of_envelope() -> None:
    body = _WithProperty(value=(1, "x"))
    args: dict[str, object] = {"schema_version": 2, "status": "PASS", "after": {"code": 1}}
    assert dump_envelope(body, **args) == dumps(envelope(body, **args))  # type: ignore[arg-type]
    assert dump_envelope({"status": "body"}, schema_version=1, status="x") == dumps(
        {"schema_version": 1, "status": "body"}
    )
    with pytest.raises(TypeError):
        dump_envelope(["a"], schema_version=1)


def test_dumps_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError):
        dumps({"a": object()})
