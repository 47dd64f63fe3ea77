#!/usr/bin/env bash
# The cost of capture on a PyTorch program (issue 21's target: the MLP loop at most 1.2x
# its native time, whole process, median of 5), on an NVIDIA machine with PyTorch:
#   bench/gpu/lookups/torch_cost.sh BIN_DIR [SCRIPT] [RUNS]
# SCRIPT defaults to bench/gpu/programs/torch_mlp.py, RUNS to 5. Native and captured runs
# alternate; each line is one pair; then the medians, their ratio, and the archive's size
# (whole, code objects, blobs). With HRR_CAPTURE_CODE_STORE set, the store's size too.
set -u
bin=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
script=${2:-$here/../programs/torch_mlp.py}; runs=${3:-5}
work=$(mktemp -d)
export CUBLAS_WORKSPACE_CONFIG=:4096:8
secs() { python3 -c 'import sys,time,subprocess; s=time.monotonic(); r=subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print("%.2f %d" % (time.monotonic()-s, r))' "$@"; }
nat=(); cap=()
for i in $(seq "$runs"); do
    read -r n rn < <(secs python3 "$script")
    rm -rf "$work/a"
    read -r c rc < <(secs env HRR_CAPTURE_OUTPUT="$work/a" LD_PRELOAD="$bin/libhrr_capture.so" python3 "$script")
    echo "run $i: native $n s (exit $rn)  capture $c s (exit $rc)"
    nat+=("$n"); cap+=("$c")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mn=$(med "${nat[@]}"); mc=$(med "${cap[@]}")
echo "median native $mn s  capture $mc s  ratio $(python3 -c "print('%.2fx' % ($mc/$mn))")"
echo "archive: $(du -sh "$work/a" | cut -f1) whole, $(du -shc "$work"/a/pid-*/code_objects 2>/dev/null | tail -1 | cut -f1) code objects, $(du -shc "$work"/a/pid-*/blobs 2>/dev/null | tail -1 | cut -f1) blobs"
[ -n "${HRR_CAPTURE_CODE_STORE:-}" ] && echo "code store: $(du -sh "$HRR_CAPTURE_CODE_STORE" | cut -f1) at $HRR_CAPTURE_CODE_STORE"
"$bin/hrr-replay" "$work/a" 2>&1 | tail -1
