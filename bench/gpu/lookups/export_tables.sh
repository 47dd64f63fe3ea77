#!/usr/bin/env bash
# Which private export-table entries real CUDA programs call, and what handing out a copy
# of a table does to them (issue 21), on an NVIDIA machine: each program runs natively,
# then under trace_lookups.so with HRR_TRACE_SHADOW=safe (every table copied but the
# runtime's interface and integrity-check tables) and =all (every table copied).
#   bench/gpu/lookups/export_tables.sh OUT_DIR
set -u
out=$1; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd); progs="$here/../programs"
work=$(mktemp -d)
gcc -shared -fPIC -O2 -o "$work/libtl.so" "$here/trace_lookups.c" -ldl || exit 1
build() { nvcc -O2 -std=c++17 -arch=sm_90 "$@" 2>&1 | grep -v warning; }
build "$progs/vector_add.cu" -o "$work/vector_add_static"
build -cudart shared "$progs/vector_add.cu" -o "$work/vector_add_shared"
build "$progs/cublas_sgemm.cu" -o "$work/cublas_sgemm" -lcublas
build "$progs/simple_cuda_graphs.cu" -o "$work/graphs_static"
run() {
    local name=$1; shift
    "$@" > "$work/$name.native" 2>&1
    echo "== $name: native exit $? ($(tail -1 "$work/$name.native" | cut -c1-60))"
    for mode in safe all; do
        local t="$work/$name.$mode.trace"; rm -f "$t"
        HRR_TRACE_SHADOW=$mode HRR_TRACE_LOOKUPS="$t" LD_PRELOAD="$work/libtl.so" "$@" > "$work/$name.$mode.out" 2>&1
        local rc=$?
        local same=no; cmp -s "$work/$name.native" "$work/$name.$mode.out" && same=yes
        echo "   shadow=$mode: exit $rc, output same: $same ($(tail -1 "$work/$name.$mode.out" | cut -c1-70))"
        echo "     tables copied: $(grep -c '^shadow' "$t"); entries called: $(grep '^entry' "$t" | awk '$4 > 0' | wc -l) of $(grep -c '^entry' "$t")"
        grep '^entry' "$t" | awk '$4 > 0 {printf "%s=%s ", $2, $4}' | fold -w 150 | sed 's/^/     /'
        echo
        cp "$t" "$out/"
    done
}
run vector_add_static "$work/vector_add_static"
run vector_add_shared "$work/vector_add_shared"
run graphs_static "$work/graphs_static"
run cublas_sgemm "$work/cublas_sgemm"
run torch_small python3 "$progs/torch_small.py"
cd "$out" && tar czf export_traces.tgz *.trace && rm -f *.trace
