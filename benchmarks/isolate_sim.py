"""`hpnet isolate`'s decision logic on simulated clusters with planted faults.

    python benchmarks/isolate_sim.py [--sizes 64 128 256 512 1024 4096] [--seeds 20]

For each cluster size and scenario (hpnet.isolate.simulate.SCENARIOS): the seeds run;
how many localised every planted fault exactly; ``node-only``, the rail faults named
only as their node (the right node, not its NIC: a flapping link that did not flap
during its rail test); the false positives (outliers no planted fault explains, summed
over seeds); the most rounds any seed took (round 0, drift, included); the mean number
of collectives (tests); and the engine + simulator CPU time per run. ``bisect`` is what
sequential bisection would need instead: ceil(log2 N) jobs one after the other, each
for a single fault, where isolate runs at most 4 rounds for all of them. Racks are 32
nodes, or N/8 on clusters under 256 nodes so that a rack stays a small part of the
cluster (with 2 racks a slow uplink between them is symmetric: neither side can be
named).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from hpnet.isolate.simulate import SCENARIOS, Cluster, plant, trial


def row(n: int, scenario: str, seeds: int) -> str:
    cluster = Cluster(num_nodes=n, rails=8, group_size=min(32, n // 8))
    localised = node_only = false_positives = max_rounds = 0
    collectives: list[int] = []
    start = time.process_time()
    for seed in range(seeds):
        got = trial(cluster, plant(scenario, cluster, seed), seed)
        localised += got.localised
        node_only += got.node_only
        false_positives += got.false_positives
        max_rounds = max(max_rounds, got.rounds)
        collectives.append(got.collectives)
    ms = 1000 * (time.process_time() - start) / seeds
    return (
        f"{n:>5} {scenario:<13} {seeds:>5} {localised:>9} {node_only:>9} {false_positives:>6} "
        f"{max_rounds:>6} {statistics.mean(collectives):>11.1f} {math.ceil(math.log2(n)):>6} "
        f"{ms:>10.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256, 512, 1024, 4096])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--seeds-4096", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'N':>5} {'scenario':<13} {'seeds':>5} {'localised':>9} {'node-only':>9} {'false+':>6} "
        f"{'rounds':>6} {'collectives':>11} {'bisect':>6} {'cpu ms/run':>10}"
    )
    for n in args.sizes:
        seeds = args.seeds_4096 if n >= 4096 else args.seeds
        for scenario in SCENARIOS:
            print(row(n, scenario, seeds), flush=True)


if __name__ == "__main__":
    main()
