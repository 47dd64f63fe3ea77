#!/usr/bin/env bash
# Capture-overhead and replay-time benchmarks on an NVIDIA GPU (results go into DESIGN.md):
#   bench/gpu/run.sh BIN_DIR      (BIN_DIR holds libhrr_capture.so and hrr-replay)
# Each program runs natively, under capture (default settings, then HRR_CAPTURE_FSYNC=off)
# and replayed, three times each; the median wall time (whole process, start-up
# included) is reported with the ratios.
set -u
bin=$(cd "$1" && pwd)
cd "$(dirname "$0")"
work=$(mktemp -d)
median() { sort -n | sed -n 2p; }
wall() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1; local rc=$?; e=$(date +%s.%N); echo "$(python3 -c "print($e - $s)") $rc"; }
for prog in launch_heavy copy_heavy; do
    nvcc -cudart shared -O2 -std=c++17 -x cu -arch=sm_90 $prog.cpp -o "$work/$prog" || exit 1
    "$work/$prog"
    nat=(); cap=(); nof=(); rep=()
    for i in 1 2 3; do
        read -r t rc < <(wall "$work/$prog"); nat+=("$t"); [ "$rc" = 0 ] || echo "native exit $rc"
        rm -rf "$work/a"
        read -r t rc < <(wall env HRR_CAPTURE_OUTPUT="$work/a" LD_PRELOAD="$bin/libhrr_capture.so" "$work/$prog"); cap+=("$t"); [ "$rc" = 0 ] || echo "capture exit $rc"
        read -r t rc < <(wall "$bin/hrr-replay" "$work/a"); rep+=("$t"); [ "$rc" = 0 ] || echo "replay exit $rc"
        rm -rf "$work/b"
        read -r t rc < <(wall env HRR_CAPTURE_OUTPUT="$work/b" HRR_CAPTURE_FSYNC=off LD_PRELOAD="$bin/libhrr_capture.so" "$work/$prog"); nof+=("$t"); [ "$rc" = 0 ] || echo "capture (fsync off) exit $rc"
    done
    n=$(printf '%s\n' "${nat[@]}" | median); c=$(printf '%s\n' "${cap[@]}" | median); r=$(printf '%s\n' "${rep[@]}" | median)
    f=$(printf '%s\n' "${nof[@]}" | median)
    printf '%-13s native %6.2f s  capture %6.2f s (%.2fx)  fsync off %6.2f s (%.2fx)  replay %6.2f s (%.2fx)  archive %s\n' \
        "$prog" "$n" "$c" "$(python3 -c "print($c / $n)")" "$f" "$(python3 -c "print($f / $n)")" "$r" "$(python3 -c "print($r / $n)")" "$(du -sh "$work/a" | cut -f1)"
    "$bin/hrr-replay" "$work/a" | tail -3
done
rm -rf "$work"
