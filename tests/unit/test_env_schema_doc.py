"""docs/env-schema.md documents exactly the keys of `hpnet env --format json`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hpnet.detect import DetectOptions, detect
from hpnet.nccl.env import resolve_env
from hpnet.nccl.formats import to_json
from hpnet.profiles import get_profile
from hpnet.runner import RecordedRunner

DOC = (Path(__file__).parents[2] / "docs" / "env-schema.md").read_text()


def first_column_keys(section: str) -> set[str]:
    return set(re.findall(r"^\| `([a-z_]+)`", section, re.MULTILINE))


def test_doc_and_output_agree(sysfs_tree: Callable[[str], Path]) -> None:
    inventory = detect(
        DetectOptions(sysfs_root=str(sysfs_tree("erdma-alibaba"))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )
    data = to_json(
        resolve_env(get_profile("pai-dlc-erdma"), inventory, environment={"NCCL_IB_TC": "1"})
    )
    top, variable = DOC.split("## A variable", 1)
    assert first_column_keys(top) == set(data)
    variables = data["variables"]
    assert isinstance(variables, dict)
    for entry in variables.values():
        assert first_column_keys(variable) == set(entry)
        for layer in entry["layers"]:
            assert set(layer) == {"origin", "value", "reason"}
    findings = data["findings"]
    assert isinstance(findings, list) and findings
    assert set(findings[0]) == {"severity", "code", "message"}
