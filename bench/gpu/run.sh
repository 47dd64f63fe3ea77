#!/usr/bin/env bash
# Capture-overhead and replay-time benchmarks on an NVIDIA GPU (results go into bench/RESULTS.md):
#   bench/gpu/run.sh BIN_DIR [PROGRAM...]   (BIN_DIR holds libhrr_capture.so and hrr-replay;
#   PROGRAM: launch_heavy, copy_heavy, stream_overlap; all three by default)
# Each program runs natively, under capture (default settings, then HRR_CAPTURE_FSYNC=off)
# and replayed, five times each, interleaved; the median wall time (whole process,
# start-up included) is reported with the ratios, and beside it the median of the time
# the program measures around its own loop (start-up and exit excluded).
set -u
bin=$(cd "$1" && pwd)
shift
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(launch_heavy copy_heavy stream_overlap)
cd "$(dirname "$0")"
work=$(mktemp -d)
median() { sort -n | sed -n 3p; }
# Prints "WALL RC LOOP": wall seconds, exit code, and the seconds the program reports
# for its loop ("... in X s").
wall() {
    local s e rc loop
    s=$(date +%s.%N); "$@" > "$work/out" 2>&1; rc=$?; e=$(date +%s.%N)
    cp "$work/out" "$work/last"
    loop=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' "$work/out" | head -1)
    echo "$(python3 -c "print($e - $s)") $rc ${loop:-0}"
}
for prog in "${progs[@]}"; do
    nvcc -cudart shared -O2 -std=c++17 -x cu -arch=sm_90 $prog.cpp -o "$work/$prog" || exit 1
    "$work/$prog"
    nat=(); cap=(); nof=(); rep=(); natl=(); capl=()
    for i in 1 2 3 4 5; do
        read -r t rc l < <(wall "$work/$prog"); nat+=("$t"); natl+=("$l"); [ "$rc" = 0 ] || echo "native exit $rc"
        rm -rf "$work/a"
        read -r t rc l < <(wall env HRR_CAPTURE_OUTPUT="$work/a" LD_PRELOAD="$bin/libhrr_capture.so" "$work/$prog"); cap+=("$t"); capl+=("$l"); [ "$rc" = 0 ] || echo "capture exit $rc"
        # The program's own timers under capture (the last run's), beside the native ones.
        [ "$i" = 5 ] && grep "^$prog:" "$work/last" | sed 's/^/  under capture: /'
        read -r t rc l < <(wall "$bin/hrr-replay" "$work/a"); rep+=("$t"); [ "$rc" = 0 ] || echo "replay exit $rc"
        rm -rf "$work/b"
        read -r t rc l < <(wall env HRR_CAPTURE_OUTPUT="$work/b" HRR_CAPTURE_FSYNC=off LD_PRELOAD="$bin/libhrr_capture.so" "$work/$prog"); nof+=("$t"); [ "$rc" = 0 ] || echo "capture (fsync off) exit $rc"
    done
    n=$(printf '%s\n' "${nat[@]}" | median); c=$(printf '%s\n' "${cap[@]}" | median); r=$(printf '%s\n' "${rep[@]}" | median)
    f=$(printf '%s\n' "${nof[@]}" | median)
    nl=$(printf '%s\n' "${natl[@]}" | median); cl=$(printf '%s\n' "${capl[@]}" | median)
    printf '%-13s native %6.2f s  capture %6.2f s (%.2fx)  fsync off %6.2f s (%.2fx)  replay %6.2f s (%.2fx)  loop %.3f s -> %.3f s (%.2fx)  archive %s\n' \
        "$prog" "$n" "$c" "$(python3 -c "print($c / $n)")" "$f" "$(python3 -c "print($f / $n)")" "$r" "$(python3 -c "print($r / $n)")" \
        "$nl" "$cl" "$(python3 -c "print($cl / max($nl, 1e-9))")" "$(du -sh "$work/a" | cut -f1)"
    "$bin/hrr-replay" "$work/a" | tail -3
done
rm -rf "$work"
