#!/usr/bin/env bash
# Real NCCL_DEBUG=INFO logs of an NCCL release torch does not ship (issue 24: 2.31.x is
# released only as binaries): libnccl.so.2 from the PyPI wheel, carried in pieces
# (.carry/p00..p04, xz), preloaded under torch (LD_PRELOAD), 2 ranks as 2 fake NCCL
# hosts on one GPU (NET/Socket between them), with NCCL 2.31's built-in diagnostics on.
#   device: bash benchmarks/device_nccl_new_logs.sh      (logs under $OUT)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/hpnet-out}
cat /tmp/p0? > /tmp/lib.xz && echo "$(cat .carry/sum.txt 2>/dev/null || echo -)  /tmp/lib.xz" | sha256sum -c - || true
xz -d -T8 -c /tmp/lib.xz > /tmp/libnccl.so.2 || exit 1
PROBE='import os, torch, torch.distributed as dist
dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), flush=True)
x = torch.ones(64 << 18, device="cuda")
for _ in range(5): dist.all_reduce(x)
torch.cuda.synchronize(); print("sum", x[0].item(), flush=True)
dist.destroy_process_group()'
echo "$PROBE" > /tmp/probe.py
run() {  # NAME, then extra VAR=VALUE settings
  local name=$1; shift
  env "$@" LD_PRELOAD=/tmp/libnccl.so.2 NCCL_DEBUG=INFO timeout 120 torchrun --nproc-per-node 2 \
    --master-port 29511 --no-python sh -c 'NCCL_HOSTID=host$LOCAL_RANK exec python3 /tmp/probe.py' \
    > "$OUT/$name.log" 2>&1
  echo "$name rc=$?"; grep -c "" "$OUT/$name.log"
}
run nccl2.31.2-diag-fakehosts-socket NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1
run nccl2.31.2-plain-fakehosts-socket
run nccl2.31.2-socket-ifname-nosuch NCCL_SOCKET_IFNAME=nosuch0 NCCL_RUN_DIAGNOSTICS=1
run nccl2.31.2-net-ib-forced-no-device NCCL_NET=IB NCCL_RUN_DIAGNOSTICS=1
grep -h "NCCL DIAG\|NCCL version\|nccl (2" "$OUT"/*.log | sort | uniq -c | head -60
