"""Who tests with whom, pure and deterministic given a seed.

Round 1 pairs every node with one other, crossing groups (racks, leaf switches) where
it can: nodes are shuffled within their group, laid out group after group, and node
``i`` is paired with node ``i + N/2``. While no group holds more than half the nodes,
every pair crosses two groups, so a slow uplink shows in every test of its rack.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["cross_pairs", "partners"]


def cross_pairs(
    nodes: Sequence[str], groups: Mapping[str, str], seed: int
) -> tuple[list[tuple[str, str]], str | None]:
    """Disjoint pairs covering ``nodes`` and the one left over when N is odd.

    >>> cross_pairs(["a1", "a2", "b1", "b2"], {"a1": "A", "a2": "A", "b1": "B", "b2": "B"}, 0)
    ([('a1', 'b2'), ('a2', 'b1')], None)
    """
    rng = random.Random(seed)  # noqa: S311 - a reproducible shuffle, not a secret
    by_group: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        by_group[groups.get(node, "")].append(node)
    names = sorted(by_group)
    rng.shuffle(names)
    order: list[str] = []
    for name in names:
        members = sorted(by_group[name])
        rng.shuffle(members)
        order.extend(members)
    leftover = None
    if len(order) % 2:
        # the leftover comes from the largest group, which is the hardest to cross
        largest = max(names, key=lambda g: (len(by_group[g]), g))
        leftover = next(n for n in order if groups.get(n, "") == largest)
        order.remove(leftover)
    half = len(order) // 2
    pairs = [(order[i], order[i + half]) for i in range(half)]
    return pairs, leftover


def partners(
    wanting: Sequence[str],
    pool: Sequence[str],
    groups: Mapping[str, str],
    seed: int,
) -> dict[str, str]:
    """A distinct partner from ``pool`` for each node of ``wanting``, from another group
    where one is left; nodes beyond the pool's size get none.

    >>> partners(["x"], ["g1", "g2"], {"x": "A", "g1": "A", "g2": "B"}, 0)
    {'x': 'g2'}
    """
    rng = random.Random(seed)  # noqa: S311 - a reproducible shuffle, not a secret
    free = sorted(pool)
    rng.shuffle(free)
    by_group: dict[str, list[str]] = defaultdict(list)
    for node in free:
        by_group[groups.get(node, "")].append(node)
    taken: set[str] = set()
    out: dict[str, str] = {}
    for node in wanting:
        mine = groups.get(node, "")
        pick = _first_free((g for g in sorted(by_group) if g != mine), by_group, taken)
        pick = pick or _first_free(iter([mine]), by_group, taken)
        if pick is None:
            continue
        taken.add(pick)
        out[node] = pick
    return out


def _first_free(
    names: Iterable[str], by_group: Mapping[str, list[str]], taken: set[str]
) -> str | None:
    for name in names:
        members = by_group.get(name, [])
        while members and members[-1] in taken:
            members.pop()
        if members:
            return members[-1]
    return None
