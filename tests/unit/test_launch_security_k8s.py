"""Issue 15, Kubernetes: the manifests ``hpnet launch --engine k8s`` writes give every
pod its values unchanged, through YAML and then the kubelet's ``$(VAR)`` expansion
(every value is read back with PyYAML and expanded as the kubelet does), and a named
secret reaches the pods only through a Secret of its own (``secretKeyRef``), in files
only the user can read. The stand-ins and the CLI runner are
:mod:`tests.unit.test_launch_security`'s."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.test_launch_security import World, mode


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def kubelet_expand(text: str, mapping: Callable[[str], str]) -> str:
    """What the kubelet makes of a container's command, args and env values: a port of
    k8s.io/kubernetes third_party/forked/golang/expansion/expand.go (``$$`` is ``$``,
    ``$(NAME)`` is NAME's value, any other ``$`` stays)."""
    out, cursor, checkpoint = [], 0, 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            rest = text[cursor + 1 :]
            if rest[0] == "$":
                read, advance = "$", 1
            elif rest[0] == "(":
                close = rest.find(")")
                read, advance = ("$(", 1) if close < 0 else (mapping(rest[1:close]), close + 1)
            else:
                read, advance = "$" + rest[0], 1
            out.append(read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def test_kubelet_expand_is_the_kubelets() -> None:
    """expand_test.go's own cases."""
    env = {"VAR_A": "A", "VAR_B": "B"}.get

    def mapping(name: str) -> str:
        return env(name) or f"$({name})"

    cases = {"$(VAR_A)": "A", "___$(VAR_B)___": "___B___", "$$(VAR_A)": "$(VAR_A)",
             "$$$(VAR_A)": "$A", "$$$$(VAR_A)": "$$(VAR_A)", "$(VAR_C)": "$(VAR_C)",
             "$(VAR_A": "$(VAR_A", "f000-$$VAR_A": "f000-$VAR_A", "$": "$", "$$": "$",
             "$VAR_A": "$VAR_A", "$()": "$()"}  # fmt: skip
    assert {k: kubelet_expand(k, mapping) for k in cases} == cases


#: what YAML and the kubelet could each read otherwise
TRICKY = ["$(X)", "$$(X)", "$$$(X)", "$", "a$", "$$", "$(", "cost: 5$", "a: b", "#c", " lead",
          "trail ", "yes", "null", "~", "010", "1e3", "-d", "'q'", '"dq"', "{x}", "[y]", "&a",
          "*b", "!t", "|", ">", "%p", "@a", "`b`", "\tt", "c\x01\x1b\x7f", "nel\x85",
          "l\u2028p\u2029", "bom\ufeff", "nc\ufffe\uffff", "\U0001f600 astral", "\rcr",
          "b\\s", "é", ""]  # fmt: skip


def containers(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    specs = manifest["spec"].get("pytorchReplicaSpecs") or manifest["spec"]["mpiReplicaSpecs"]
    return [c for r in specs.values() for c in r["template"]["spec"]["containers"]]


@pytest.mark.parametrize("kind", ["pytorchjob", "mpijob"])
def test_manifest_values_round_trip_through_yaml_and_the_kubelet(world: World, kind: str) -> None:
    named = [f"V{i}={v}" for i, v in enumerate(TRICKY)]
    flags = [a for n in named for a in ("--env", n)]
    done = world.launch("--engine", "k8s", "--k8s-kind", kind, "--image", "reg/img:1",
                        "--nnodes", "2", "--output-dir", "out", *flags, "--", "./prog",
                        *TRICKY)  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = yaml.safe_load((world.tmp / "out" / f"hpnet.{kind}.yaml").read_text())
    expanded = lambda name: f"<{name}>"  # noqa: E731 - any reference left would show
    for container in containers(manifest):
        values = {e["name"]: e["value"] for e in container["env"] if "value" in e}
        got = [values[f"V{i}"] for i in range(len(TRICKY))]
        # YAML gives the kubelet each value with its "$" doubled, then the kubelet's
        # expansion gives the pod the value
        assert got == [v.replace("$", "$$") for v in TRICKY]
        assert [kubelet_expand(v, expanded) for v in got] == TRICKY
        if "command" in container:
            words = [kubelet_expand(w, expanded) for w in container["command"]]
            assert words[-len(TRICKY) - 1 :] == ["./prog", *TRICKY]


@pytest.mark.parametrize("kind", ["pytorchjob", "mpijob"])
def test_a_named_secret_is_a_secret_key_ref_and_files_are_private(world: World, kind: str) -> None:
    token = f"tok-{secrets.token_hex(8)}"
    env = world.environ(MY_TOKEN=f"{token} $(X)")
    done = world.launch("--engine", "k8s", "--k8s-kind", kind, "--image", "reg/img:1",
                        "--output-dir", "out", "--env", "MY_TOKEN", "--", "./prog",
                        env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    path = world.tmp / "out" / f"hpnet.{kind}.yaml"
    assert token not in path.read_text() and token not in done.stdout
    refs = set()
    for container in containers(yaml.safe_load(path.read_text())):
        (entry,) = (e for e in container["env"] if e["name"] == "MY_TOKEN")
        assert entry.keys() == {"name", "valueFrom"}
        refs.add(json.dumps(entry["valueFrom"]["secretKeyRef"], sort_keys=True))
    secret_file = world.tmp / "out" / "hpnet.secret.yaml"
    secret = yaml.safe_load(secret_file.read_text())
    assert secret["kind"] == "Secret"
    assert secret["stringData"] == {"MY_TOKEN": f"{token} $(X)"}  # a Secret is not expanded
    assert refs == {json.dumps({"key": "MY_TOKEN", "name": secret["metadata"]["name"]})}
    assert mode(path) == 0o600 and mode(secret_file) == 0o600
