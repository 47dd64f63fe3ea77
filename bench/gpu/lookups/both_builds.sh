#!/usr/bin/env bash
# Programs of bench/gpu/programs on an NVIDIA machine, each built both ways (nvcc's default
# static runtime and -cudart shared), run natively, under capture and replayed, timed:
#   bench/gpu/lookups/both_builds.sh BIN_DIR NAME... [-- REPLAY_FLAGS...]
# One line per build: exits (native/capture/replay), seconds of each, whether stdout was
# unchanged, the event count, replay's last line; then capture's warnings and replay's
# first failure; with OUT set, each build's replay output and capture's stderr are
# copied there. Replay gets $HRR_BENCH_REPLAY_TIMEOUT seconds (default 300).
set -u
bin=$(cd "$1" && pwd); shift
names=(); while [ $# -gt 0 ] && [ "$1" != "--" ]; do names+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")/.." && pwd); work=$(mktemp -d)
. "$(dirname "$0")/build_report.sh"
now() { date +%s.%N; }
for p in "${names[@]}"; do
    for how in static shared; do
        flags=(); [ $how = shared ] && flags=(-cudart shared)
        exe="$work/${p}_$how"
        if ! nvcc -O2 -std=c++17 -arch=sm_90 "${flags[@]}" "$here/programs/$p.cu" -o "$exe" 2> "$work/build.err"; then
            echo "$p ($how): does not build"; head -5 "$work/build.err"; continue
        fi
        t=$(now); "$exe" > "$exe.native" 2>&1; rn=$?; tn=$(awk "BEGIN{print $(now) - $t}")
        t=$(now); HRR_CAPTURE_OUTPUT="$exe.a" LD_PRELOAD="$bin/libhrr_capture.so" "$exe" > "$exe.cap" 2> "$exe.caperr"; rc=$?; tc=$(awk "BEGIN{print $(now) - $t}")
        t=$(now); timeout "${HRR_BENCH_REPLAY_TIMEOUT:-300}" "$bin/hrr-replay" "$@" "$exe.a" > "$exe.rep" 2>&1; rr=$?; tr=$(awk "BEGIN{print $(now) - $t}")
        same=no; diff -q "$exe.native" "$exe.cap" > /dev/null && same=yes
        ev=$(grep -o 'recorded [0-9]* events' "$exe.caperr" | head -1)
        printf '%-28s exits %s/%s/%s  s %.2f/%.2f/%.2f  stdout same: %s  %s | %s\n' "$p ($how)" "$rn" "$rc" "$rr" "$tn" "$tc" "$tr" "$same" "$ev" "$(grep -v '^ ' "$exe.rep" | tail -1 | cut -c1-200)"
        build_details "$exe" "${p}_$how" "$rn"
    done
done
