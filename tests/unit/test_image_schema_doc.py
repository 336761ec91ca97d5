"""docs/image-schema.md agrees with `hpnet image dockerfile|run-flags|check --json`,
key path by key path (both ways)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from tests.unit.test_schema_doc import documented_paths, emitted_paths

DOC = documented_paths((Path(__file__).parents[2] / "docs" / "image-schema.md").read_text())


def emitted(args: list[str], prefix: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    assert main(["image", *args, "--json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert data["schema_version"] == 1
    # the pod spec is Kubernetes' own schema (validated in test_image_check), not hpnet's
    return {p for p in emitted_paths(data, prefix) if not p.startswith(f"{prefix}.pod.")}


def documented(prefix: str) -> set[str]:
    return {p for p in DOC if p.startswith(prefix + ".")}


def test_dockerfile(capsys: pytest.CaptureFixture[str]) -> None:
    paths = emitted(["dockerfile", "--profile", "ecs-erdma", "--base", "centos:7"], "x", capsys)
    paths = {"dockerfile" + p[1:] for p in paths}
    assert paths == documented("dockerfile")


def test_run_flags(sysfs_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    root = str(sysfs_tree("cx6-ib-dgx"))
    paths = emitted(["run-flags", "--sysfs-root", root, "--profile", "ecs-erdma"], "x", capsys)
    assert {"run-flags" + p[1:] for p in paths} == documented("run-flags")


def test_check(sysfs_tree: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    root = str(sysfs_tree("container-no-uverbs"))
    paths = emitted(["check", "--sysfs-root", root, "--profile", "ib"], "x", capsys)
    assert {"check" + p[1:] for p in paths} == documented("check")
