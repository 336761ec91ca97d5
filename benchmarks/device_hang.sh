#!/usr/bin/env bash
# hpnet hang on NCCL jobs that hang, on the lent GPU machine (issue 27).
#   device:  bash benchmarks/device_hang.sh a     (results under $OUT)
#
# a: one NCCL job whose rank 1 skips a collective (2 fake hosts), NCCL's RAS service
#    asked live while it hangs (text and JSON, hpnet.hang.raslive), hpnet hang on what
#    it left; then every plant of tests/hang_plant.py once with NCCL on the GPUs
#    (benchmarks/hang_plants.py --backend nccl), then the stalled network path (net).
# b: a stalled network path (net) with RAS asked live, then every plant N times with
#    random world sizes and culprits (bash benchmarks/device_hang.sh b N).
# eight: eight NCCL ranks (issue 29) on the GPUs there are (rank r on GPU r mod count, a
#    fake host each): a skip with RAS asked live, then the never-entered, mismatched-op
#    and dead-rank plants and a clean job N times each (bash benchmarks/device_hang.sh
#    eight N).
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as the lent machines require.
set -u
export PYTHONPATH=$PWD/src:$PWD NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
K=/tmp/hang-runs
rm -rf "$K" && mkdir -p "$K"
PART=${1:-a}
S=$OUT/summary-$PART.txt
{ nvidia-smi -L
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
  nproc
} > "$OUT/machine.txt" 2>&1

live() {  # PORT NAME [text]: the job's RAS status now
  python3 - "$@" <<'PY'
import sys, time
from hpnet.hang.raslive import query
port, name = sys.argv[1], sys.argv[2]
try:
    r = query(f"127.0.0.1:{port}", text=len(sys.argv) > 3)
except Exception as exc:  # what failed is the finding
    print(f"{name}: {type(exc).__name__}: {exc}")
    sys.exit(0)
open(f"/tmp/hang-runs/{name}", "w").write(r.text)
print(f"{name}: protocol {r.protocol} format {r.format} {r.seconds} s {len(r.text)} chars")
PY
}

if [ "$PART" = a ]; then
  t0=$(date +%s)
  python3 -m tests.hang_plant run --backend nccl --plant skip --world 2 --culprit 1 --at 1 \
    --steps 3 --timeout 20 --ras-port 29600 --out "$K/skip-live" > "$K/skip-live.run" 2>&1 &
  job=$!
  sleep 14
  live 29600 ras-live-14s.json | tee -a "$S"
  live 29600 ras-live-14s.txt text | tee -a "$S"
  wait $job
  echo "skip-live job $(( $(date +%s) - t0 )) s: $(cat "$K/skip-live.run")" | tee -a "$S"
  ls -la "$K/skip-live" >> "$S"
  timeout 60 python3 -m hpnet hang "$K/skip-live" > "$OUT/hang-skip-live.txt" 2>&1
  echo "hang rc=$?" >> "$S"
  timeout 60 python3 -m hpnet hang --json "$K/skip-live" > "$K/hang-skip-live.json" 2>&1
  timeout 240 python3 benchmarks/hang_plants.py --backend nccl --runs 1 --parallel 10 \
    --max-world 4 --keep "$K" > "$OUT/plants-once.txt" 2>&1
  echo "plants rc=$?" | tee -a "$S"
  timeout 150 python3 benchmarks/hang_plants.py --backend nccl --plants net --runs 2 \
    --parallel 1 --keep "$K" > "$OUT/plants-net.txt" 2>&1
  echo "net rc=$?" | tee -a "$S"
fi
if [ "$PART" = b ]; then
  # a stalled network path, RAS asked while it hangs (every rank's counts alike)
  python3 -m tests.hang_plant run --backend nccl --plant net --world 2 --culprit 1 --at 1 \
    --steps 3 --timeout 20 --ras-port 29601 --out "$K/net-live" > "$K/net-live.run" 2>&1 &
  job=$!
  sleep 16
  live 29601 ras-live-net.json | tee -a "$S"
  live 29601 ras-live-net.txt text | tee -a "$S"
  wait $job
  echo "net-live: $(cat "$K/net-live.run") $(cat "$K/net-live/freeze.log" | tr '\n' ' ')" | tee -a "$S"
  timeout 60 python3 -m hpnet hang "$K/net-live" > "$OUT/hang-net-live.txt" 2>&1
  timeout 400 python3 benchmarks/hang_plants.py --backend nccl --runs "${2:-3}" --parallel 17 \
    --plants none,skip,sleep,op,size,dtype,stop,kill,subgroup,cascade,net \
    --max-world 4 --seed "${3:-7}" --keep "$K" > "$OUT/plants-b.txt" 2>&1
  echo "plants rc=$?" | tee -a "$S"
fi
if [ "$PART" = eight ]; then
  python3 -m tests.hang_plant run --backend nccl --plant skip --world 8 --culprit 5 --at 1 \
    --steps 3 --timeout 20 --ras-port 29602 --out "$K/skip8-live" > "$K/skip8-live.run" 2>&1 &
  job=$!
  sleep 22
  live 29602 ras-live-skip8.json | tee -a "$S"
  live 29602 ras-live-skip8.txt text | tee -a "$S"
  wait $job
  echo "skip8-live: $(cat "$K/skip8-live.run")" | tee -a "$S"
  timeout 60 python3 -m hpnet hang "$K/skip8-live" > "$OUT/hang-skip8-live.txt" 2>&1
  echo "hang rc=$?" | tee -a "$S"
  timeout 400 python3 benchmarks/hang_plants.py --backend nccl --runs "${2:-3}" --parallel 4 \
    --plants none,skip,op,kill --min-world 8 --max-world 8 --seed "${3:-11}" --keep "$K" \
    > "$OUT/plants-eight.txt" 2>&1
  echo "plants rc=$?" | tee -a "$S"
fi
tar czf "$OUT/runs-$PART.tgz" -C /tmp hang-runs
ls -la "$OUT" >> "$S"
