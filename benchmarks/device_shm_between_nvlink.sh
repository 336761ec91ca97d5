#!/usr/bin/env bash
# Real NCCL logs of two GPUs that NVLink connects, with P2P turned off (traffic through
# host shared memory) and on, for hpnet verify's "SHM between NVLink GPUs" fact (issue 24
# rule 4). Run on the lent GPU machine (2+ GPUs): logs land in $OUT.
set -euo pipefail
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV
cat > /tmp/ar.py <<'PY'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(rank)
x = torch.ones(64 << 20, device="cuda")
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
dist.destroy_process_group()
PY
nvidia-smi topo -m > "$OUT/nvidia-smi-topo-m.txt" 2>&1 || true
python -c "import torch; print(torch.__version__, torch.cuda.nccl.version())" > "$OUT/versions.txt"
NCCL_P2P_DISABLE=1 torchrun --nproc-per-node 2 --master-port 29511 /tmp/ar.py > "$OUT/p2p-disabled.log" 2>&1
torchrun --nproc-per-node 2 --master-port 29512 /tmp/ar.py > "$OUT/p2p-on.log" 2>&1
wc -l "$OUT"/*.log
