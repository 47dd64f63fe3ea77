#!/usr/bin/env bash
# PyTorch's expandable segments on an NVIDIA machine (issue 21: the virtual memory calls):
#   bench/gpu/lookups/expandable_segments.sh BIN_DIR
# Each PyTorch program of bench/gpu/programs runs with
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True natively, under capture and replayed.
# One line per program: exits, whether stdout was unchanged, the event count, how many
# virtual memory calls were recorded (by name), replay's last line; then replay's first
# failure or refusal.
set -u
bin=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd); progs="$here/../programs"
work=$(mktemp -d)
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True CUBLAS_WORKSPACE_CONFIG=:4096:8
for t in torch_elementwise torch_mlp torch_conv; do
    python3 "$progs/$t.py" > "$work/$t.native" 2>&1; rn=$?
    HRR_CAPTURE_OUTPUT="$work/$t.a" LD_PRELOAD="$bin/libhrr_capture.so" python3 "$progs/$t.py" > "$work/$t.cap" 2> "$work/$t.caperr"; rc=$?
    timeout 300 "$bin/hrr-replay" "$work/$t.a" > "$work/$t.rep" 2>&1; rr=$?
    same=no; diff -q "$work/$t.native" "$work/$t.cap" > /dev/null && same=yes
    ev=$(grep -o 'recorded [0-9]* events' "$work/$t.caperr" | head -1)
    vmm=$("$bin/hrr-replay" --events "$work/$t.a" 2>/dev/null | awk '{print $3}' | grep -xE 'Mem(AddressReserve|AddressFree|Create|Release|Map|Unmap|SetAccess|RetainAllocationHandle)' | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}')
    printf '%-18s native %s capture %s replay %s  stdout same: %s  %s | vmm: %s| %s\n' "$t" "$rn" "$rc" "$rr" "$same" "$ev" "${vmm:-none }" "$(tail -1 "$work/$t.rep" | cut -c1-160)"
    grep -m3 'warning' "$work/$t.caperr" | cut -c1-220 | sed 's/^/    /'
    grep -m2 -E '^(FAILED|REFUSED|refused|error)' "$work/$t.rep" | cut -c1-300 | sed 's/^/    /'
done
