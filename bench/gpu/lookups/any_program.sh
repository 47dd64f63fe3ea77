#!/usr/bin/env bash
# Issue 21 on an NVIDIA machine: programs that reach the driver without the shared
# runtime (nvcc's default static build, a driver-API program, cuBLAS, PyTorch) and the
# shared-runtime build beside them, each run natively, under capture and replayed.
#   bench/gpu/lookups/any_program.sh BIN_DIR OUT_DIR
# One line per program: exits (native/capture/replay), whether stdout was unchanged,
# the event count, replay's last line; then capture's warnings and replay's first
# failure or refusal.
set -u
bin=$(cd "$1" && pwd); out=$2; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd); progs="$here/../programs"
work=$(mktemp -d)
b() { nvcc -O2 -std=c++17 -arch=sm_90 "$@" 2>&1 | grep -v -i warning; return "${PIPESTATUS[0]}"; }
b "$progs/vector_add.cu" -o "$work/vector_add_static"
b -cudart shared "$progs/vector_add.cu" -o "$work/vector_add_shared"
statics=()
for src in "$progs"/*.cu; do
    p=$(basename "$src" .cu)
    case $p in *_kernel|*_drv|cublas_*|vector_add) continue ;; esac
    b "$src" -o "$work/${p}_static" && statics+=("$p")
done
b "$progs/cublas_sgemm.cu" -o "$work/cublas_sgemm" -lcublas
b "$progs/cublas_batched.cu" -o "$work/cublas_batched" -lcublas
nvcc -fatbin -arch=sm_90 "$progs/vector_add_drv_kernel.cu" -o "$work/k.fatbin"
b "$progs/vector_add_drv.cu" -o "$work/vector_add_drv" -lcuda
one() {
    local name=$1; shift
    "$@" > "$work/$name.native" 2>&1; local rn=$?
    rm -rf "$work/$name.a"
    HRR_CAPTURE_OUTPUT="$work/$name.a" LD_PRELOAD="$bin/libhrr_capture.so" "$@" > "$work/$name.cap" 2> "$work/$name.caperr"; local rc=$?
    timeout 300 "$bin/hrr-replay" "$work/$name.a" > "$work/$name.rep" 2>&1; local rr=$?
    local same=no; diff -q "$work/$name.native" "$work/$name.cap" > /dev/null && same=yes
    local ev; ev=$(grep -o 'recorded [0-9]* events' "$work/$name.caperr" | head -1)
    printf '%-20s native %s capture %s replay %s  stdout same: %s  %s | %s\n' "$name" "$rn" "$rc" "$rr" "$same" "$ev" "$(tail -1 "$work/$name.rep" | cut -c1-150)"
    grep -m3 'warning' "$work/$name.caperr" | cut -c1-220 | sed 's/^/    /'
    grep -m2 -E '^(FAILED|REFUSED|refused|error)' "$work/$name.rep" | cut -c1-300 | sed 's/^/    /'
    cp "$work/$name.caperr" "$out/" 2>/dev/null; cp "$work/$name.rep" "$out/" 2>/dev/null
}
one vector_add_static "$work/vector_add_static"
one vector_add_shared "$work/vector_add_shared"
for p in "${statics[@]}"; do one "${p}_static" "$work/${p}_static"; done
one vector_add_drv "$work/vector_add_drv" "$work/k.fatbin"
one cublas_sgemm "$work/cublas_sgemm"
one cublas_batched "$work/cublas_batched"
export CUBLAS_WORKSPACE_CONFIG=:4096:8
for t in torch_elementwise torch_mlp torch_conv; do one $t python3 "$progs/$t.py"; done
cd "$out" && tar czf logs.tgz *.caperr *.rep && rm -f *.caperr *.rep
