#!/usr/bin/env bash
# unified_memory_perf with streams joined by events and snapshots left out for launches in
# flight, on an NVIDIA machine (the sixteenth session's probe, bench/RESULTS.md):
#   bench/gpu/lookups/in_flight_probe.sh TOOLS_DIR
# Most important first: its checks, capture and replay times against native; the sm90
# matrix both builds; the mapped stand-ins; the same with every snapshot taken (the race
# the rule avoids); the NV12 array routes (TOOLS_DIR/nv12_probe.c, where present).
set -u
C=$(cd "${1:?usage: in_flight_probe.sh TOOLS_DIR}" && pwd)
cd "$(dirname "$0")/../../.."
echo "== tools $(cat $C/REV) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
w=$(mktemp -d)
nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/programs/unified_memory_perf.cu -o $w/ump
now() { date +%s.%N; }
t() { local s=$(now); "$@" > $w/out 2>$w/err; local r=$?; awk "BEGIN{printf \"%.2f\", $(now) - $s}"; echo " rc=$r $(grep -o 'recorded.*blobs ([0-9]* bytes)' $w/err | head -1)"; }
echo "native: $(t $w/ump)"; cp $w/out $w/native.out
rm -rf $w/a; echo "capture: $(HRR_CAPTURE_OUTPUT=$w/a LD_PRELOAD=$C/libhrr_capture.so t $w/ump)"; cmp -s $w/out $w/native.out && echo "stdout same" || echo "stdout differs"
grep -v '^hrr-capture: pid [0-9]*: recorded' $w/err | head -5 | cut -c1-250
du -sh $w/a
s=$(now); timeout 200 $C/hrr-replay --profile $w/a > $w/rep 2>$w/reperr; r=$?
echo "replay: rc=$r $(awk "BEGIN{printf \"%.2f\", $(now) - $s}") s"; grep -v '^ ' $w/rep | tail -3 | cut -c1-300; grep -m3 FAILED $w/rep | cut -c1-300; tail -22 $w/reperr | cut -c1-160
for i in 1 2; do
  echo "native: $(t $w/ump)"
  rm -rf $w/b; echo "capture: $(HRR_CAPTURE_OUTPUT=$w/b LD_PRELOAD=$C/libhrr_capture.so t $w/ump)"
done
s=$(now); timeout 200 $C/hrr-replay $w/a > $w/rep 2>&1; r=$?; echo "replay again: rc=$r $(awk "BEGIN{printf \"%.2f\", $(now) - $s}") s $(grep -v '^ ' $w/rep | tail -1 | cut -c1-200)"
echo "== sm90 matrix"
for f in sm90 sm90-static; do
  s=$(date +%s); timeout 150 $C/hrr-harness run --family $f --tools $C > /tmp/h_$f.log 2>&1; r=$?
  echo "$f rc=$r in $(( $(date +%s) - s )) s  $(grep -E '^(PASS|FAIL)' /tmp/h_$f.log | tail -1)"
  grep -E '^\[ *[0-9]+/[0-9]+\] (FAIL|CRASH|TIMEOUT|ERROR)' /tmp/h_$f.log | head -5 | cut -c1-300
done
echo "== stand-ins"
HRR_NEWER_CUDART=$C/cu135/libcudart.so.13 bash bench/gpu/lookups/stand_in_programs.sh $C mapped_pieces mapped_joins 2>&1 | cut -c1-300
echo "== every snapshot (the race the skip avoids)"
rm -rf $w/b; echo "capture every: $(HRR_CAPTURE_SNAPSHOTS=every HRR_CAPTURE_OUTPUT=$w/b LD_PRELOAD=$C/libhrr_capture.so t $w/ump)"
s=$(now); timeout 100 $C/hrr-replay $w/b > $w/rep 2>&1; r=$?; echo "replay every: rc=$r $(awk "BEGIN{printf \"%.2f\", $(now) - $s}") s $(grep -v '^ ' $w/rep | tail -1 | cut -c1-200)"; grep -m3 FAILED $w/rep | cut -c1-300
rm -rf $w
echo "== NV12 routes besides cudaMallocArray"
[ -f $C/nv12_probe.c ] && nvcc -x c $C/nv12_probe.c -o /tmp/nv12 -lcuda -cudart shared && /tmp/nv12 | grep -v "^cudaMallocArray" | head -20
