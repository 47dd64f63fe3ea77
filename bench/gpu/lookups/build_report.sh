# Sourced by both_builds.sh and stand_in_programs.sh: what follows a build's one-line
# summary. `build_details EXE NAME NATIVE_EXIT` prints capture's first warnings, replay's
# first failure and, for a native failure, the program's first lines; with OUT set, copies
# replay's output and capture's stderr there as NAME.replay.txt and
# NAME.capture-stderr.txt (the device tool brings that folder back); removes the archive.
build_details() {
    local exe=$1 name=$2 rn=$3
    grep -m3 'warning' "$exe.caperr" | cut -c1-220 | sed 's/^/    /'
    grep -m2 -E '^(FAILED|REFUSED|refused|error)' "$exe.rep" | cut -c1-300 | sed 's/^/    /'
    [ "$rn" -ne 0 ] && head -3 "$exe.native" | sed 's/^/    native: /'
    [ -n "${OUT:-}" ] && cp "$exe.rep" "$OUT/$name.replay.txt" && cp "$exe.caperr" "$OUT/$name.capture-stderr.txt"
    rm -rf "$exe.a"
}
