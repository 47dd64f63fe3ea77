#!/usr/bin/env bash
# The C programs replay's stand-in tests run (replay/tests/stand_in/), on a real GPU: each
# built both ways (nvcc's default static runtime and -cudart shared), run natively, under
# capture and replayed:
#   bench/gpu/lookups/stand_in_programs.sh BIN_DIR [NAME...]   (default: every program)
# One line per build: exits (native/capture/replay), whether stdout was unchanged, the event
# count, replay's last line; then capture's warnings and replay's first failure. A program
# that calls functions of a newer runtime than nvcc's is built against $HRR_NEWER_CUDART
# (a libcudart.so.13 path) where set, shared only, and replayed with it.
set -u
bin=$(cd "$1" && pwd); shift
here=$(cd "$(dirname "$0")/../../.." && pwd); src="$here/replay/tests/stand_in"
names=("$@"); [ ${#names[@]} -eq 0 ] && names=($(cd "$src" && ls *.c | sed 's/\.c$//'))
work=$(mktemp -d)
. "$(dirname "$0")/build_report.sh"
for p in "${names[@]}"; do
    for how in static shared newer; do
        exe="$work/${p}_$how"; env=()
        case $how in
            static) cmd=(nvcc -x c -O1 -I"$src" "$src/$p.c" -o "$exe" -lcuda) ;;
            shared) cmd=(nvcc -x c -O1 -cudart shared -I"$src" "$src/$p.c" -o "$exe" -lcuda) ;;
            newer)
                [ -n "${HRR_NEWER_CUDART:-}" ] || continue
                d=$(dirname "$HRR_NEWER_CUDART")
                cmd=(gcc -O1 -I"$src" "$src/$p.c" -o "$exe" -L"$d" -l:libcudart.so.13 -Wl,-rpath,"$d" -lcuda)
                env=(HRR_REPLAY_CUDART="$HRR_NEWER_CUDART") ;;
        esac
        if ! "${cmd[@]}" 2> "$exe.build"; then
            [ $how = newer ] || { echo "$p ($how): does not build"; grep -m3 -E 'error|undefined' "$exe.build" | cut -c1-200 | sed 's/^/    /'; }
            continue
        fi
        "$exe" > "$exe.native" 2>&1; rn=$?
        HRR_CAPTURE_OUTPUT="$exe.a" LD_PRELOAD="$bin/libhrr_capture.so" "$exe" > "$exe.cap" 2> "$exe.caperr"; rc=$?
        env "${env[@]}" timeout 120 "$bin/hrr-replay" "$exe.a" > "$exe.rep" 2>&1; rr=$?
        same=no; diff -q "$exe.native" "$exe.cap" > /dev/null && same=yes
        ev=$(grep -o 'recorded [0-9]* events' "$exe.caperr" | head -1)
        printf '%-26s exits %s/%s/%s  stdout same: %s  %s | %s\n' "$p ($how)" "$rn" "$rc" "$rr" "$same" "$ev" "$(grep -v '^ ' "$exe.rep" | tail -1 | cut -c1-220)"
        build_details "$exe" "${p}_$how" "$rn"
    done
done
