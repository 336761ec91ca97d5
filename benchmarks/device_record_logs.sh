#!/usr/bin/env bash
# Records real NCCL debug logs (issue 5) and nccl-tests outputs (issue 6) on the lent
# GPU machine, through hpnet's own probe and nccl-tests built from its public source.
#
#   here:    git -C <nccl-tests clone> archive v2.19.6 | tar -x -C .device/nccl-tests
#   device:  bash benchmarks/device_record_logs.sh       (carry .device)
#
# Everything lands in $OUT/logs.tar.gz; the recorded files are committed under
# tests/data/ with a .source.txt each. NVLink SHARP stays off (NCCL_NVLS_ENABLE=0).
set -u
export PYTHONPATH=$PWD/src NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/hpnet-out}
W=$OUT/w
mkdir -p "$W"
H="python3 -m hpnet.cli.main"

{ nvidia-smi -L; nvidia-smi topo -m; uname -r; hostname; ip -br addr; } > "$W/machine.txt" 2>&1
python3 - > "$W/bindings.txt" 2>&1 <<'PY'
import importlib, torch
print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())
for name in ("cupy", "cupy.cuda.nccl", "nccl4py", "nccl", "cuda.bindings", "cuda.core"):
    try:
        m = importlib.import_module(name)
        v = getattr(m, "__version__", None) or (m.get_version() if hasattr(m, "get_version") else "")
        print(name, "OK", v)
    except Exception as e:  # report and go on
        print(name, "MISSING", type(e).__name__, e)
PY
pip list 2>/dev/null | grep -i -E "nccl|cupy|cuda|torch" > "$W/pip.txt"

probe() {  # name, then env assignments, then -- and hpnet verify flags
  local name=$1; shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0=$(date +%s.%N)
  env "${envs[@]}" timeout 300 $H verify --run --logs "$W/$name" "$@" > "$W/$name.verify.txt" 2> "$W/$name.err"
  echo "$name rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s" | tee -a "$W/summary.txt"
}
probe p2p-4ranks --
probe shm-p2p-disabled NCCL_P2P_DISABLE=1 --
probe net-inside-node-p2p-shm-disabled NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 --
probe fake-hosts-2x2-socket -- --fake-hosts 2
probe bad-socket-ifname NCCL_SOCKET_IFNAME=nosuchif0 --
probe net-ib-forced-no-device NCCL_NET=IB --
probe fake-hosts-2x2-default-subsys NCCL_DEBUG_SUBSYS= -- --fake-hosts 2
$H verify --run --fake-hosts 2 --json > "$W/probe-json.txt" 2>&1; echo "json rc=$?" >> "$W/summary.txt"

# nccl-tests 2.19.6 against the NCCL wheel torch uses
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])")  # a namespace package: no __file__
mkdir -p /tmp/ncclhome/lib
cp -r "$NCCL_DIR/include" /tmp/ncclhome/
ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so
ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2
( cd .device/nccl-tests && make -j64 src.build NCCL_HOME=/tmp/ncclhome \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > "$W/nccl-tests-build.txt" 2>&1 )
echo "nccl-tests build rc=$?" >> "$W/summary.txt"
B=.device/nccl-tests/build
export LD_LIBRARY_PATH=/tmp/ncclhome/lib:${LD_LIBRARY_PATH:-}
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,ENV $B/all_reduce_perf -g 4 -b 8 -e 8M -f 4 > "$W/nccl-tests-all_reduce-g4-debug-info.txt" 2>&1
$B/all_reduce_perf -g 4 -b 8 -e 256M -f 2 -c 1 > "$W/nccl-tests-all_reduce-g4.txt" 2>&1
$B/all_gather_perf -g 4 -b 1K -e 256M -f 4 -c 1 > "$W/nccl-tests-all_gather-g4.txt" 2>&1
$B/reduce_scatter_perf -g 4 -b 1K -e 256M -f 4 -c 1 > "$W/nccl-tests-reduce_scatter-g4.txt" 2>&1
$B/alltoall_perf -g 4 -b 1K -e 256M -f 4 -c 1 > "$W/nccl-tests-alltoall-g4.txt" 2>&1
$B/broadcast_perf -g 4 -b 1K -e 64M -f 8 -c 1 > "$W/nccl-tests-broadcast-g4.txt" 2>&1
$B/sendrecv_perf -g 4 -b 1K -e 64M -f 8 -c 1 > "$W/nccl-tests-sendrecv-g4.txt" 2>&1
$B/all_reduce_perf -g 4 -b 8 -e 1M -f 8 -G 10 -c 1 -J "$W/nccl-tests-all_reduce-g4-graph.json" > "$W/nccl-tests-all_reduce-g4-graph.txt" 2>&1
NCCL_HOSTID= $B/all_reduce_perf -t 4 -g 1 -b 8 -e 16M -f 16 -d half -o max > "$W/nccl-tests-all_reduce-t4-half-max.txt" 2>&1
echo "nccl-tests done" >> "$W/summary.txt"
tar czf "$OUT/logs.tar.gz" -C "$W" .
cat "$W/summary.txt"; cat "$W/bindings.txt"; tail -3 "$W/nccl-tests-all_reduce-g4.txt"
