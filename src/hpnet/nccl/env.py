"""``hpnet env``: the NCCL environment for a node, each value with its origin.

Layers, lowest first (PRODUCT.md, ``hpnet env``):

1. NCCL's default (from the catalog; shown by ``--explain``, never emitted),
2. the platform profile,
3. what the node calls for (:mod:`hpnet.nccl.fill`: HCAs, GID index, interface),
4. the user's overrides (``--set K=V``, ``--config FILE.toml``),
5. variables already set in the environment: kept, and reported when they disagree
   with what the layers below would give; ``override_env`` lets the layers win.

``NCCL_*`` names NCCL does not read but images and frameworks set (``NCCL_VERSION``
from NVIDIA's CUDA images, PyTorch's deprecated ``NCCL_ASYNC_ERROR_HANDLING``: see
:data:`hpnet.nccl.catalog.FOREIGN`) are not NCCL settings: they stay in the job's
environment as they are, are not copied into the output, and get an ``info`` finding.

:func:`resolve_env` is pure: the inventory, the overrides and the environment are
passed in.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hpnet.nccl.catalog import foreign, lookup, suggest, validate
from hpnet.nccl.fill import decide, detected_values
from hpnet.nccl.rules import is_variable_name, transport_word
from hpnet.result import Finding, Severity
from hpnet.secrets import REDACTED, is_secret, looks_secret, redact, redact_text

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = ["Layer", "Origin", "Resolution", "ResolvedVar", "for_display", "resolve_env"]

#: what an environment variable's name must look like to be taken at all: a name
#: that is not a shell identifier could not be exported safely


class Origin(str, enum.Enum):
    NCCL_DEFAULT = "nccl-default"
    PROFILE = "profile"
    DETECTED = "detected"
    USER = "user"
    ENVIRONMENT = "environment"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Layer:
    """One layer's word on a variable; ``value`` None means "leave it unset"."""

    origin: Origin
    value: str | None
    reason: str
    source: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ResolvedVar:
    name: str
    value: str | None  # None: not set (the layers agree it should stay unset)
    origin: Origin
    reason: str
    source: str | None
    layers: tuple[Layer, ...]  # every layer that spoke, lowest first
    notes: tuple[str, ...] = ()
    invalid: str | None = None  # the catalog's objection to the value, if any


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Resolution:
    profile: str
    transport: str
    nccl_version: str | None
    node: str
    variables: tuple[ResolvedVar, ...]
    findings: tuple[Finding, ...]
    #: the node's decisions as JSON (:meth:`hpnet.nccl.decision.NodeDecisions.as_json`)
    decisions: Mapping[str, object] = dataclasses.field(default_factory=dict)

    @property
    def exported(self) -> tuple[tuple[str, str], ...]:
        """``(name, value)`` of every variable to set, in name order."""
        return tuple((v.name, v.value) for v in self.variables if v.value is not None)

    @property
    def unset(self) -> tuple[str, ...]:
        """Variables set in the environment that the resolution says to remove
        (``--override-env`` with a layer below saying "leave it unset")."""
        return tuple(
            v.name
            for v in self.variables
            if v.value is None and any(layer.origin is Origin.ENVIRONMENT for layer in v.layers)
        )

    def get(self, name: str) -> ResolvedVar | None:
        return next((v for v in self.variables if v.name == name), None)


def _from_environment(
    environment: Mapping[str, str], named: set[str]
) -> tuple[dict[str, str], list[Finding]]:
    """The NCCL variables (and the profile's ``named`` ones) the environment sets, and
    findings for what looks like one and is not taken: a name no shell can export, or
    another library's variable that shares NCCL's prefix."""
    findings: list[Finding] = []
    taken: dict[str, str] = {}
    for k, v in environment.items():
        if not (k.startswith("NCCL_") or k in named):
            continue
        if not is_variable_name(k):
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="bad-variable-name",
                    title=f"{k!r} in the environment is not a shell variable name: ignored",
                )
            )
        elif (who := foreign(k)) is not None and k not in named:
            findings.append(
                Finding(
                    severity=Severity.INFO,
                    id="not-an-nccl-variable",
                    title=f"{k}={redact(k, v)} is in the environment but is not an NCCL "
                    "setting: "
                    f"{who}; left as it is, not exported",
                )
            )
        else:
            taken[k] = v
    return taken, findings


def resolve_env(
    profile: Profile,
    inventory: NodeInventory,
    *,
    user: Mapping[str, str] | None = None,
    user_source: str = "--set",
    environment: Mapping[str, str] | None = None,
    override_env: bool = False,
    nccl_version: str | None = None,
) -> Resolution:
    """Resolve the NCCL environment for ``inventory`` under ``profile``.

    ``nccl_version`` defaults to the NCCL the node's job would load (torch's, else
    the one the dynamic loader finds), when the inventory knows it.
    """
    user = dict(user or {})
    named = {s.name for s in profile.settings}
    environment, findings = _from_environment(environment or {}, named)
    version = nccl_version or _node_nccl(inventory)
    layers: dict[str, list[Layer]] = {}

    def add(name: str, layer: Layer) -> None:
        layers.setdefault(name, []).append(layer)

    for setting in profile.settings:
        add(
            name=setting.name,
            layer=Layer(
                origin=Origin.PROFILE,
                value=setting.value,
                reason=setting.why,
                source=setting.source.cite(),
            ),
        )
    current: dict[str, tuple[str, str]] = {s.name: (s.value, "profile") for s in profile.settings}
    current.update({k: (v, "user") for k, v in user.items()})
    if not override_env:
        current.update({k: (v, "environment") for k, v in environment.items()})
    decisions = decide(profile, inventory, current, version)
    transport = decisions.transport
    detected, found = detected_values(profile, inventory, decisions=decisions)
    findings += found
    confirmations: dict[str, tuple[str | None, str]] = {}
    for item in detected:
        if item.confirmation:
            confirmations[item.name] = (item.value, item.reason)
        else:
            add(
                item.name,
                Layer(
                    origin=Origin.DETECTED,
                    value=item.value,
                    reason=item.reason,
                    source="hpnet detect",
                ),
            )
    if profile.transport == "auto":
        auto = _auto_settings(transport)
        for name, (value, why) in auto.items():
            if name not in layers:
                add(
                    name,
                    Layer(origin=Origin.DETECTED, value=value, reason=why, source="hpnet detect"),
                )
    for name, value in user.items():
        add(
            name,
            Layer(
                origin=Origin.USER, value=value, reason=f"set by {user_source}", source=user_source
            ),
        )
    for name, value in environment.items():
        add(
            name,
            Layer(origin=Origin.ENVIRONMENT, value=value, reason="already set in the environment"),
        )
    if override_env:
        for name in profile.not_applicable:
            if name in environment and name not in user:
                add(
                    name,
                    Layer(
                        origin=Origin.PROFILE,
                        value=None,
                        reason=f"the {profile.name} guide says it does not apply",
                        source=profile.sources[0].cite(),
                    ),
                )
    variables = tuple(
        _resolve(name, layers[name], confirmations.get(name), override_env, findings)
        for name in sorted(layers)
    )
    findings += _checks(profile, variables, version)
    return Resolution(
        profile=profile.name,
        transport=transport,
        nccl_version=version,
        node=inventory.hostname or inventory.source,
        variables=variables,
        findings=tuple(findings),
        decisions=decisions.as_json(),
    )


def _node_nccl(inventory: NodeInventory) -> str | None:
    versions = inventory.versions
    if versions is None:
        return None
    if versions.torch is not None and versions.torch.nccl:
        return versions.torch.nccl
    return versions.nccl[0].version if versions.nccl else None


def _auto_settings(transport: str) -> dict[str, tuple[str, str]]:
    if transport == "socket":
        return {"NCCL_IB_DISABLE": ("1", "no usable RDMA port here: the Socket transport")}
    word = transport_word(transport)
    return {"NCCL_IB_DISABLE": ("0", f"usable {word} ports here: NCCL's IB transport")}


def _resolve(
    name: str,
    stack: list[Layer],
    confirmation: tuple[str | None, str] | None,
    override_env: bool,
    findings: list[Finding],
) -> ResolvedVar:
    var = lookup(name)
    # the environment's layer last (the "not applicable" unset is added after it)
    stack = sorted(stack, key=lambda layer: layer.origin is Origin.ENVIRONMENT)
    full = list(stack)
    if var is not None:
        full.insert(
            0,
            Layer(
                origin=Origin.NCCL_DEFAULT,
                value=var.default,
                reason="NCCL's default",
                source=var.doc,
            ),
        )
    notes: list[str] = []
    env_layer = next((layer for layer in stack if layer.origin is Origin.ENVIRONMENT), None)
    below = [layer for layer in stack if layer.origin is not Origin.ENVIRONMENT]
    winner = stack[-1]
    if env_layer is not None and below and below[-1].value != env_layer.value:
        wanted = below[-1]
        if override_env:
            winner = wanted
            notes.append(
                f"replaces the environment's {_shown(name, env_layer.value)!r} (--override-env)"
            )
        else:
            notes.append(
                f"kept from the environment; the {wanted.origin.value} layer would set "
                f"{_shown(name, wanted.value)!r}: {wanted.reason}"
            )
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="environment-disagrees",
                    title=f"{name}={_shown(name, env_layer.value)} is set in the "
                    f"environment; the {wanted.origin.value} layer says "
                    f"{_shown(name, wanted.value)!r} ({wanted.reason}); "
                    "use --override-env to replace it",
                )
            )
    if confirmation and confirmation[0] == winner.value:
        notes.insert(0, f"confirmed on this node: {confirmation[1]}")
    invalid = None
    if winner.value is not None:
        judged = validate(name, winner.value)
        if not judged.ok:
            invalid = judged.message
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="invalid-value",
                    title=f"{name}={_shown(name, winner.value)}: {judged.message}",
                )
            )
    if var is None and name.startswith("NCCL_") and foreign(name) is None:
        close = suggest(name)
        findings.append(
            Finding(
                severity=Severity.WARNING,
                id="unknown-variable",
                title=f"{name} is not an NCCL variable, so NCCL ignores it"
                + (f"; did you mean {close}? If so, rename {name} to {close}" if close else ""),
            )
        )
    return ResolvedVar(
        name=name,
        value=winner.value,
        origin=winner.origin,
        reason=winner.reason,
        source=winner.source,
        layers=tuple(full),
        notes=tuple(notes),
        invalid=invalid,
    )


def _checks(
    profile: Profile, variables: tuple[ResolvedVar, ...], version: str | None
) -> list[Finding]:
    from hpnet.nccl.rules import version_tuple  # noqa: PLC0415

    findings = []
    for var in variables:
        if var.name in profile.not_applicable and var.value is not None:
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="not-applicable",
                    title=f"{var.name} is set ({var.origin.value}) but the {profile.name} guide "
                    "says it does not apply there",
                )
            )
    have = version_tuple(version)
    req = profile.requirements
    if have is not None:
        if req.nccl_min and have < (version_tuple(req.nccl_min) or ()):
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="nccl-too-old",
                    title=f"NCCL {version} is older than the {req.nccl_min} "
                    f"{profile.name} requires",
                )
            )
        if req.nccl_max and have[:2] > (version_tuple(req.nccl_max) or ())[:2]:
            findings.append(
                Finding(
                    severity=Severity.WARNING,
                    id="nccl-too-new",
                    title=f"NCCL {version} is newer than the {req.nccl_max}.x "
                    f"{profile.name} supports",
                )
            )
    return findings


def _shown(name: str, value: str | None) -> str | None:
    """A value as a message may quote it (:func:`hpnet.secrets.redact`)."""
    return None if value is None else redact(name, value)


def for_display(resolution: Resolution, *, exported: bool) -> Resolution:
    """The resolution as ``hpnet env`` prints it: no secret's value.

    A variable is secret as ``hpnet launch`` judges it (:func:`hpnet.secrets.is_secret`:
    a TOKEN, SECRET, PASSWORD... name, or a value holding a credential such as
    ``https://user:pass@host``); launch withholds it from every rank unless named with
    ``--env``, and env does not print it either. ``exported``: the output is meant to be
    sourced or passed on (shell, dotenv, mpirun, deepspeed, k8s, slurm): the variable is
    left out, since a ``<redacted>`` there would become its value. Otherwise (JSON,
    ``--explain``) it stays, its value ``<redacted>`` (a URL keeps all but its password).
    Either way a ``secret-withheld`` finding says why and how the job gets it.

    >>> from hpnet.result import Finding
    >>> var = ResolvedVar(name="NCCL_NET_TOKEN", value="abc", origin=Origin.USER,
    ...                   reason="set by --set", source="--set",
    ...                   layers=(Layer(origin=Origin.USER, value="abc", reason="set by --set"),))
    >>> r = Resolution(profile="p", transport="ib", nccl_version=None, node="n",
    ...                variables=(var,), findings=())
    >>> for_display(r, exported=False).variables[0].value, for_display(r, exported=True).exported
    ('<redacted>', ())
    """
    variables: list[ResolvedVar] = []
    findings = [dataclasses.replace(f, title=redact_text(f.title)) for f in resolution.findings]
    for var in resolution.variables:
        secret = var.value is not None and is_secret(var.name, var.value)
        if secret:
            findings.append(_withheld(var, exported=exported))
            if exported:
                continue
        layers = tuple(
            dataclasses.replace(layer, value=_shown(var.name, layer.value)) for layer in var.layers
        )
        variables.append(
            dataclasses.replace(
                var,
                value=_shown(var.name, var.value),
                layers=layers,
                notes=tuple(redact_text(note) for note in var.notes),
                invalid=redact_text(var.invalid) if var.invalid else var.invalid,
            )
        )
    return dataclasses.replace(resolution, variables=tuple(variables), findings=tuple(findings))


def _withheld(var: ResolvedVar, *, exported: bool) -> Finding:
    why = "its name" if looks_secret(var.name) else "its value holds a credential"
    shown = "left out of this output" if exported else f"its value is shown as {REDACTED}"
    if var.origin is Origin.ENVIRONMENT:
        how = f"it stays set in this environment; `hpnet launch --env {var.name}` forwards it"
    else:
        how = f"export it yourself where the job runs (`hpnet launch --env {var.name}` forwards it)"
    return Finding(
        severity=Severity.INFO,
        id="secret-withheld",
        title=f"{var.name} looks like a secret ({why}): {shown}, as hpnet launch withholds "
        f"it; {how}",
    )
