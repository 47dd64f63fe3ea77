#!/usr/bin/env bash
# Real-program shapes on an NVIDIA GPU: each program in programs/ (cuda-samples shapes,
# a small PyTorch script) runs natively, under capture, and replayed; one row each:
#   bench/gpu/programs.sh BIN_DIR [OUT_DIR]
# BIN_DIR holds libhrr_capture.so and hrr-replay. A row gives the whole-process times and
# ratios, whether capture left the program's exit code and stdout unchanged (timings
# masked), and replay's exit and verdict line. Ends with the geometric means of the
# ratios over the programs that ran under capture, and the worst ratio.
set -u
bin=$(cd "$1" && pwd); out=${2:-$(mktemp -d)}; mkdir -p "$out"
cd "$(dirname "$0")/programs"
work=$(mktemp -d)
now() { date +%s.%N; }
mask() { sed -E 's/[0-9]+\.[0-9]+ ?ms/N ms/g' "$1"; }
rows="$work/rows"; : > "$rows"
printf '%-22s %8s %8s %7s %8s %7s  %-9s  %s\n' program native capture ratio replay ratio unchanged "replay verdict"
run_one() {
    local name=$1; shift
    local t0 t1 t2 t3 t4 rn rc rr same verdict
    t0=$(now); "$@" > "$work/$name.native" 2>&1; rn=$?; t1=$(now)
    rm -rf "$work/$name.a"
    HRR_CAPTURE_OUTPUT="$work/$name.a" LD_PRELOAD="$bin/libhrr_capture.so" "$@" > "$work/$name.capture" 2> "$work/$name.capture.err"; rc=$?; t2=$(now)
    # A program whose result legitimately varies is replayed several times: bytes that
    # differ between the replays are excluded and listed (issue 13 §3), never passed.
    local rargs=()
    case $name in atomics_float_sum) rargs=(--stability-runs 4) ;; esac
    t3=$(now); "$bin/hrr-replay" "$work/$name.a" ${rargs[@]+"${rargs[@]}"} --json "$out/$name.json" > "$work/$name.replay" 2>&1; rr=$?; t4=$(now)
    if [ "$rn" = "$rc" ] && diff -q <(mask "$work/$name.native") <(mask "$work/$name.capture") >/dev/null; then same=yes; else same="NO($rn/$rc)"; fi
    verdict=$(tail -1 "$work/$name.replay" | cut -c1-100)
    python3 - "$name" "$t0" "$t1" "$t2" "$t3" "$t4" "$same" "$rr" "$verdict" >> "$rows" <<'PY'
import sys
n, t0, t1, t2, t3, t4, same, rr, verdict = sys.argv[1:]
nat, cap, rep = float(t1) - float(t0), float(t2) - float(t1), float(t4) - float(t3)
print(f"{n:<22} {nat:7.2f}s {cap:7.2f}s {cap/nat:6.2f}x {rep:7.2f}s {rep/nat:6.2f}x  {same:<9}  exit {rr}: {verdict}")
PY
    tail -1 "$rows"
    grep -m1 '^FAILED seq' "$work/$name.replay" | cut -c1-160 | sed 's/^/    first failure: /'
    grep -m2 '^UNSTABLE seq' "$work/$name.replay" | cut -c1-160 | sed 's/^/    /'
    cp "$work/$name.native" "$out/$name.native.txt"; cp "$work/$name.capture" "$out/$name.capture.txt"
    cp "$work/$name.capture.err" "$out/$name.capture-stderr.txt"; cp "$work/$name.replay" "$out/$name.replay.txt"
}
for src in *.cu; do
    name=${src%.cu}
    case $name in *_kernel) continue ;; esac
    extra=(); args=()
    # The libraries a program calls beyond the runtime: cuBLAS, the driver.
    case $name in cublas_*) extra=(-lcublas) ;; pools_memsets) extra=(-lcuda) ;; esac
    if [ "$name" = vector_add_drv ]; then
        nvcc -fatbin -arch=sm_90 vector_add_drv_kernel.cu -o "$work/vector_add_drv_kernel.fatbin" || continue
        extra=(-lcuda); args=("$work/vector_add_drv_kernel.fatbin")
    fi
    if ! nvcc -cudart shared -O2 -std=c++17 -arch=sm_90 "$src" -o "$work/$name" "${extra[@]}" 2> "$work/$name.build"; then
        echo "$name: does not build: $(head -3 "$work/$name.build")"; continue
    fi
    run_one "$name" "$work/$name" "${args[@]}"
done
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    run_one torch_small python3 torch_small.py
fi
python3 - "$rows" <<'PY'
import sys, math, re
cap, rep = [], []
for line in open(sys.argv[1]):
    r = re.findall(r"([0-9.]+)x", line)
    if len(r) != 2: continue
    cap.append((float(r[0]), line.split()[0]))
    # A replay that refused or failed did not replay the program: its time is no ratio.
    if "exit 0:" in line and float(r[1]) > 0: rep.append((float(r[1]), line.split()[0]))
g = lambda v: math.exp(sum(math.log(x) for x, _ in v) / len(v))
if cap:
    print(f"geometric mean over {len(cap)} programs under capture: {g(cap):.2f}x; worst {max(cap)[0]:.2f}x ({max(cap)[1]})")
if rep:
    print(f"geometric mean over {len(rep)} programs replayed to a verdict: {g(rep):.2f}x; worst {max(rep)[0]:.2f}x ({max(rep)[1]})")
PY
rm -rf "$work"
