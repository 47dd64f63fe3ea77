#!/usr/bin/env bash
# Capture's events per device, asked for every open launch, on an NVIDIA machine (the
# seventeenth session's probe, bench/RESULTS.md):
#   bench/gpu/lookups/events_probe.sh TOOLS_DIR
# Most important first: the sm90 matrix both builds; mapped_joins.c's unobserved shapes
# ("unseen": finished by a blocking copy; "gone": its stream destroyed since; "racy": a
# race on a GPU, a stand-in shape) natively, captured and replayed; unified_memory_perf's
# checks and times; mapped_pieces.
set -u
C=$(cd "${1:?usage: events_probe.sh TOOLS_DIR}" && pwd)
cd "$(dirname "$0")/../../.."
echo "== tools $(cat $C/REV) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
w=$(mktemp -d)
for f in sm90 sm90-static; do
  s=$(date +%s); timeout 90 $C/hrr-harness run --family $f --tools $C > $w/h_$f.log 2>&1; r=$?
  echo "$f rc=$r in $(( $(date +%s) - s )) s  $(grep -E '^(PASS|FAIL)' $w/h_$f.log | tail -1 | cut -c1-100)"
  grep -E '^\[ *[0-9]+/[0-9]+\] (FAIL|CRASH|TIMEOUT|ERROR)' $w/h_$f.log | head -4 | cut -c1-300
done
src=replay/tests/stand_in
nvcc -x c -O1 -cudart shared -I$src $src/mapped_joins.c -o $w/mj -lcuda
for a in unseen gone racy; do
  $w/mj $a > $w/mj.n 2>&1; rn=$?
  rm -rf $w/m; HRR_CAPTURE_OUTPUT=$w/m LD_PRELOAD=$C/libhrr_capture.so $w/mj $a > $w/mj.c 2>$w/mj.e; rc=$?
  timeout 60 $C/hrr-replay $w/m > $w/mj.r 2>&1; rr=$?
  echo "mapped_joins $a exits $rn/$rc/$rr same=$(cmp -s $w/mj.n $w/mj.c && echo yes || echo no) $(grep -E '^(PASS|FAIL)' $w/mj.r | tail -1 | cut -c1-200)"; grep -m2 -A3 FAILED $w/mj.r | cut -c1-300; grep -v recorded $w/mj.e | head -3
done
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/programs/unified_memory_perf.cu -o $w/ump
now() { date +%s.%N; }
t() { local s=$(now); "$@" > $w/out 2>$w/err; local r=$?; awk "BEGIN{printf \"%.2f\", $(now) - $s}"; echo " rc=$r $(grep -o 'recorded.*blobs ([0-9]* bytes)' $w/err | head -1)"; }
echo "native: $(t $w/ump)"; cp $w/out $w/native.out
echo "capture: $(HRR_CAPTURE_OUTPUT=$w/a LD_PRELOAD=$C/libhrr_capture.so t $w/ump)"; cmp -s $w/out $w/native.out && echo "stdout same" || echo "stdout differs"
grep -v '^hrr-capture: pid [0-9]*: recorded' $w/err | head -4 | cut -c1-250
s=$(now); timeout 60 $C/hrr-replay $w/a > $w/rep 2>&1; r=$?; echo "replay: rc=$r $(awk "BEGIN{printf \"%.2f\", $(now) - $s}") s $(grep -v '^ ' $w/rep | tail -1 | cut -c1-200)"; grep -m3 FAILED $w/rep | cut -c1-300
echo "native: $(t $w/ump)"
rm -rf $w/b; echo "capture: $(HRR_CAPTURE_OUTPUT=$w/b LD_PRELOAD=$C/libhrr_capture.so t $w/ump)"
HRR_NEWER_CUDART=$C/cu135/libcudart.so.13 bash bench/gpu/lookups/stand_in_programs.sh $C mapped_pieces 2>&1 | cut -c1-300
rm -rf $w
