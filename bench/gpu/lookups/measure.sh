#!/usr/bin/env bash
# What real CUDA programs ask of the driver's lookup paths (issue 21's measurement), on an
# NVIDIA machine: each program runs under trace_lookups.so, and its trace is summarised
# (distinct cuGetProcAddress names with version and flags, export-table UUIDs, dl* calls).
#   bench/gpu/lookups/measure.sh OUT_DIR
set -u
out=$1; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd); progs="$here/../programs"
work=$(mktemp -d)
gcc -shared -fPIC -O2 -o "$work/libtl.so" "$here/trace_lookups.c" -ldl || exit 1
build() { nvcc -O2 -std=c++17 -arch=sm_90 "$@" 2>&1 | grep -v warning; }
build "$progs/vector_add.cu" -o "$work/vector_add_static"
build -cudart shared "$progs/vector_add.cu" -o "$work/vector_add_shared"
build "$progs/cublas_sgemm.cu" -o "$work/cublas_sgemm" -lcublas
build "$progs/cublas_batched.cu" -o "$work/cublas_batched" -lcublas
nvcc -fatbin -arch=sm_90 "$progs/vector_add_drv_kernel.cu" -o "$work/k.fatbin"
build "$progs/vector_add_drv.cu" -o "$work/vector_add_drv" -lcuda
run() {
    local name=$1; shift
    rm -f "$work/$name.trace"
    HRR_TRACE_LOOKUPS="$work/$name.trace" LD_PRELOAD="$work/libtl.so" "$@" > "$work/$name.out" 2>&1
    echo "== $name: exit $? ($(tail -1 "$work/$name.out" | cut -c1-80))"
    local t="$work/$name.trace"
    echo "   lines: $(wc -l < "$t"); gpa distinct: $(grep -c '^gpa' "$t") calls, $(grep '^gpa' "$t" | awk '{print $2}' | sort -u | wc -l) names"
    echo "   askers: $(sed -n 's/.*\[\(.*\)\]$/\1/p' "$t" | sort | uniq -c | sort -rn | head -5 | tr '\n' ' ')"
    echo "   dl: $(grep -E '^(dlsym|dlvsym|dlopen|dlmopen)' "$t" | awk '{print $1, $2}' | sort | uniq -c | sort -rn | head -12 | tr '\n' ';')"
    echo "   export tables: $(grep '^export' "$t" | awk '{print $2}' | sort | uniq -c | tr '\n' ';')"
    echo "   not exported: $(grep '^gpa' "$t" | grep -c 'not an exported')"
    cp "$t" "$out/$name.trace"
}
run vector_add_static "$work/vector_add_static"
run vector_add_shared "$work/vector_add_shared"
run vector_add_drv "$work/vector_add_drv" "$work/k.fatbin"
run cublas_sgemm "$work/cublas_sgemm"
run cublas_batched "$work/cublas_batched"
run torch_small python3 "$progs/torch_small.py"
cd "$out" && tar czf traces.tgz *.trace && rm -f *.trace
