#!/usr/bin/env bash
# Range capture against whole-program capture (issue 23), on an NVIDIA machine:
#   bench/gpu/lookups/range_capture.sh BIN_DIR
# range_loop.cu (built static: 20 steps; shared: 20 and 200 steps) and torch_mlp_range.py
# each run natively, under
# capture of the whole program, under HRR_CAPTURE_RANGE=profiler and under
# HRR_CAPTURE_RANGE=nvtx:step:10 (range_loop.cu and torch_mlp_nvtx.py mark every step an
# NVTX range "step"); every archive is replayed. One line per capture: exits, output unchanged, events, size (bytes, each
# archive holding its own code objects; with STORE=1 they go to one shared
# HRR_CAPTURE_CODE_STORE and the sizes exclude them), replay's verdict; then capture's
# range lines (snapshot size and time; the set-up it left out as unused).
set -u
bin=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
export CUBLAS_WORKSPACE_CONFIG=:4096:8
[ "${STORE:-0}" = 1 ] && export HRR_CAPTURE_CODE_STORE="$work/store"
if [[ " ${PROGRAMS:-loop torch} " == *" loop "* ]]; then
    nvcc -O2 -std=c++17 -arch=sm_90 "$here/programs/range_loop.cu" -o "$work/range_loop_static" || exit 1
    nvcc -O2 -std=c++17 -arch=sm_90 -cudart shared "$here/programs/range_loop.cu" -o "$work/range_loop_shared" || exit 1
fi
one() {
    local name=$1; shift
    "$@" > "$work/$name.native" 2>&1; local rn=$?
    for how in ${HOWS:-whole range nvtx}; do
        local a="$work/$name.$how"; rm -rf "$a"
        local envs=(HRR_CAPTURE_OUTPUT="$a" LD_PRELOAD="$bin/libhrr_capture.so")
        [ $how = range ] && envs+=(HRR_CAPTURE_RANGE=profiler)
        [ $how = nvtx ] && envs+=(HRR_CAPTURE_RANGE=nvtx:step:10)
        env "${envs[@]}" "$@" > "$a.out" 2> "$a.err"; local rc=$?
        timeout 600 "$bin/hrr-replay" "$a" > "$a.rep" 2>&1; local rr=$?
        local same=no; cmp -s "$work/$name.native" "$a.out" && same=yes
        printf '%-20s %-5s exits %s/%s/%s  stdout same: %s  %s  size %s bytes | %s\n' "$name" "$how" "$rn" "$rc" "$rr" "$same" \
            "$(grep -o 'recorded [0-9]* events' "$a.err" | head -1)" "$(du -sb "$a" | cut -f1)" "$(tail -1 "$a.rep" | cut -c1-160)"
        grep -h "range profiler\|range nvtx\|set-up cut\|warning" "$a.err" | head -3 | sed 's/^/    /'
        grep -m2 "^FAILED" "$a.rep" | cut -c1-240 | sed 's/^/    /'
    done
}
# PROGRAMS="loop torch" (the default) or either alone.
echo "archives under $work"
case " ${PROGRAMS:-loop torch} " in *" loop "*)
    one range_loop_static "$work/range_loop_static"
    one range_loop_shared "$work/range_loop_shared"
    one range_loop_shared_200 "$work/range_loop_shared" 200
esac
case " ${PROGRAMS:-loop torch} " in *" torch "*)
    HOWS="whole range" one torch_mlp_range python3 "$here/programs/torch_mlp_range.py"
    HOWS="whole nvtx" one torch_mlp_nvtx python3 "$here/programs/torch_mlp_nvtx.py"
esac
[ -d "$work/store" ] && echo "code store: $(du -sb "$work/store" | cut -f1) bytes"
