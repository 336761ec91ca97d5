#!/usr/bin/env bash
# hpnet isolate on healthy fake NCCL hosts of one GPU machine (issue 23): 2 to 9 hosts,
# one rank each (NCCL_HOSTID=host<local rank>; ranks share the GPUs round-robin, and
# NCCL's network transport carries every test between them), must name nobody, well
# under the 5-minute group timeout; then one host given slower NCCL socket settings
# must be named, and only it.
#   device:  bash benchmarks/device_isolate_healthy.sh [NODES] [SLOW]   (results under $OUT)
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
{ nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
python3 benchmarks/isolate_healthy.py --device cuda --nodes "${1:-2-9}" --limit 150 --save "$OUT" 2>&1 | tee -a "$OUT/healthy.txt"
for spec in ${2:-}; do  # "N:K": N hosts, host K slowed
  python3 benchmarks/isolate_healthy.py --device cuda --nodes "${spec%%:*}" --slow-host "${spec##*:}" --save "$OUT" 2>&1 | tee -a "$OUT/slow.txt"
done
