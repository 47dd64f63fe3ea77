#!/usr/bin/env bash
# Capture's cost per kernel launch without a GPU (results go into bench/RESULTS.md):
#   bench/cpu/launch_path.sh BIN_DIR [LAUNCHES]   (BIN_DIR holds libhrr_capture.so, hrr-replay)
# A stand-in runtime (fake_cuda.c) makes launches free, so what remains under capture is
# capture's own work per launch (the shim, the kernel-info cache, encoding, the append),
# and in replay its own work per launch event (reading, decoding, translating, calling).
set -eu
bin=$(realpath "$1")
so=$bin/libhrr_capture.so
n=${2:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/libcuda.so.1" "$here/fake_cuda.c"
cc -O2 -o "$work/launch_loop" "$here/launch_loop.c" -L"$work" -l:libcuda.so.1 -Wl,-rpath,"$work"
echo "native:        $("$work/launch_loop" "$n")"
for fsync in on off; do
  rm -rf "$work/a"
  echo "capture ($fsync): $(HRR_CAPTURE_OUTPUT="$work/a" HRR_CAPTURE_FSYNC=$fsync LD_PRELOAD="$so" "$work/launch_loop" "$n" 2>/dev/null)  archive $(du -sh "$work/a" | cut -f1)"
done
s=$(date +%s%N)
# No D2H copy to check: replay exits 1 ("nothing was verified"), as it should.
HRR_REPLAY_CUDART="$work/libcuda.so.1" LD_LIBRARY_PATH="$work" "$bin/hrr-replay" "$work/a" > "$work/replay.txt" 2>&1 || true
e=$(date +%s%N)
# Every event replayed (the launches and the few set-up events before them).
read -r done total < <(sed -n 's/^events replayed  : \([0-9]*\) of \([0-9]*\).*/\1 \2/p' "$work/replay.txt")
[ "${done:-0}" = "${total:-x}" ] && [ "$done" -ge "$n" ] || { echo "replay did not replay every event:"; cat "$work/replay.txt"; exit 1; }
echo "replay:        $(( (e - s) / n )) ns per launch event, whole process, over $n launches"
