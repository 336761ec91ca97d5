"""The error-code catalogue (src/hpnet/error_codes.py) against the code that raises errors.

An AST scan of src/hpnet finds every code an error can carry: the ``code=`` of a call
to an :class:`~hpnet.errors.HpnetError` class (or the default of one, ``ParseError``'s
``"parse"``), of a function that passes its ``code`` parameter on to one
(``parse_json``), the ``*code`` fields of a ``FileRole``, and the ``error[<code>]`` the
CLI prints itself. Each must be catalogued, each catalogued code raised somewhere.

Regenerate docs/errors.md after changing the catalogue::

    python -c "from hpnet.error_codes import markdown; print(markdown(), end='')" > docs/errors.md
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import defaultdict
from pathlib import Path

import pytest

import hpnet.errors
from hpnet.error_codes import ERROR_CODES, markdown
from hpnet.errors import HpnetError, InputError, UnknownErrorCode
from hpnet.inputfile import FileRole

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "hpnet"
KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
PRINTED = re.compile(r"error\[([^\]]*)\]")
ROLE_FIELDS = frozenset(f.name for f in dataclasses.fields(FileRole) if f.name.endswith("code"))

Trees = dict[Path, ast.Module]


def _trees() -> Trees:
    return {path: ast.parse(path.read_text(), str(path)) for path in sorted(SRC.rglob("*.py"))}


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _error_classes(trees: Trees) -> set[str]:
    """HpnetError and every class that derives from it in src/hpnet."""
    names = {"HpnetError"}
    classes = [n for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    while True:
        more = {c.name for c in classes if any(_name(b) in names for b in c.bases)} - names
        if not more:
            return names
        names |= more


def _code_default(func: ast.FunctionDef) -> tuple[bool, str | None]:
    """Whether ``func`` takes a ``code`` parameter, and its default (None: required)."""
    args = func.args
    positional = args.posonlyargs + args.args
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if arg.arg == "code":
            return True, default.value if isinstance(default, ast.Constant) else None
    for i, arg in enumerate(positional):
        if arg.arg == "code":
            at = i - (len(positional) - len(args.defaults))
            default = args.defaults[at] if at >= 0 else None
            return True, default.value if isinstance(default, ast.Constant) else None
    return False, None


def _takers(trees: Trees, classes: set[str]) -> dict[str, str | None]:
    """Callables that carry a code into an error -> the code used when none is passed.

    The error classes (their ``__init__``'s default, else required) and functions
    with a ``code`` parameter that pass it on to an error class (``parse_json``)."""
    takers: dict[str, str | None] = dict.fromkeys(classes)
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in classes:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        takes, default = _code_default(item)
                        if takes:
                            takers[node.name] = default
            elif isinstance(node, ast.FunctionDef) and node.name != "__init__":
                takes, default = _code_default(node)
                passes = any(
                    isinstance(call, ast.Call)
                    and _name(call.func) in classes
                    and any(
                        k.arg == "code" and isinstance(k.value, ast.Name) and k.value.id == "code"
                        for k in call.keywords
                    )
                    for call in ast.walk(node)
                )
                if takes and passes:
                    takers[node.name] = default
    return takers


def _literals(node: ast.expr, where: str, unresolved: list[str]) -> list[str]:
    """The codes a ``code=`` expression can hold; a shape the scan does not know is
    recorded in ``unresolved`` (turn it into literals, or teach the scan)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _literals(node.body, where, unresolved) + _literals(node.orelse, where, unresolved)
    if isinstance(node, ast.BoolOp):
        return [c for value in node.values for c in _literals(value, where, unresolved)]
    if isinstance(node, ast.Name) and node.id == "code":
        return []  # a code-taking function's parameter: its callers are scanned
    if isinstance(node, ast.Attribute) and node.attr in ROLE_FIELDS:
        return []  # a FileRole's field: the FileRole(...) calls are scanned
    if isinstance(node, ast.Attribute) and node.attr == "code":
        return []  # an error's code passed on (re-raised with a line): checked where raised
    unresolved.append(f"{where}: code={ast.unparse(node)}")
    return []


@dataclasses.dataclass
class Scan:
    #: code -> "path:line (Class)" of each place it is given
    sites: dict[str, list[str]]
    #: code -> the error classes (or "printed") it goes with
    kinds: dict[str, set[str]]
    unresolved: list[str]


@pytest.fixture(scope="module")
def scan() -> Scan:
    trees = _trees()
    classes = _error_classes(trees)
    takers = _takers(trees, classes)
    sites: dict[str, list[str]] = defaultdict(list)
    kinds: dict[str, set[str]] = defaultdict(set)
    unresolved: list[str] = []

    def add(code: str, where: str, kind: str) -> None:
        sites[code].append(f"{where} ({kind})")
        kinds[code].add(kind)

    for path, tree in trees.items():
        rel = path.relative_to(SRC)
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                name = _name(node.func)
                keywords = {k.arg: k.value for k in node.keywords}
                if name in takers:
                    kind = name if name in classes else "InputError"
                    if "code" in keywords:
                        for code in _literals(keywords["code"], where, unresolved):
                            add(code, where, kind)
                    elif takers[name] is not None:
                        add(str(takers[name]), where, kind)
                    elif None not in keywords:  # no **kwargs that could carry it
                        unresolved.append(f"{where}: {name}(...) without a code")
                elif name == "FileRole":
                    for key, value in keywords.items():
                        if key in ROLE_FIELDS:
                            for code in _literals(value, where, unresolved):
                                add(code, where, "InputError")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith("error[")
            ):
                match = PRINTED.match(node.value)
                if match:
                    add(match[1], where, "printed")
                elif rel != Path("errors.py") and node.value != "error[":
                    # HpnetError.render writes error[{self.code}]; a bare "error[" is
                    # a reader of such lines (cluster/spawn.py), no code
                    unresolved.append(f"{where}: a printed code not written out")
    return Scan(dict(sites), dict(kinds), unresolved)


def test_scan_understands_every_site(scan: Scan) -> None:
    assert not scan.unresolved, "codes the scan cannot read (use a literal):\n" + "\n".join(
        scan.unresolved
    )
    # the scan sees the indirect routes, not only literals at raise sites
    assert "parse" in scan.sites and "listing-not-found" in scan.sites
    assert {"internal", "interrupted", "terminated"} <= set(scan.sites)


def test_every_code_given_is_catalogued(scan: Scan) -> None:
    missing = {code: scan.sites[code] for code in sorted(set(scan.sites) - set(ERROR_CODES))}
    assert not missing, f"add to src/hpnet/error_codes.py: {missing}"


def test_every_catalogued_code_is_given(scan: Scan) -> None:
    unused = sorted(set(ERROR_CODES) - set(scan.sites))
    assert not unused, f"no longer raised anywhere, drop from the catalogue: {unused}"


def test_codes_are_kebab_case_unique_and_sorted() -> None:
    tree = ast.parse((SRC / "error_codes.py").read_text())
    (table,) = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "ERROR_CODES"
    ]
    assert isinstance(table, ast.Dict)
    keys = [k.value for k in table.keys if isinstance(k, ast.Constant)]
    assert len(keys) == len(table.keys) == len(set(keys)) == len(ERROR_CODES)
    assert keys == sorted(keys)
    assert [k for k in keys if not KEBAB.fullmatch(k)] == []


def test_meanings_are_one_line() -> None:
    for code, entry in ERROR_CODES.items():
        assert entry.meaning and "\n" not in entry.meaning and "|" not in entry.meaning, code
        assert entry.meaning == entry.meaning.strip(), code


def test_exit_status_matches_the_error_class(scan: Scan) -> None:
    for code, kinds in scan.kinds.items():
        statuses = {
            "printed" if kind == "printed" else str(int(getattr(hpnet.errors, kind).exit_code))
            for kind in kinds
        }
        if statuses != {"printed"}:
            assert statuses == {ERROR_CODES[code].exit_status}, (code, kinds)


def test_docs_page_is_generated_from_the_catalogue() -> None:
    page = (ROOT / "docs" / "errors.md").read_text()
    assert page == markdown(), "regenerate docs/errors.md (see this file's docstring)"
    for code in ERROR_CODES:
        assert f"| `{code}` |" in page


def test_readme_points_at_the_docs_page() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Exit codes and errors", 1)[1].split("\n## ", 1)[0]
    assert "docs/errors.md" in section
    # the whole exit-code table and the error format moved to docs/exit-codes.md (issue 26)
    assert "docs/exit-codes.md" in section
    page = (ROOT / "docs" / "exit-codes.md").read_text()
    assert "[errors.md](errors.md)" in page


def test_an_unknown_code_warns_but_the_error_stands() -> None:
    with pytest.warns(UnknownErrorCode, match="not-a-catalogued-code"):
        error = InputError("what", code="not-a-catalogued-code", where="here", fix="fix")
    assert error.render() == "error[not-a-catalogued-code]: what — here — fix"
    assert isinstance(error, HpnetError) and error.exit_code == 2
