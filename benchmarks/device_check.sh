#!/usr/bin/env bash
# hpnet check and hpnet launch on a lent multi-GPU machine (issues 7 and 9): the
# verdict on a node with NVLink and no RDMA NIC, its HTML report, and hpnet launch of
# hpnet bench over two fake hosts (one NCCL host per "node", NET/Socket between them).
#   device:  bash benchmarks/device_check.sh      (results under $OUT)
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
H="python3 -m hpnet"
G=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; nvidia-smi topo -m; } > "$OUT/machine.txt" 2>&1
timeout 240 $H check --logs "$OUT/check-logs" --report "$OUT/report" > "$OUT/check.txt" 2> "$OUT/check.err"
echo "check rc=$?" | tee "$OUT/summary.txt"
timeout 240 $H check --json > "$OUT/check.json" 2> /dev/null
echo "check --json rc=$?" | tee -a "$OUT/summary.txt"
# two "nodes" on this machine, G/2 GPUs each, their own NCCL_HOSTID
timeout 240 $H launch --hosts 127.0.0.1,127.0.0.2 --fake-hosts --nproc-per-node $((G / 2)) \
  --env NCCL_DEBUG=INFO --env NCCL_DEBUG_SUBSYS=INIT,NET,ENV --logs "$OUT/launch-logs" -- \
  python3 -m hpnet bench all_reduce -b 1M -e 256M -f 4 --backend nccl > "$OUT/launch.txt" 2>&1
echo "launch rc=$?" | tee -a "$OUT/summary.txt"
timeout 60 $H verify "$OUT/launch-logs" > "$OUT/launch-verify.txt" 2>&1
echo "verify of the launch logs rc=$?" | tee -a "$OUT/summary.txt"
cat "$OUT/check.txt"
grep -E "^ +[0-9]+ |^# (PASS|FAIL)" "$OUT/launch.txt" | tail -8
head -3 "$OUT/launch-verify.txt"
tar czf "$OUT/logs.tar.gz" -C "$OUT" check-logs launch-logs && rm -rf "$OUT/check-logs" "$OUT/launch-logs"
