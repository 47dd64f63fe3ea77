#!/usr/bin/env bash
# Capture's cost per kernel launch without a GPU (results go into DESIGN.md):
#   bench/cpu/launch_path.sh LIBHRR_CAPTURE_SO [LAUNCHES]
# A stand-in runtime (fake_cuda.c) makes launches free, so what remains under capture is
# capture's own work per launch: the shim, the kernel-info cache, encoding, the append.
set -eu
so=$(realpath "$1")
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
