"""Kubernetes plans: a Kubeflow PyTorchJob (kubeflow.org/v1) or MPIJob (v2beta1)
manifest with what the RDMA network needs in every pod.

Per pod: the GPUs (``nvidia.com/gpu``) and any RDMA device resources the cluster's
device plugin exposes (``--resource rdma/hca_shared_devices_a=1``), ``IPC_LOCK``
(registering memory with the NIC needs it; the guides' ``--ulimit memlock=-1``), a
memory-backed ``/dev/shm`` (NCCL's SHM transport; Docker's 64 MiB default is too
small), optional host networking, and the resolved environment as ``env``.

PyTorchJob: the operator sets MASTER_ADDR, MASTER_PORT, PET_NNODES, PET_NODE_RANK and
PET_NPROC_PER_NODE in every pod (training-operator ``pytorch/envvar.go``); torchrun
reads ``PET_*`` as its flags, and ``$(MASTER_ADDR)`` in ``command`` is expanded by
Kubernetes from the container's environment. The container must be named
``pytorch``. MPIJob: the launcher runs mpirun over the hostfile the operator writes;
``slotsPerWorker`` is the processes per worker.

The kubelet expands ``$(VAR)`` in a container's ``command``, ``args`` and ``env``
values, and reads ``$$`` as one ``$`` (k8s.io/kubernetes
``third_party/forked/golang/expansion``): every ``$`` of the user's words and values
is written ``$$``, so that each reaches the pod as it was given. A secret named with
``--env`` is never in the job's manifest: its pods read it from a Secret
(``valueFrom.secretKeyRef``), written to a file of its own for the user to apply
first. Every file is the user's alone (0600).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation
from hpnet.launch.plan import GeneratedFile, LaunchPlan, LaunchRequest
from hpnet.launch.torchrun import torchrun_target
from hpnet.launch.validate import check_job_name
from hpnet.secrets import REDACTED, is_secret
from hpnet.yamlquote import double_quoted

__all__ = ["build_k8s", "kubelet_escape", "to_yaml"]

#: a Kubernetes object's name (RFC 1123 label: PyTorchJob and MPIJob names also name
#: the job's pods and services)
_K8S_NAME = re.compile(r"^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\Z")


def kubelet_escape(text: str) -> str:
    """``text`` as the kubelet must read it back unchanged: every ``$`` doubled
    (``$$`` is a literal ``$``, so nothing is left for ``$(VAR)`` to expand).

    >>> kubelet_escape("$(DATA)"), kubelet_escape("$$(X)"), kubelet_escape("cost: 5$")
    ('$$(DATA)', '$$$$(X)', 'cost: 5$$')
    """
    return text.replace("$", "$$")


def _escape(words: Sequence[str]) -> list[str]:
    return [kubelet_escape(w) for w in words]


def _env_entries(env: Mapping[str, str], secret_name: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for name, value in env.items():
        if is_secret(name, value):
            ref = {"name": secret_name, "key": name}
            entries.append({"name": name, "valueFrom": {"secretKeyRef": ref}})
        else:
            entries.append({"name": name, "value": kubelet_escape(value)})
    if "NODE_NAME" not in env:
        # the node the pod runs on (inside a pod the host name is the pod's): what
        # hpnet isolate names for kubectl cordon / taint (hpnet.isolate.drain)
        field = {"fieldRef": {"fieldPath": "spec.nodeName"}}
        entries.append({"name": "NODE_NAME", "valueFrom": field})
    return entries


def _secret_manifest(
    request: LaunchRequest, name: str, secrets: Mapping[str, str], *, shown: bool
) -> str:
    """The Secret the pods read their named secrets from (``stringData``: the API
    server encodes it; a Secret's values are never expanded by the kubelet)."""
    meta: dict[str, Any] = {"name": name}
    if request.namespace:
        meta["namespace"] = request.namespace
    data = {k: (REDACTED if shown else v) for k, v in secrets.items()}
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": "Opaque",
              "stringData": data}  # fmt: skip
    return to_yaml(secret)


def _container(
    name: str,
    request: LaunchRequest,
    command: Sequence[str] | None,
    env: Mapping[str, str],
    nproc: int,
    *,
    gpus: bool,
) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    if gpus:
        limits["nvidia.com/gpu"] = nproc
    for key, value in request.resources:
        number = value.isascii() and value.isdigit() and len(value) < 19
        limits[key] = int(value) if number else value
    container: dict[str, Any] = {
        "name": name,
        "image": request.image,
        "imagePullPolicy": "IfNotPresent",
        "env": _env_entries(env, _secret_name(request)),
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    if command is not None:
        container["command"] = list(command)
    if limits:
        container["resources"] = {"limits": limits}
    return container


def _pod(request: LaunchRequest, container: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [container],
        "volumes": [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": request.shm_size}}
        ],
    }
    if request.host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"  # keep cluster DNS with host networking
    return {"spec": spec}


def _secret_name(request: LaunchRequest) -> str:
    return f"{request.job_name}-env"


def _metadata(request: LaunchRequest) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": request.job_name}
    if request.namespace:
        meta["namespace"] = request.namespace
    return meta


def build_k8s(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    num_nodes: int | None,
    gpus: bool = True,
) -> LaunchPlan:
    if not request.image:
        raise InputError(
            "a Kubernetes job needs the container image",
            code="usage",
            where="hpnet launch --engine k8s",
            fix="--image registry/project/image:tag",
        )
    check_job_name(request.job_name)
    if not _K8S_NAME.match(request.job_name) or len(_secret_name(request)) > 63:
        raise InputError(
            f"not a Kubernetes name: {request.job_name!r}",
            code="bad-job-name",
            where=f"--job-name {request.job_name}",
            fix="name a Kubernetes job with lowercase letters, digits and '-' (up to 59)",
        )
    nnodes = num_nodes or context.num_nodes
    nproc = request.nproc_per_node or context.nproc_per_node or 1
    env = dict(propagation.env)
    secrets = propagation.secrets()
    if request.kind == "pytorchjob":
        command = [
            "torchrun", "--master-addr", "$(MASTER_ADDR)", "--master-port", "$(MASTER_PORT)",
            *_escape(torchrun_target(request.command)),
        ]  # fmt: skip
        pod = _pod(request, _container("pytorch", request, command, env, nproc, gpus=gpus))
        replicas: dict[str, Any] = {
            "Master": {"replicas": 1, "restartPolicy": "Never", "template": pod}
        }
        if nnodes > 1:
            replicas["Worker"] = {"replicas": nnodes - 1, "restartPolicy": "Never", "template": pod}
        manifest: dict[str, Any] = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": _metadata(request),
            "spec": {
                "nprocPerNode": str(nproc),
                "runPolicy": {"cleanPodPolicy": "Running"},
                "pytorchReplicaSpecs": replicas,
            },
        }
    else:
        mpirun = [
            "mpirun", "--allow-run-as-root", "-np", str(nnodes * nproc), "--bind-to", "none",
            "-map-by", "slot", "-mca", "pml", "ob1", "-mca", "btl", "^openib",
        ]  # fmt: skip
        for name in env:
            mpirun += ["-x", name]  # the launcher has them in its env; -x copies them
        launcher = _container(
            "launcher", request, [*mpirun, *_escape(request.command)], env, nproc, gpus=False
        )
        launcher.pop("resources", None)
        # the worker runs its image's entrypoint: sshd, for the launcher's mpirun
        worker = _container("worker", request, None, env, nproc, gpus=gpus)
        manifest = {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": _metadata(request),
            "spec": {
                "slotsPerWorker": nproc,
                "runPolicy": {"cleanPodPolicy": "Running"},
                "mpiImplementation": "OpenMPI",
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": _pod(request, launcher)},
                    "Worker": {"replicas": nnodes, "template": _pod(request, worker)},
                },
            },
        }
    path = os.path.join(request.output_dir, f"{request.job_name}.{request.kind}.yaml")
    files = [GeneratedFile(path=path, content=to_yaml(manifest), purpose=f"the {manifest['kind']}")]
    apply = f"apply it with: kubectl apply -f {path}"
    if secrets:
        secret_path = os.path.join(request.output_dir, f"{request.job_name}.secret.yaml")
        files.insert(
            0,
            GeneratedFile(
                path=secret_path,
                content=_secret_manifest(request, _secret_name(request), secrets, shown=False),
                shown=_secret_manifest(request, _secret_name(request), secrets, shown=True),
                purpose=f"the Secret {_secret_name(request)} with {', '.join(secrets)}, "
                "which the pods read (secretKeyRef)",
            ),
        )
        apply = (
            f"apply them with: kubectl apply -f {secret_path} && kubectl apply -f {path} "
            f"({secret_path} holds secrets: keep it to yourself, delete it once applied)"
        )
    return LaunchPlan(
        engine="k8s", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=(), files=tuple(files), propagation=propagation,
        notes=(
            apply,
            *(
                ("MPIJob workers run their image's entrypoint, which must start sshd (as "
                 "mpi-operator's base images do)",)
                if request.kind == "mpijob" else ()
            ),
        ),
    )  # fmt: skip


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block-style YAML with every string double-quoted in JSON's syntax (a YAML
    subset): no value can turn into YAML syntax, whatever it holds.

    >>> print(to_yaml({"a": [1, {"b": "x: y"}], "c": True}), end="")
    a:
      - 1
      - b: "x: y"
    c: true
    """
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        if not value:
            return pad + "{}\n"
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{_scalar(key)}:")
                lines.append(to_yaml(item, indent + 1).rstrip("\n"))
            else:
                lines.append(f"{pad}{_scalar(key)}: {_scalar(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                body = to_yaml(item, indent + 1).rstrip("\n").splitlines()
                first = body[0].lstrip()
                lines.append(f"{pad}- {first}")
                lines += body[1:]
            elif isinstance(item, list) and item:
                lines.append(f"{pad}-")
                lines.append(to_yaml(item, indent + 1).rstrip("\n"))
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    else:
        lines.append(pad + _scalar(value))
    return "\n".join(lines) + "\n"


_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text  # a plain ASCII word reads the same in every YAML parser
    return double_quoted(text)
