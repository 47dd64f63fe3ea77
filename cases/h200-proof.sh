#!/usr/bin/env bash
# Capture-and-replay proof on an NVIDIA GPU, run by hand until the harness takes over:
#   cases/h200-proof.sh BIN_DIR OUT_DIR
# BIN_DIR holds hrr-replay and libhrr_capture.so. Prints every step and its result.
set -u
bin=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
cap="$bin/libhrr_capture.so"; replay="$bin/hrr-replay"
work=$(mktemp -d); cd "$(dirname "$0")/.."
step() { echo; echo "=== $*"; }
step "device"; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader; nvcc --version | tail -1
step "build api_tour (-cudart shared, sm_90)"
nvcc -cudart shared -arch=sm_90 -x cu cases/api_tour/main.cpp -o "$work/api_tour" || exit 1
step "native run"; "$work/api_tour"
step "capture"; HRR_CAPTURE_OUTPUT="$work/a1" LD_PRELOAD="$cap" "$work/api_tour"; echo "program exit: $?"
step "hrr-replay --info"; "$replay" --info "$work/a1"
step "hrr-replay --events (first 12)"; "$replay" --events "$work/a1" | head -12
step "replay"; "$replay" "$work/a1" --json "$out/api_tour.json"; echo "hrr-replay exit: $?"
step "blob edit: one byte of one expected output changed"
cp -r "$work/a1" "$work/a2"; "$replay" --edit-expected 100 "$work/a2"
"$replay" "$work/a2" --continue-on-error --json "$out/api_tour_edited.json"; echo "hrr-replay exit: $?"
step "static runtime (nvcc default) under capture"
nvcc -arch=sm_90 -x cu cases/api_tour/main.cpp -o "$work/api_static" && HRR_CAPTURE_OUTPUT="$work/a3" LD_PRELOAD="$cap" "$work/api_static" | tail -1
ls "$work/a3" 2>&1 | head -2
step "PyTorch matmul + relu under capture"
HRR_CAPTURE_OUTPUT="$work/a4" LD_PRELOAD="$cap" python3 -c "
import torch
a = torch.arange(256*256, dtype=torch.float32, device='cuda').reshape(256,256) / 65536
b = (a @ a).relu() + 1
print('torch result sum', round(b.sum().item(), 3), 'expected', round(((a.cpu() @ a.cpu()).relu() + 1).sum().item(), 3))
"; echo "python exit: $?"
"$replay" --info "$work/a4" | head -40
"$replay" "$work/a4" --continue-on-error --json "$out/torch.json" | tail -12; echo "hrr-replay exit: $?"
