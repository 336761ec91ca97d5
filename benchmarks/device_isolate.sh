#!/usr/bin/env bash
# hpnet isolate on a lent GPU machine (issues 17 and 18): four fake NCCL hosts
# (NCCL_HOSTID) started by hpnet launch --fake-hosts, every rank on NCCL over the
# network transport (Socket: the machine has no RDMA NIC). Run A: all hosts alike
# (expected: no outlier). Run B: one host given slower NCCL settings
# (NCCL_SOCKET_NTHREADS=1, NCCL_NSOCKS_PERTHREAD=1 against 4 x 4 elsewhere, and one
# channel of 64 KiB buffers: the socket settings alone changed nothing measurable on
# one machine's loopback, 0.75 against 0.79 GB/s): expected to come out as a
# configuration fault on that host, with the drift as evidence.
# Then hpnet check on the machine (the one-truth check after the issue 16 redesign).
#   device:  bash benchmarks/device_isolate.sh      (results under $OUT)
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
H="python3 -m hpnet"
G=$(nvidia-smi -L | wc -l)
{ nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } > "$OUT/machine.txt" 2>&1
HOSTS=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4
# four hosts of one rank each; with fewer than four GPUs they share GPU 0 (NCCL allows
# ranks of different NCCL hosts on one GPU)
if [ "$G" -ge 4 ]; then DEV=0,1,2,3; else DEV=0,0,0,0; fi
run() {  # run NAME SLOW-HOST-ID: hpnet launch ... -- hpnet isolate
  local name=$1 slow=$2
  CUDA_VISIBLE_DEVICES=$DEV timeout 500 $H launch --hosts $HOSTS --fake-hosts --nproc-per-node 1 \
    --env PYTHONPATH --env NCCL_NVLS_ENABLE -- sh -c '
      if [ "$NCCL_HOSTID" = "'"$slow"'" ]; then
        export NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1 NCCL_MAX_NCHANNELS=1 \
          NCCL_BUFFSIZE=65536
      else
        export NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4
      fi
      exec python3 -m hpnet isolate --json --logs "'"$OUT/$name-logs"'" --report "'"$OUT/$name-report"'"' \
    > "$OUT/$name.txt" 2> "$OUT/$name.err"
  echo "isolate $name rc=$?" | tee -a "$OUT/summary.txt"
}
mkdir -p "$OUT/clean-logs" "$OUT/slow-logs"
run clean none
run slow hpnet-fake-host2
timeout 300 $H check --json > "$OUT/check.json" 2> "$OUT/check.err"
echo "check rc=$?" | tee -a "$OUT/summary.txt"
for name in clean slow; do
  echo "== $name"; sed -n 's/^\[node 0[^]]*\] //p' "$OUT/$name.txt" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
start = lines.index("{"); data = json.loads("\n".join(lines[start:lines.index("}", start) + 1]))
for o in data["outliers"]:
    print(o["kind"], o["fault"], o.get("node"), o.get("code")); print("  " + "\n  ".join(o["evidence"])); print("  fix:", o["fix"])
print("pairs:", [(p["round"], p["a"], p["b"], p["rail"], round(p["median_gbps"] or 0, 2)) for p in data["pairs"]])
print("median", data["cluster_median_gbps"], "collectives", data["collectives"])
' 2>&1 | tee -a "$OUT/summary.txt"
done
python3 -c '
import json; d = json.load(open("'"$OUT"'/check.json"))
print("check:", d["verdict"], d["headline"])
for s in d["stages"]: print(" ", s["name"], s.get("network"), s.get("error"))
' 2>&1 | tee -a "$OUT/summary.txt"
tar czf "$OUT/logs.tar.gz" -C "$OUT" clean-logs slow-logs clean-report slow-report \
  clean.err slow.err check.err 2>/dev/null
rm -rf "$OUT/clean-logs" "$OUT/slow-logs" "$OUT/clean-report" "$OUT/slow-report" "$OUT"/*.err
