"""Round 0, "drift": facts that differ between nodes, pure.

Every node reports a flat mapping of facts (``"versions.nccl": "2.21.5"``). For each
key, a node whose value differs from the strict majority of the nodes reporting the key
is named; a key with no strict majority is a split and nobody is blamed. Keys that
differ by nature (hostnames, addresses, GUIDs) are ignored by glob pattern.

A fact a node does not report is unknown there and not compared, but for the NCCL
environment (``env.*``): every node reports every NCCL variable its ranks received,
so a variable missing on a node is unset there (:data:`UNSET`), which is a value NCCL
acts on (its default): a variable set on one node only is drift.
"""

from __future__ import annotations

import dataclasses
import enum
import fnmatch
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping


class DriftKind(str, enum.Enum):
    DIFFERS = "differs"  # one node differs from the strict majority
    SPLIT = "split"  # no value has a strict majority: nobody is blamed


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Drift:
    """A fact on which nodes disagree.

    ``DIFFERS``: ``node`` has ``value`` where ``majority_count`` of ``num_nodes`` nodes
    reporting ``key`` have ``majority_value``. ``SPLIT``: no strict majority; ``counts``
    holds every value with its number of nodes and no node is named.
    """

    kind: DriftKind
    key: str
    node: str | None
    value: str | None
    majority_value: str | None
    majority_count: int
    num_nodes: int
    counts: tuple[tuple[str, int], ...] = ()


__all__ = ["PER_NODE_KEYS", "UNSET", "drift"]

#: the value of an ``env.*`` fact on a node whose ranks did not get the variable
UNSET = "<unset>"
#: facts every node reports in full: a key missing on a node is :data:`UNSET` there
_COMPLETE_PREFIXES = ("env.",)

#: facts that are per node by nature, as glob patterns over keys
PER_NODE_KEYS: tuple[str, ...] = (
    "hostname",
    "host.*",
    "*.hostname",
    "*.addr",
    "*.addrs",
    "*.address",
    "*.addresses",
    "*.ip",
    "*.ipv4",
    "*.ipv6",
    "*.mac",
    "*.guid",
    "*guid",
    "*.gid",
    "*.gids",
    "*.gid.*",
    "*.serial",
    "*.uuid",
    "*.lid",
    "rank",
    "*.rank",
)


def drift(
    facts: Mapping[str, Mapping[str, str]], *, per_node_keys: Iterable[str] = PER_NODE_KEYS
) -> tuple[Drift, ...]:
    """Facts on which nodes disagree, by key then node.

    >>> facts = {n: {"versions.nccl": "2.21.5", "hostname": n} for n in ("a", "b", "c")}
    >>> facts["c"] = {"versions.nccl": "2.18.1", "hostname": "c"}
    >>> [(d.node, d.value, d.majority_value, d.majority_count) for d in drift(facts)]
    [('c', '2.18.1', '2.21.5', 2)]
    >>> facts["a"] = {**facts["a"], "env.NCCL_BUFFSIZE": "65536"}
    >>> [(d.node, d.key, d.value, d.majority_value) for d in drift(facts)][0]
    ('a', 'env.NCCL_BUFFSIZE', '65536', '<unset>')
    """
    patterns = tuple(per_node_keys)
    by_key: dict[str, dict[str, str]] = defaultdict(dict)
    for node, values in facts.items():
        for key, value in values.items():
            by_key[key][node] = value
    for key in [k for k in by_key if any(fnmatch.fnmatchcase(k, p) for p in patterns)]:
        del by_key[key]
    for key, values in by_key.items():
        if key.startswith(_COMPLETE_PREFIXES):
            for node in facts:
                values.setdefault(node, UNSET)
    out: list[Drift] = []
    for key in sorted(by_key):
        out.extend(_key_drift(key, by_key[key]))
    return tuple(out)


def _key_drift(key: str, values: Mapping[str, str]) -> list[Drift]:
    counts = Counter(values.values())
    if len(counts) < 2:
        return []
    n = len(values)
    (top, top_count), *_ = counts.most_common(1)
    if 2 * top_count <= n:
        ordered = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        return [
            Drift(
                kind=DriftKind.SPLIT,
                key=key,
                node=None,
                value=None,
                majority_value=None,
                majority_count=top_count,
                num_nodes=n,
                counts=ordered,
            )
        ]
    return [
        Drift(
            kind=DriftKind.DIFFERS,
            key=key,
            node=node,
            value=value,
            majority_value=top,
            majority_count=top_count,
            num_nodes=n,
        )
        for node, value in sorted(values.items())
        if value != top
    ]
