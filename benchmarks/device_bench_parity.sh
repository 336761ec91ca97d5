#!/usr/bin/env bash
# hpnet bench against nccl-tests on the lent 4x H200 machine (issue 6), side by side in
# one call: correctness on every op and both GPU backends, bus bandwidth at >= 64 MiB,
# 8-byte all_reduce latency with and without CUDA graphs, bench train, fake hosts.
#
#   here:    git -C <nccl-tests clone> archive v2.19.6 | tar -x -C .device/nccl-tests
#   device:  bash benchmarks/device_bench_parity.sh PART    (carry .device; PART a or b)
#
# Part a: build, correctness, bandwidth. Part b: latency, train, fake hosts. Each
# writes under $OUT/bench and ends with benchmarks/parity_table.py's table.
# NVLink SHARP stays off (NCCL_NVLS_ENABLE=0), as the lent machines require.
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/hpnet-out}
W=$OUT/bench
mkdir -p "$W"
H="python3 -m hpnet"
PART=${1:-a}
B=.device/nccl-tests/build
G=$(nvidia-smi -L | wc -l)  # nccl-tests -g: every GPU of the machine, as hpnet's ranks

build() {
  [ -x $B/all_reduce_perf ] && return
  NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])")
  mkdir -p /tmp/ncclhome/lib
  cp -r "$NCCL_DIR/include" /tmp/ncclhome/
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so
  ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2
  ( cd .device/nccl-tests && make -j64 src.build NCCL_HOME=/tmp/ncclhome \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > "$W/nccl-tests-build.txt" 2>&1 )
  echo "nccl-tests build rc=$?" | tee -a "$W/summary.txt"
}

timed() {  # name, command...: run, keep stdout / stderr, log rc and seconds
  local name=$1; shift
  local t0=$(date +%s.%N)
  timeout 240 "$@" > "$W/$name.txt" 2> "$W/$name.err"
  echo "$name rc=$? $(python3 -c "import time; print(round(time.time() - $t0, 1))") s" | tee -a "$W/summary.txt"
}

build
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])")
export LD_LIBRARY_PATH=/tmp/ncclhome/lib:$NCCL_DIR/lib:${LD_LIBRARY_PATH:-}

if [ "$PART" = bw ]; then  # more bandwidth repetitions only (REPS="3 4")
  for rep in ${REPS:-3 4}; do
    for op in all_reduce all_gather reduce_scatter alltoall; do
      timed "nt-bw-$op-$rep" $B/${op}_perf -g $G -b 64M -e 1G -f 2 -n 40 -w 5
    done
    timed "hp-bw-nccl-$rep" $H bench all_reduce all_gather reduce_scatter alltoall -b 64M -e 1G -f 2 -n 40 -w 5 --backend nccl --save "$W/hp-bw-nccl-$rep.json"
  done
elif [ "$PART" = a ]; then
  { nvidia-smi -L; nvidia-smi topo -m; } > "$W/machine.txt" 2>&1
  # correctness: every op, both GPU backends, in- and out-of-place, checked
  timed check-nccl $H bench all -b 8 -e 64M -f 8 -n 5 --backend nccl --save "$W/check-nccl.json"
  timed check-torch $H bench all -b 8 -e 64M -f 8 -n 5 --backend torch-nccl --save "$W/check-torch.json"
  timed check-graph $H bench all_reduce all_gather -b 8 -e 16M -f 8 -n 5 -G 4 --backend nccl --save "$W/check-graph.json"
  timed check-bf16-avg $H bench all_reduce reduce_scatter -b 8 -e 16M -f 8 -n 5 -d bfloat16 -o avg --backend nccl --save "$W/check-bf16-avg.json"
  # bandwidth: the same sweep, alternating tools, twice
  for rep in ${REPS:-1 2}; do
    for op in all_reduce all_gather reduce_scatter alltoall; do
      timed "nt-bw-$op-$rep" $B/${op}_perf -g $G -b 64M -e 1G -f 2 -n 40 -w 5
    done
    timed "hp-bw-nccl-$rep" $H bench all_reduce all_gather reduce_scatter alltoall -b 64M -e 1G -f 2 -n 40 -w 5 --backend nccl --save "$W/hp-bw-nccl-$rep.json"
  done
  [ -n "${SKIP_TORCH:-}" ] || timed hp-bw-torch $H bench all_reduce all_gather reduce_scatter alltoall -b 64M -e 1G -f 2 -n 40 -w 5 --backend torch-nccl --save "$W/hp-bw-torch.json"
else
  # 8-byte all_reduce latency, alternating tools, three times
  for rep in 1 2 3; do
    timed "nt-lat-$rep" $B/all_reduce_perf -g $G -b 8 -e 8 -n 2000 -w 200
    timed "hp-lat-nccl-$rep" $H bench all_reduce -b 8 -e 8 -n 2000 -w 200 --backend nccl --save "$W/hp-lat-nccl-$rep.json"
    timed "nt-latG-$rep" $B/all_reduce_perf -g $G -b 8 -e 8 -n 100 -w 20 -G 20
    timed "hp-latG-nccl-$rep" $H bench all_reduce -b 8 -e 8 -n 100 -w 20 -G 20 --backend nccl --save "$W/hp-latG-nccl-$rep.json"
  done
  timed hp-lat-torch $H bench all_reduce -b 8 -e 8 -n 2000 -w 200 --backend torch-nccl --save "$W/hp-lat-torch.json"
  timed hp-latG-torch $H bench all_reduce -b 8 -e 8 -n 100 -w 20 -G 20 --backend torch-nccl --save "$W/hp-latG-torch.json"
  if [ -z "${SKIP_TRAIN:-}" ]; then
    timed train $H bench train
    timed train-json $H bench train --steps 20 --json
  fi
  timed fake-hosts $H bench all_reduce -b 1M -e 256M -f 4 --fake-hosts 2 --backend nccl --save "$W/fake-hosts.json"
fi
python3 benchmarks/parity_table.py "$W" | tee "$OUT/table-$PART.txt"
tar czf "$OUT/bench-$PART.tar.gz" -C "$OUT" bench && rm -rf "$W"
