"""`hpnet launch --engine k8s`: PyTorchJob and MPIJob manifests that parse as YAML,
validate against Kubeflow's CRD schemas (tests/data/k8s) and whose pod templates
validate strictly against the Kubernetes API's own schema (kubernetes-validate,
offline); golden copies pin them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from hpnet.launch.plan import LaunchPlan
from tests.conftest import DATA
from tests.unit.test_launch import plan

GOLDEN = Path(__file__).parents[1] / "golden" / "launch"
SCHEMAS = {
    "PyTorchJob": DATA / "k8s" / "pytorchjob-v1.crd-schema.json",
    "MPIJob": DATA / "k8s" / "mpijob-v2beta1.crd-schema.json",
}
ENVIRON = {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "HF_TOKEN": "hf_secret"}


def manifest_plan(kind: str) -> LaunchPlan:
    return plan(
        "python train.py --data $(DATA) --note 'a: b'",
        ENVIRON,
        engine="k8s",
        kind=kind,
        num_nodes=2,
        nproc_per_node=8,
        image="registry.example/team/train:1.0",
        resources=(("rdma/hca_shared_devices_a", "1"),),
        host_network=True,
        namespace="ml",
    )


def pod_templates(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    specs = manifest["spec"].get("pytorchReplicaSpecs") or manifest["spec"]["mpiReplicaSpecs"]
    return [replica["template"] for replica in specs.values()]


@pytest.mark.parametrize("kind", ["pytorchjob", "mpijob"])
def test_manifest_is_valid_and_golden(kind: str) -> None:
    got = manifest_plan(kind)
    assert got.commands == ()  # the manifest is the deliverable
    text = got.files[0].content
    assert text == (GOLDEN / f"{kind}-2x8.yaml").read_text()
    manifest = yaml.safe_load(text)
    schema = json.loads(SCHEMAS[manifest["kind"]].read_text())
    jsonschema.validate(manifest, schema)
    for template in pod_templates(manifest):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, **template}
        kubernetes_validate.validate(pod, kubernetes_validate.latest_version(), strict=True)
        container = template["spec"]["containers"][0]
        assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
        assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
        assert template["spec"]["hostNetwork"] is True
        env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
        assert env["NCCL_IB_HCA"] == "mlx5" and "HF_TOKEN" not in env
        # the node's name for hpnet isolate --drain (a pod's host name is the pod's)
        assert env["NODE_NAME"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def test_pytorchjob_details() -> None:
    manifest = yaml.safe_load(manifest_plan("pytorchjob").files[0].content)
    spec = manifest["spec"]
    assert spec["nprocPerNode"] == "8"
    assert spec["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    assert spec["pytorchReplicaSpecs"]["Worker"]["replicas"] == 1
    container = spec["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    assert container["name"] == "pytorch"  # the operator looks for this name
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/hca_shared_devices_a": 1}
    # $(MASTER_ADDR) is for Kubernetes to expand; the user's $(DATA) is kept literal
    assert container["command"] == [
        "torchrun", "--master-addr", "$(MASTER_ADDR)", "--master-port", "$(MASTER_PORT)", "--",
        "train.py", "--data", "$$(DATA)", "--note", "a: b",
    ]  # fmt: skip


def test_the_schemas_catch_a_wrong_manifest() -> None:
    manifest = yaml.safe_load(manifest_plan("mpijob").files[0].content)
    manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = "two"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(manifest, json.loads(SCHEMAS["MPIJob"].read_text()))
    template = pod_templates(yaml.safe_load(manifest_plan("mpijob").files[0].content))[0]
    template["spec"]["containers"][0]["secrityContext"] = {}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, **template}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, kubernetes_validate.latest_version(), strict=True)


def test_an_image_is_required() -> None:
    from hpnet.errors import InputError

    with pytest.raises(InputError) as caught:
        plan("python t.py", engine="k8s")
    assert "--image" in caught.value.fix
