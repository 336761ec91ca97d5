"""The isolation engine: which tests to run next, and what their results prove. Pure.

An executor drives it (the real one runs collectives in torch.distributed subgroups,
:mod:`hpnet.isolate.simulate` stands in for it in tests)::

    iso = Isolation(nodes, rails=8, groups=racks)
    iso.drift(facts)                      # round 0: no collective
    while (rnd := iso.next_round()) is not None:
        iso.record(execute(rnd.tests))    # every test of a round at once
    verdict = iso.verdict()

Rounds: 1 "pairs" (every node in one test), 2 "re-pair" (each node of a slow pair, the
leftover of an odd N, and each node whose round-1 test the harness could not run, with
a node proven good), 3 "rails" (per-rail tests of each bad node with a good partner, and
of each bad link; and a whole-node test of each node whose round-2 test was its only
one, with another good partner), 4 "control" (two good nodes, when a node would be named
and no two were free to measure with it: :mod:`hpnet.isolate.control`). At most 4
rounds with drift on a cluster with good nodes to spare.

A node is named only when it was slow in two tests with different partners: a side of a
slow round-1 pair that is slow again with a good node, or a node tested first in round
2 (the odd one out, a node whose round-1 test could not run) that is slow again in
round 3. One slow test is one noisy moment as often as a bad node. And the test that
names it must be slow against two good nodes measured with it (or right after), not only
against round 1: the hosts' or the fabric's load changes between rounds.

Only a measured slowdown or an error on the link (:mod:`hpnet.isolate.harness`) may
name a node. A test the harness could not run proves nothing: its nodes are neither
good nor suspect, they are tested again in round 2, and a node still untested at the
end is *inconclusive* in the verdict, with the cause, never an outlier.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from hpnet.cluster.drift import PER_NODE_KEYS
from hpnet.cluster.drift import drift as drift_of
from hpnet.errors import InputError
from hpnet.isolate import control, findings
from hpnet.isolate.model import (
    Baseline,
    ConfigIssue,
    Drift,
    ErrorSource,
    Inconclusive,
    IsolateVerdict,
    Measurement,
    Round,
    RoundSummary,
    Test,
)
from hpnet.isolate.pairing import cross_pairs, partners
from hpnet.isolate.scoring import (
    PairState,
    Reference,
    Score,
    Thresholds,
    baseline_reference,
    judge,
    judge_rails,
)
from hpnet.isolate.scoring import noise as noise_of
from hpnet.isolate.scoring import reference as reference_of

__all__ = ["Isolation"]

_PURPOSE = {
    1: "every node in one whole-node test with another, all pairs at once",
    2: "each node of a slow pair (and the odd one out) with a node proven good in round 1",
    3: "each bad node rail by rail with a good partner, and each bad link rail by rail",
    4: "two nodes proven good, measured right after the tests that would name a node",
}
_NAME = {1: "pairs", 2: "re-pair", 3: "rails", 4: "control"}


class Isolation:
    """Finds the bad node, rail, link or group of a cluster, round by round.

    >>> iso = Isolation(["n0", "n1", "n2", "n3"], rails=8)
    >>> [(t.a, t.b) for t in iso.next_round().tests]
    [('n2', 'n1'), ('n0', 'n3')]
    """

    def __init__(
        self,
        nodes: Sequence[str],
        rails: int,
        *,
        groups: Mapping[str, str] | None = None,
        baseline: Baseline | None = None,
        seed: int = 0,
        thresholds: Thresholds | None = None,
    ) -> None:
        if len(set(nodes)) != len(nodes) or len(nodes) < 2:
            raise InputError(
                f"isolate needs at least 2 distinct nodes, got {len(nodes)}",
                code="isolate-nodes",
                fix="run one rank per GPU on at least two nodes",
            )
        if rails < 1:
            raise InputError(f"rails is {rails}", code="isolate-rails", fix="pass rails >= 1")
        self.nodes = tuple(nodes)
        self.rails = rails
        self.groups = dict(groups or {})
        self.baseline = baseline
        self.seed = seed
        self.t = thresholds or Thresholds()
        self._facts: Mapping[str, Mapping[str, str]] = {}
        self._drift: tuple[Drift, ...] | None = None
        self._pending: Round | None = None
        self._next = 1
        self._done = False
        self._results: list[Measurement] = []
        self._summaries: list[RoundSummary] = []
        self.ref: Reference | None = None
        self._refs: tuple[Reference, ...] = ()
        self.cluster_slow = False
        self._suspect_pairs: list[tuple[str, str]] = []
        self._leftover: str | None = None
        self.good: list[str] = []
        self.issues: dict[str, list[ConfigIssue]] = defaultdict(list)
        self.notes: dict[str, list[str]] = defaultdict(list)
        self.bad: list[str] = []
        #: slow in their only test so far (round 2): named only if slow again
        self.unconfirmed: dict[str, str] = {}  # node -> its round-2 partner
        self._confirm: dict[str, str] = {}  # node -> its round-3 partner
        self.links: list[tuple[str, str]] = []
        self._link_control: tuple[str, str] | None = None
        self.unresolved: list[tuple[str, str]] = []
        #: nodes whose tests the harness could not run, with the first cause
        self.untested: dict[str, Inconclusive] = {}
        #: the nodes whose round-2 test is their first (no round-1 result)
        self._first_in_round_2: set[str] = set()
        self.rail_scores: dict[tuple[str, str | None], dict[int, Score]] = {}
        #: the whole-node control test of a round, and the test that would name a node
        #: whose round had none (judged against round 4's)
        self._controls: dict[int, Test] = {}
        self._named_by: dict[str, Measurement] = {}

    # -- round 0 -------------------------------------------------------------------------
    def drift(
        self,
        facts: Mapping[str, Mapping[str, str]],
        *,
        per_node_keys: Iterable[str] = PER_NODE_KEYS,
    ) -> tuple[Drift, ...]:
        """Round 0: facts that differ between nodes (see :func:`hpnet.cluster.drift.drift`)."""
        self._facts = facts
        self._drift = drift_of(facts, per_node_keys=per_node_keys)
        for d in self._drift:
            if d.node is not None:
                self.notes[d.node].append(
                    f"drift: {d.key}={d.value} where {d.majority_count} of {d.num_nodes} "
                    f"nodes have {d.majority_value}"
                )
        return self._drift

    def drifts_of(self, node: str) -> tuple[Drift, ...]:
        """Round 0's drift that names ``node``."""
        return tuple(d for d in self._drift or () if d.node == node)

    def nic(self, node: str, rail: int | None) -> str | None:
        """The NIC of ``node``'s rail as its facts name it (``rail.3.nic``)."""
        return None if rail is None else self._facts.get(node, {}).get(f"rail.{rail}.nic")

    # -- rounds --------------------------------------------------------------------------
    def next_round(self) -> Round | None:
        """The next round to run, the same one until it is recorded; None when done."""
        while self._pending is None and not self._done:
            if self._next > 4:
                self._done = True
                break
            tests = self._plan(self._next)
            if tests:
                n = self._next
                self._pending = Round(number=n, name=_NAME[n], purpose=_PURPOSE[n], tests=tests)
            else:
                if self._next == 2:
                    self._unresolve_suspects()
                self._next += 1
        return self._pending

    def record(self, measurements: Sequence[Measurement]) -> None:
        """The results of the pending round's tests; a test without one counts as failed."""
        rnd = self._pending
        if rnd is None:
            raise InputError("no round is pending", code="isolate-no-round", fix="next_round()")
        by_test = {m.test: m for m in measurements}
        planned = set(rnd.tests)
        unknown = [m.test for m in measurements if m.test not in planned]
        if unknown:
            raise InputError(
                f"a measurement of a test round {rnd.number} did not plan: {unknown[0]}",
                code="isolate-unknown-test",
                fix="record the measurements of next_round()'s tests",
            )
        ms = [
            by_test.get(t)
            or Measurement(
                test=t, samples_gbps=(), error="no result", error_source=ErrorSource.HARNESS
            )
            for t in rnd.tests
        ]
        self._results.extend(ms)
        for m in ms:
            for issue in m.issues:
                if issue not in self.issues[issue.node]:
                    self.issues[issue.node].append(issue)
        record = {
            1: self._record_pairs,
            2: self._record_repair,
            3: self._record_rails,
            4: self._record_control,
        }[rnd.number]
        found = record(ms)
        self._summaries.append(
            RoundSummary(
                number=rnd.number,
                name=rnd.name,
                purpose=rnd.purpose,
                num_tests=len(ms),
                num_errors=sum(m.error is not None for m in ms),
                findings=tuple(found),
            )
        )
        self._pending = None
        self._next = rnd.number + 1

    def _unresolve_suspects(self) -> None:
        """No suspect could be re-paired (no node was proven good: every test of round 1
        failed or was slow): each suspect pair stays an outlier, unresolved, never a
        silent pass."""
        for a, b in self._suspect_pairs:
            if a not in self.issues and b not in self.issues and (a, b) not in self.unresolved:
                self.unresolved.append((a, b))

    def _plan(self, number: int) -> tuple[Test, ...]:
        if number == 1:
            pairs, self._leftover = cross_pairs(self.nodes, self.groups, self.seed)
            return tuple(Test(round=1, a=a, b=b) for a, b in pairs)
        if number == 2:
            return self._plan_repair()
        if number == 3:
            return self._plan_rails()
        return self._plan_control()

    def _plan_repair(self) -> tuple[Test, ...]:
        # both sides of every slow pair before the nodes not yet tested: a failure seen
        # is explained first; one side of every pair before the other sides: when good
        # nodes are short, a side found slow again still explains its pair
        sides = [a for a, _ in self._suspect_pairs] + [b for _, b in self._suspect_pairs]
        untested = [n for n in self.nodes if n in self.untested]
        leftover = [] if self._leftover is None else [self._leftover]
        wanting = [n for n in [*sides, *untested, *leftover] if n not in self.issues]
        self._first_in_round_2 = {*leftover, *untested}
        chosen = partners(wanting, self.good, self.groups, self.seed + 2)
        for node in wanting:
            if node not in chosen:
                self.notes[node].append("round 2: no good node was left to re-pair it with")
                if node in self._first_in_round_2:  # never tested: not judged
                    self.untested.setdefault(
                        node,
                        Inconclusive(
                            node=node, round=2, cause="no good node was left to test it with"
                        ),
                    )
        tests = [Test(round=2, a=n, b=chosen[n]) for n in wanting if n in chosen]
        if any(t.a not in self._first_in_round_2 for t in tests):  # a side may be named
            self._add_control(2, tests)
        return tuple(tests)

    def _add_control(self, number: int, tests: list[Test]) -> None:
        """Two good nodes free in round ``number``, measured with its ``tests``; on one
        rail, round 3's link control pair is already such a test."""
        if number == 3 and self.rails == 1 and self._link_control is not None:
            self._controls[3] = Test(
                round=3, a=self._link_control[0], b=self._link_control[1], rail=0
            )
            return
        pair = control.pick(self.good, {n for t in tests for n in (t.a, t.b)})
        if pair is not None:
            self._controls[number] = Test(round=number, a=pair[0], b=pair[1])
            tests.append(self._controls[number])

    def _plan_control(self) -> tuple[Test, ...]:
        """Round 4: a control for the nodes that would be named and had none."""
        if not self._named_by:
            return ()
        pair = control.pick(self.good, set())
        if pair is None:
            self._settle(dict(self._named_by), None, when="")
            return ()
        self._controls[4] = Test(round=4, a=pair[0], b=pair[1])
        return (self._controls[4],)

    def _settle(
        self, named: dict[str, Measurement], ctl: Measurement | None, when: str
    ) -> list[str]:
        """Judge ``named`` against the control ``ctl``: a node it clears is inconclusive."""
        spread = noise_of([*named.values(), *([ctl] if ctl else [])])
        cleared, head, said = control.reckon(named, ctl, self.t, spread=spread, when=when)
        for node, m in named.items():
            self._named_by.pop(node, None)
            self.notes[node] += [*head, *([said[node]] if node in said else [])]
            if node in cleared:
                self.bad.remove(node)
                self.untested[node] = Inconclusive(
                    node=node, round=m.test.round, cause=cleared[node]
                )
        return head + [f"{n}: {said[n]}" for n in named if n in said]

    def _record_control(self, ms: Sequence[Measurement]) -> list[str]:
        return self._settle(dict(self._named_by), ms[0], when="right after, in round 4")

    def _plan_rails(self) -> tuple[Test, ...]:
        tests: list[Test] = []
        chosen: dict[str, str] = {}
        if self.rails > 1:  # one rail is the whole node: nothing to split
            chosen = partners(self.bad, self.good, self.groups, self.seed + 3)
            tests += [Test(round=3, a=n, b=p, rail=r) for n, p in chosen.items() for r in self._r()]
        if self.links:
            # a link is re-tested, and two good nodes give the healthy figure per rail
            # that tells a slow link from a dip of round 1 that does not come back
            spare = [n for n in self.good if n not in set(chosen.values())]
            self._link_control = (spare[0], spare[1]) if len(spare) >= 2 else None
            pairs = [*self.links, *([self._link_control] if self._link_control else [])]
            tests += [Test(round=3, a=a, b=b, rail=r) for a, b in pairs for r in self._r()]
        taken = {n for t in tests for n in (t.a, t.b)}
        for node, before in self.unconfirmed.items():
            # another good node than round 2's where one is free: a second partner
            free = [g for g in self.good if g not in taken]
            pool = [g for g in free if g != before] or free
            pick = partners([node], pool, self.groups, self.seed + 4).get(node)
            if pick is None:  # slow once is no verdict
                why = "slow once in round 2, and no good node was left to confirm it with"
                self.notes[node].append(f"round 3: {why}")
                self.untested[node] = Inconclusive(node=node, round=2, cause=why)
                continue
            self._confirm[node] = pick
            taken |= {node, pick}
            tests.append(Test(round=3, a=node, b=pick))
        if self._confirm:
            self._add_control(3, tests)
        return tuple(tests)

    def _r(self) -> range:
        return range(self.rails)

    # -- what each round proves ----------------------------------------------------------
    def _record_pairs(self, ms: Sequence[Measurement]) -> list[str]:
        medians = [m.median_gbps for m in ms if m.error is None and m.median_gbps is not None]
        self.ref = reference_of(
            medians, floor=self.t.scale_floor, label="cluster", noise=noise_of(ms)
        )
        found = findings.cluster_line(self.ref, len(ms))
        if self.ref is not None and self.baseline is not None:
            before = self.baseline.cluster_median_gbps
            self.cluster_slow = self.ref.median_gbps < (1 - self.t.baseline_margin) * before
            base = baseline_reference(self.baseline, self.t)
            self._refs = (self.ref,) if self.cluster_slow else (self.ref, base)
        elif self.ref is not None:
            self._refs = (self.ref,)
        for m in ms:
            score = self._judge(m)
            if score.ok:
                self.good += [m.test.a, m.test.b]
                continue
            if score.status is PairState.INCONCLUSIVE:
                found.append(self._untest(m, (m.test.a, m.test.b), score))
                continue
            self._suspect_pairs.append((m.test.a, m.test.b))
            line = f"round 1: {m.test.a} + {m.test.b}: {score.reason}"
            for node in (m.test.a, m.test.b):
                self.notes[node].append(line)
            found.append(line)
        self.good = [n for n in self.good if n not in self.issues]
        return found

    def _untest(self, m: Measurement, nodes: Sequence[str], score: Score) -> str:
        """``nodes`` of a test the harness could not run stay untested (the first
        cause kept); the round's line for it."""
        line = f"round {m.test.round}: {m.test.a} + {m.test.b}: {score.reason}: inconclusive"
        for node in nodes:
            self.untested.setdefault(
                node, Inconclusive(node=node, round=m.test.round, cause=m.error or "no result")
            )
            self.notes[node].append(line)
        return line

    def _judge(self, m: Measurement) -> Score:
        base = None if self.cluster_slow else self.baseline
        return judge(m, self._refs, self.t, baseline=base)

    def _record_repair(self, ms: Sequence[Measurement]) -> list[str]:
        ms, ctl = control.split(ms, self._controls.get(2))
        found: list[str] = []
        slow: dict[str, bool] = {}
        for m in ms:
            score = self._judge(m)
            node, partner = m.test.a, m.test.b
            if score.status is PairState.INCONCLUSIVE:  # the partner stays proven good
                found.append(self._untest(m, (node,), score))
                continue
            self.untested.pop(node, None)
            word = "fine" if score.ok else "failed again" if m.error else "slow again"
            line = f"round 2: {node} + {partner} (good in round 1): {score.reason}: {word}"
            self.notes[node].append(line)
            slow[node] = not score.ok
            if not score.ok:
                found.append(line)
        once = {n for n, s in slow.items() if s and n in self._first_in_round_2}
        self.unconfirmed = {m.test.a: m.test.b for m in ms if m.test.a in once}
        self.bad = [n for n, s in slow.items() if s and n not in self.issues and n not in once]
        for a, b in self._suspect_pairs:
            if a in self.issues or b in self.issues:
                continue
            if a not in slow or b not in slow:
                if not (slow.get(a) or slow.get(b)):
                    self.unresolved.append((a, b))
            elif not slow[a] and not slow[b]:
                self.links.append((a, b))
                found.append(f"{a} and {b} are fine with others: the path between them")
        self._named_by = {m.test.a: m for m in ms if m.test.a in self.bad}
        if 2 in self._controls:
            found += self._settle(dict(self._named_by), ctl, when="in the same round")
        found += [f"bad: {n}" for n in self.bad]
        found += [f"slow once, to be confirmed: {n}" for n in self.unconfirmed]
        return found

    def _record_confirm(self, m: Measurement) -> str:
        """A node slow in its only round-2 test, tested again with another partner."""
        node, partner = m.test.a, m.test.b
        score = self._judge(m)
        if score.status is PairState.INCONCLUSIVE:
            line = self._untest(m, (node,), score)
            return line + " (slow once in round 2, not confirmed)"
        word = "fine: round 2's slowness did not come back" if score.ok else "slow again"
        line = f"round 3: {node} + {partner} (good in round 1): {score.reason}: {word}"
        self.notes[node].append(line)
        if not score.ok and node not in self.issues:
            self.bad.append(node)
            self._named_by[node] = m
        return line

    def _record_rails(self, ms: Sequence[Measurement]) -> list[str]:
        ms, ctl = control.split(ms, self._controls.get(3))
        by_pair: dict[tuple[str, str | None], list[Measurement]] = defaultdict(list)
        between = {
            frozenset(p)
            for p in [*self.links, *([self._link_control] if self._link_control else [])]
        }
        confirms = [
            m for m in ms if self._confirm.get(m.test.a) == m.test.b and m.test.rail is None
        ]
        ms = [m for m in ms if m not in confirms]
        for m in ms:
            pair = frozenset((m.test.a, m.test.b)) in between
            by_pair[(m.test.a, m.test.b if pair else None)].append(m)
        found: list[str] = []
        for key, group in by_pair.items():
            scores = judge_rails(group, self.t)
            self.rail_scores[key] = scores
            found += [f"{key[0]} rail {r}: {s.reason}" for r, s in scores.items() if not s.ok]
        found += [self._record_confirm(m) for m in confirms]
        if 3 in self._controls:
            named = {m.test.a: m for m in confirms if m.test.a in self._named_by}
            found += self._settle(named, ctl, when="in the same round")
        return found + self._confirm_links()

    def _confirm_links(self) -> list[str]:
        """Links whose rails stand out, or are all slow against the control pair's."""
        pair = self.rail_scores.get(self._link_control or ("", ""), {})
        self.links, found, notes = control.links_again(self.links, self.rail_scores, pair, self.t)
        for node, line in notes:
            self.notes[node].append(line)
        return found

    # -- the verdict ---------------------------------------------------------------------
    def verdict(self) -> IsolateVerdict:
        """What the rounds recorded so far prove."""
        return findings.verdict(self, self._summaries, self._results, self._drift)

    @property
    def suspect_pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._suspect_pairs)
