#!/usr/bin/env bash
# hpnet check and hpnet isolate on the lent 4-GPU machine (issue 26, item 7).
#   device:  bash benchmarks/device_4gpu.sh check      (results under $OUT)
#            bash benchmarks/device_4gpu.sh isolate
#
# check:   hpnet check on the node (intra-node over 4 GPUs, then 2 fake hosts of 2 GPUs
#          each, NCCL's network transport between them), check --full --report, and the
#          cluster view under hpnet launch --fake-hosts (2 hosts x 2 GPUs).
# isolate: hpnet isolate on 4 fake hosts, one GPU each (host N on GPU N): all alike,
#          then host 2's GPU kept busy by another process (bf16 matrix products in a
#          loop, as a throttled or shared GPU would be): a slowdown of the hardware, not
#          of the configuration, which isolate must name as host 2 and only host 2.
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as the lent machines require.
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
H="python3 -m hpnet"
PART=${1:-check}
S=$OUT/summary-$PART.txt

timed() {  # name, limit, command...: run, keep stdout / stderr, log rc and seconds
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s.%N)
  timeout "$limit" "$@" > "$OUT/$name.txt" 2> "$OUT/$name.err"
  echo "$name rc=$? $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" | tee -a "$S"
}

{ nvidia-smi -L; nvidia-smi topo -m
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
} > "$OUT/machine.txt" 2>&1

if [ "$PART" = check ]; then
  timed check 200 $H check
  timed check-full 300 $H check --full --report "$OUT/report" --json
  timed check-all 200 $H launch --hosts 127.0.0.1,127.0.0.2 --fake-hosts --nproc-per-node 2 \
    --env PYTHONPATH --env NCCL_NVLS_ENABLE \
    -- python3 -m hpnet check --all
  cat "$OUT/check.txt"
  tail -30 "$OUT/check-all.txt"
  grep -c Traceback "$OUT/check-all.txt" "$OUT/check-all.err" | tee -a "$S"
  python3 - "$OUT/check-full.txt" <<'EOF' | tee -a "$S"
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text[text.index("{"):])
print("check --full:", d["verdict"], "|", d["headline"])
for s in d["stages"]:
    print(" ", s["name"], s.get("network"), s.get("error"))
EOF
  tar czf "$OUT/check-files.tar.gz" -C "$OUT" report check.err check-full.err check-all.err 2>/dev/null
  rm -rf "$OUT/report" "$OUT"/*.err
else
  HOSTS=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4
  isolate() {  # NAME: hpnet launch ... -- hpnet isolate, 4 fake hosts of one GPU
    timed "isolate-$1" 280 $H launch --hosts $HOSTS --fake-hosts --nproc-per-node 1 \
      --env PYTHONPATH --env NCCL_NVLS_ENABLE \
      -- python3 -m hpnet isolate --json --logs "$OUT/$1-logs" --report "$OUT/$1-report"
  }
  isolate healthy
  # host 2's GPU busy with another process's work for the whole run
  CUDA_VISIBLE_DEVICES=2 python3 -c '
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + 270
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
' > "$OUT/busy.txt" 2>&1 &
  BUSY=$!
  sleep 5
  nvidia-smi --query-gpu=index,utilization.gpu --format=csv > "$OUT/busy-util.txt" 2>&1
  isolate busy-gpu2
  kill $BUSY 2>/dev/null
  for name in healthy busy-gpu2; do
    echo "== $name" | tee -a "$S"
    python3 - "$OUT/isolate-$name.txt" <<'EOF' 2>&1 | tee -a "$S"
import json, sys, re
text = open(sys.argv[1]).read()
body = "\n".join(re.sub(r"^\[node 0[^]]*\] ", "", l) for l in text.splitlines())
d = json.loads(body[body.index("{"):body.rindex("}") + 1])
print("status", d["status"], "collectives", d["collectives"], "median", d["cluster_median_gbps"])
for o in d["outliers"]:
    print(o["kind"], o["fault"], o.get("node"), o.get("code"))
    print("  " + "\n  ".join(o["evidence"]))
    print("  fix:", o["fix"])
for i in d["inconclusive"]:
    print("inconclusive", i["node"], i["cause"][:200])
print("pairs:", [(p["round"], p["a"], p["b"], round(p["median_gbps"] or 0, 2)) for p in d["pairs"]])
EOF
  done
  cat "$OUT/busy-util.txt"
  tar czf "$OUT/isolate-files.tar.gz" -C "$OUT" healthy-logs busy-gpu2-logs healthy-report \
    busy-gpu2-report isolate-healthy.err isolate-busy-gpu2.err busy.txt 2>/dev/null
  rm -rf "$OUT"/*-logs "$OUT"/*-report "$OUT"/*.err "$OUT/busy.txt"
fi
