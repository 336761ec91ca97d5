#!/usr/bin/env bash
# hpnet verify against grep on the lent machine's cores (issue 28), same files, same call.
#   device:  bash benchmarks/device_verify_speed.sh            (results under $OUT)
#            BASE=path/to/other/src bash benchmarks/device_verify_speed.sh  (twice, alternated)
# The 1 GB log of 1024 processes and the log of 12,288 processes (one job of 1536 hosts)
# are generated there (benchmarks/gen_nccl_log.py); BASE, when given, is an older
# hpnet's src run on the same files right after, for before/after. The compiled passes
# (hpnet.ncclog._fastscan) are built for the machine's python3 first, as hatch_build.py
# does at install (BASE's too, where it has them); PURE=1 also runs the same code with HPNET_PURE_PYTHON=1 (without them).
# JOBS: the 1 GB log's --jobs with BASE (default "1 16"); PHASES=1: verify_phases.py, 16 jobs.
set -u
export NCCL_NVLS_ENABLE=0 PYTHONWARNINGS=ignore
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
{ nproc; python3 --version; grep --version | head -1; echo "LANG=${LANG:-} LC_ALL=${LC_ALL:-}"
} > "$OUT/machine.txt" 2>&1
python3 benchmarks/gen_nccl_log.py /tmp/big.log --size-gb 1 > /dev/null
python3 benchmarks/gen_nccl_log.py /tmp/procs12k.log --size-gb 0.5 --hosts 1536 > /dev/null
ls -la /tmp/big.log /tmp/procs12k.log >> "$OUT/machine.txt"
include=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for tree in src ${BASE:-}; do  # BASE's own module too, where it has one
  [ -f "$tree/hpnet/ncclog/_fastscan.c" ] || continue
  cc -O2 -fPIC -shared -I"$include" "$tree"/hpnet/ncclog/_fast*.c \
    -o "$tree/hpnet/ncclog/_fastscan$suffix" >> "$OUT/machine.txt" 2>&1
done
PYTHONPATH=src python3 -c 'from hpnet.ncclog import passes; print("compiled", passes.COMPILED)' \
  >> "$OUT/machine.txt" 2>&1
speed() {  # NAME LOG ARGS... (this tree, and BASE alternated with it when given)
  local name=$1 log=$2
  shift 2
  PYTHONPATH=$PWD/src timeout 540 python3 benchmarks/verify_speed.py "$log" "$@" \
    ${BASE:+--base "$BASE" --runs 2 --no-naive} > "$OUT/speed-$name.txt" 2>&1
  echo "rc=$?" >> "$OUT/speed-$name.txt"
}
if [ -n "${BASE:-}" ]; then
  speed 1g /tmp/big.log --jobs ${JOBS:-1 16}
  speed 12k /tmp/procs12k.log --jobs 16
else
  speed 1g /tmp/big.log --jobs 1 4 16
  speed 12k /tmp/procs12k.log --jobs 16
fi
if [ -n "${PURE:-}" ]; then
  HPNET_PURE_PYTHON=1 speed 1g-pure /tmp/big.log --jobs 1 16
  HPNET_PURE_PYTHON=1 speed 12k-pure /tmp/procs12k.log --jobs 16
fi
if [ -n "${PHASES:-}" ]; then  # where this tree's time goes with 16 workers
  for log in big procs12k; do
    PYTHONPATH=$PWD/src timeout 300 python3 benchmarks/verify_phases.py /tmp/$log.log --jobs 16 \
      > "$OUT/phases-$log-16.txt" 2>&1
  done
fi
