#!/usr/bin/env bash
# torch's desync report (TORCH_NCCL_DESYNC_DEBUG=1) on planted NCCL hangs, on the lent
# GPU machine: the culprit skips a collective (at step 1, and at step 0: before any),
# or sleeps past the timeout; three ranks, each a fake host on the GPUs there are.
#   device:  bash benchmarks/device_desync.sh     (results under $OUT)
# Each job's ranks' stderr and `hpnet hang` on what the job left are kept.
set -u
export PYTHONPATH=$PWD/src:$PWD NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
export TORCH_NCCL_DESYNC_DEBUG=1
OUT=${OUT:-/tmp/hpnet-out}
K=/tmp/desync-runs
rm -rf "$K" && mkdir -p "$K" "$OUT"
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' \
  > "$OUT/machine.txt" 2>&1
run() {  # NAME PLANT AT
  timeout 200 python3 -m tests.hang_plant run --backend nccl --plant "$2" --world 3 \
    --culprit 1 --at "$3" --steps 3 --timeout 15 --out "$K/$1" > "$K/$1.run" 2>&1
  echo "$1: $(cat "$K/$1.run")" >> "$OUT/summary.txt"
  timeout 60 python3 -m hpnet hang "$K/$1" > "$OUT/hang-$1.txt" 2>&1
  echo "$1 hang rc=$?" >> "$OUT/summary.txt"
  for f in "$K/$1"/rank*.stderr; do cp "$f" "$OUT/$1-$(basename "$f")"; done
}
run skip1 skip 1 &
run skip0 skip 0 &
run sleep1 sleep 1 &
wait
ls -la "$K"/* >> "$OUT/summary.txt" 2>&1
