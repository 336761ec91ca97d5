"""The parity table of hpnet bench against nccl-tests, from device_bench_parity.sh's
outputs (a directory of nccl-tests text and hpnet bench JSON).

    python3 benchmarks/parity_table.py DIR

Like with like: nccl-tests' out-of-place column against hpnet's out-of-place (the
direct NCCL backend has both placements); torch.distributed, whose all_reduce is
in-place only, against nccl-tests' in-place column. Several repetitions of a run are
averaged per tool. Targets (issue 6): busbw at >= 64 MiB within 3% for all_reduce,
all_gather, reduce_scatter and alltoall; 8-byte all_reduce time <= 1.3x nccl-tests
without graphs and <= 1.15x with graphs (-G).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

from hpnet.bench.load import load_result
from hpnet.bench.model import BenchReport, Measurement

OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")


def cells(report: BenchReport, op: str, placement: str) -> dict[int, Measurement]:
    found: dict[int, Measurement] = {}
    for run in report.runs:
        if run.op != op:
            continue
        for row in run.rows:
            m = row.out_of_place if placement == "out" else row.in_place
            if m is not None:
                found[row.size_bytes] = m
    return found


def mean_over(reports: list[BenchReport], op: str, placement: str, key: str) -> dict[int, float]:
    values: dict[int, list[float]] = {}
    for report in reports:
        for size, m in cells(report, op, placement).items():
            values.setdefault(size, []).append(getattr(m, key))
    return {size: statistics.mean(v) for size, v in values.items()}


def load_all(directory: Path, pattern: str) -> list[BenchReport]:
    return [load_result(str(p)) for p in sorted(directory.glob(pattern)) if p.stat().st_size]


def bandwidth(directory: Path) -> list[str]:
    out = ["bus bandwidth (GB/s) at >= 64 MiB, mean of the repetitions; ratio = hpnet / nccl-tests"]
    out.append(
        f"{'op':<15}{'size':>12}  {'nccl-tests':>10}  {'hpnet nccl':>10}  {'ratio':>6}"
        f"  {'nt in-pl':>8}  {'hp torch':>8}  {'ratio':>6}"
    )
    hp = load_all(directory, "hp-bw-nccl-*.json")
    torch = load_all(directory, "hp-bw-torch.json")
    worst = 0.0
    for op in OPS:
        nt = load_all(directory, f"nt-bw-{op}-*.txt")
        if not nt or not hp:
            continue
        nt_out = mean_over(nt, op, "out", "busbw_gbps")
        nt_in = mean_over(nt, op, "in", "busbw_gbps")
        hp_out = mean_over(hp, op, "out", "busbw_gbps")
        torch_place = "in" if op == "all_reduce" else "out"
        torch_bw = mean_over(torch, op, torch_place, "busbw_gbps") if torch else {}
        nt_torch = nt_in if torch_place == "in" else nt_out
        for size in sorted(nt_out):
            if size < 64 << 20 or size not in hp_out:
                continue
            ratio = hp_out[size] / nt_out[size]
            worst = max(worst, abs(ratio - 1))
            t_ratio = torch_bw[size] / nt_torch[size] if size in torch_bw else math.nan
            out.append(
                f"{op:<15}{size:>12}  {nt_out[size]:>10.2f}  {hp_out[size]:>10.2f}  {ratio:>6.3f}"
                f"  {nt_torch[size]:>8.2f}  {torch_bw.get(size, math.nan):>8.2f}  {t_ratio:>6.3f}"
            )
    out.append(f"largest |hpnet / nccl-tests - 1|: {worst:.1%} (target <= 3%)")
    return out


def latency(directory: Path) -> list[str]:
    out = []
    for label, nt_glob, hp_glob, torch_glob, target in (
        ("eager", "nt-lat-*.txt", "hp-lat-nccl-*.json", "hp-lat-torch.json", 1.3),
        ("graph -G 20", "nt-latG-*.txt", "hp-latG-nccl-*.json", "hp-latG-torch.json", 1.15),
    ):
        nt, hp = load_all(directory, nt_glob), load_all(directory, hp_glob)
        torch = load_all(directory, torch_glob)
        if not nt or not hp:
            continue
        nt_times = [cells(r, "all_reduce", "out")[8].time_us for r in nt]
        hp_times = [cells(r, "all_reduce", "out")[8].time_us for r in hp]
        hp_median = [cells(r, "all_reduce", "out")[8].median_us for r in hp]
        line = (
            f"8 B all_reduce, {label}: nccl-tests {statistics.median(nt_times):.2f} us "
            f"(runs {', '.join(f'{t:.2f}' for t in nt_times)}); hpnet nccl "
            f"{statistics.median(hp_times):.2f} us (runs {', '.join(f'{t:.2f}' for t in hp_times)};"
            f" per-iteration median {statistics.median(m or 0 for m in hp_median):.2f})"
        )
        ratio = statistics.median(hp_times) / statistics.median(nt_times)
        line += f"; ratio {ratio:.3f} (target <= {target})"
        if torch:
            t = cells(torch[0], "all_reduce", "in")[8].time_us
            line += f"; torch-nccl in-place {t:.2f} us"
        out.append(line)
    return out


def checks(directory: Path) -> list[str]:
    out = []
    for path in sorted(directory.glob("check-*.json")):
        data = json.loads(path.read_text())
        wrong = sum(
            (m or {}).get("wrong") or 0
            for run in data["runs"]
            for row in run["rows"]
            for m in (row["out_of_place"], row["in_place"])
        )
        checked = sum(
            1
            for run in data["runs"]
            for row in run["rows"]
            for m in (row["out_of_place"], row["in_place"])
            if m and m.get("wrong") is not None
        )
        meta = data["metadata"]
        out.append(
            f"{path.stem}: {data['status']}, {checked} placements checked, {wrong} wrong elements, "
            f"{len(data['runs'])} ops, backend {meta.get('backend')} NCCL {meta.get('nccl')}"
        )
    return out


def others(directory: Path) -> list[str]:
    out = []
    train = directory / "train-json.txt"
    if train.exists() and train.stat().st_size:
        data = json.loads(train.read_text())
        stats = {s["percentile"]: s for s in data["stats"]}
        out.append(
            f"train: {data['nranks']} ranks, {data['parameters'] / 1e6:.1f} M params, p50 "
            f"{stats[50]['step_seconds']:.4f} s {stats[50]['samples_per_second']:.1f} samples/s, "
            f"p95 {stats[95]['samples_per_second']:.1f}/s, comm share {data['comm_share']:.1%}, "
            f"replicas in sync {data['replicas_in_sync']}"
        )
    fake = directory / "fake-hosts.json"
    if fake.exists() and fake.stat().st_size:
        report = load_result(str(fake))
        best = max(
            (m.busbw_gbps, r.size_bytes)
            for r in report.runs[0].rows
            for m in (r.out_of_place, r.in_place)
            if m is not None
        )
        out.append(
            f"fake hosts 2x2 (NET/Socket between them): best busbw {best[0]:.2f} GB/s "
            f"at {best[1]} B"
        )
    return out


def main(argv: list[str]) -> int:
    directory = Path(argv[1])
    lines = [*checks(directory), "", *bandwidth(directory), "", *latency(directory)]
    lines += ["", *others(directory)]
    summary = directory / "summary.txt"
    if summary.exists():
        lines += ["", summary.read_text().strip()]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
