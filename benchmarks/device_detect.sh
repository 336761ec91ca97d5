#!/usr/bin/env bash
# Run on the lent GPU machine (see the device tool's README): the live GPU path of
# `hpnet detect`, the nvidia-smi fallback on that machine's real output, a capture of
# its sysfs, and the start-up benchmark where NVML and libnccl really load.
# Writes everything under $OUT; uses the image's python3 (psutil, nvidia-ml-py, torch).
set -uo pipefail
export PYTHONPATH=src NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
out=${OUT:?set OUT}
python3 -m hpnet detect --torch >"$out/detect.txt" 2>&1; echo "detect rc=$?" >>"$out/extra.txt"
python3 -m hpnet detect --torch --json >"$out/detect.json" 2>>"$out/extra.txt"
python3 -c "$(python3 -c 'from hpnet.node.versions import TORCH_PROBE; print(TORCH_PROBE)')" \
  >"$out/torch-probe.txt" 2>/dev/null
nvidia-smi -q -x >"$out/nvidia-smi-q-x.xml" 2>&1
nvidia-smi topo -m >"$out/nvidia-smi-topo-m.txt" 2>&1
python3 -m hpnet.node.snapshot capture / >"$out/gpu-vm.tree"
{
  echo "== torch's own view (imports torch)"
  python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version(), torch.cuda.device_count())'
  echo "== nvidia-smi fallback path"
  python3 -c 'from pathlib import Path; from hpnet.node.gpus import read_gpus_nvidia_smi; from hpnet.node.sysfs import FsRoot; from hpnet.runner import SubprocessRunner; print(read_gpus_nvidia_smi(FsRoot(Path("/")), SubprocessRunner()))'
  echo "== libnccl the loader finds"; ldconfig -p | grep -i nccl || echo none
  echo "== /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version
  echo "== nvidia-smi"; nvidia-smi | head -12
  echo "== start-up, largest fixture"; python3 benchmarks/detect_startup.py --runs 20
  echo "== start-up, live node"; python3 benchmarks/detect_startup.py --live --runs 20
} >>"$out/extra.txt" 2>&1
tail -40 "$out/detect.txt"; tail -22 "$out/extra.txt"
