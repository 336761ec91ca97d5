#!/usr/bin/env bash
# hpnet image on the lent GPU machine (issue 8): what a real CUDA + PyTorch image holds,
# `hpnet image check` against the profiles, the Dockerfile's own verify step run there,
# and the run flags for that node.
#   device:  bash benchmarks/device_image.sh      (results under $OUT)
set -u
export PYTHONPATH=$PWD/src
OUT=${OUT:-/tmp/hpnet-out}
mkdir -p "$OUT"
H="python3 -m hpnet"
sites=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))')
{
  echo "## cat /etc/os-release"; cat /etc/os-release
  echo "## env (CUDA / NCCL)"; env | grep -E '^(CUDA_VERSION|NCCL_VERSION|NV_CUDA_LIB_VERSION|NV_LIBNCCL_PACKAGE_VERSION)=' | sort
  echo "## ls -ld /usr/local/cuda*"; ls -ld /usr/local/cuda* 2>&1
  echo "## ls libraries"; ls /usr/lib/x86_64-linux-gnu 2>&1 | grep -E 'nccl|ibverbs|rdmacm'
  echo "## ls /etc/libibverbs.d"; ls /etc/libibverbs.d 2>&1
  echo "## site-packages: $sites"
  for s in $sites; do ls -d "$s"/nvidia_nccl* "$s"/torch-*.dist-info 2>&1; grep -E "^(__version__|cuda) " "$s/torch/version.py" 2>&1; done
} > "$OUT/image-facts.txt" 2>&1
cp /usr/local/cuda/version.json "$OUT/cuda-version.json" 2>/dev/null || echo "no /usr/local/cuda/version.json" >> "$OUT/image-facts.txt"
{
  for p in pai-dlc-erdma ecs-erdma pai-lingjun; do
    echo "### hpnet image check --profile $p"
    $H image check --profile $p; echo "rc=$?"
  done
  echo "### hpnet image check --profile pai-dlc-erdma --stage run"
  $H image check --profile pai-dlc-erdma --stage run; echo "rc=$?"
} > "$OUT/image-check.txt" 2>&1
$H image check --profile pai-dlc-erdma --json > "$OUT/image-check-dlc.json" 2>&1
# the Dockerfile's last step, run as a build would run it
$H image dockerfile --profile pai-dlc-erdma --distro ubuntu22.04 --fragment \
  | sed -n "/^RUN <<'HPNET_VERIFY'\$/,/^HPNET_VERIFY\$/p" | sed '1d;$d' > /tmp/verify.sh
{ time sh /tmp/verify.sh; echo "rc=$?"; } > "$OUT/verify-script.txt" 2>&1
{ $H image run-flags --profile auto; echo "rc=$?"; } > "$OUT/run-flags.txt" 2>&1
cat "$OUT/image-facts.txt" "$OUT/image-check.txt" "$OUT/verify-script.txt" "$OUT/run-flags.txt"
