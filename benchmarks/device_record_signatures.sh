#!/usr/bin/env bash
# Records two real NCCL logs for `hpnet verify`'s findings on the lent GPU machine (one
# GPU is enough): two ranks as two NCCL hosts (NCCL_HOSTID) on the same GPU, so that
# NCCL connects them through its network transport.
#   hca-matches-nothing: NCCL_IB_HCA=mlx5_0 on a machine without that device
#   socket-peer-killed:  rank 1 is killed (SIGKILL) in the middle of a loop of all_reduces
#   device:  bash benchmarks/device_record_signatures.sh     (logs under $OUT)
set -u
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT/hca-matches-nothing" "$OUT/socket-peer-killed"
cat > /tmp/rank.py <<'PY'
import datetime, os, sys, time
import torch, torch.distributed as dist
rank, port, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
torch.cuda.set_device(0)
dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=60))
t = torch.ones(16 << 20, device="cuda")
for step in range(400 if mode == "kill" else 3):
    dist.all_reduce(t)
    torch.cuda.synchronize()
    if mode == "kill" and rank == 1 and step == 20:
        print(f"rank 1: killing myself at step {step}", flush=True)
        os.kill(os.getpid(), 9)
print(f"rank {rank}: done", flush=True)
dist.destroy_process_group()
PY
run() {  # name, mode, port, extra env...
  local name=$1 mode=$2 port=$3; shift 3
  for r in 0 1; do
    env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV NCCL_HOSTID=hpnet-fake-host$r "$@" \
      timeout 150 python3 /tmp/rank.py $r $port $mode > "$OUT/$name/rank$r.log" 2>&1 &
  done
  wait
  echo "$name: $(grep -c 'NCCL' "$OUT/$name/rank0.log") NCCL lines in rank0.log" >> "$OUT/summary.txt"
}
run hca-matches-nothing ok 29611 NCCL_IB_HCA=mlx5_0
run socket-peer-killed kill 29612
{ nvidia-smi -L; python3 -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'; } >> "$OUT/summary.txt" 2>&1
tail -n 5 "$OUT"/*/rank*.log
cat "$OUT/summary.txt"
