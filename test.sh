#!/usr/bin/env bash
# The README's test command: `cargo test --workspace` (arguments go on to it:
# `./test.sh --no-fail-fast`; with `-p PACKAGE` that package instead of the workspace),
# then every test, or part of one, that did not run here, and why. A test that does without something says so through
# hrr-testkit, which prints a SKIPPED line and records it in $HRR_TEST_SKIPS (cleared
# here first, so the list is this run's). Under CI=true or HRR_REQUIRE_ALL=1 a missing
# tool fails its test instead; what can still be listed then is what the machine decides
# (a GPU or none, user namespaces). The exit status is cargo test's.
set -uo pipefail
cd "$(dirname "$0")"
skips="${CARGO_TARGET_DIR:-target}/hrr-test-skips"
rm -rf "$skips"
mkdir -p "$skips"
HRR_TEST_SKIPS="$(cd "$skips" && pwd)"
export HRR_TEST_SKIPS
scope=(--workspace)
for a in "$@"; do
    case "$a" in
        --) break ;;
        -p | -p?* | --package | --package=*) scope=() ;;
    esac
done
rc=0
# Tests share the debug capture library and replay binary (the harness's end-to-end tests
# run them and build nothing themselves): a whole-workspace run builds them; a run of one
# package builds them first.
if [ ${#scope[@]} -eq 0 ]; then
    cargo build -q -p hrr-capture -p hrr-replay || exit $?
fi
cargo test ${scope[@]+"${scope[@]}"} "$@" || rc=$?
lines="$(cat "$skips"/*.txt 2>/dev/null | sort)"
echo
if [ -z "$lines" ]; then
    echo "test.sh: nothing skipped: every test ran in full"
else
    count() { grep -c "^SKIPPED \[$1\]" <<<"$lines" || true; }
    echo "test.sh: $(wc -l <<<"$lines") skip(s): $(count tool) for a missing tool" \
        "(./setup-and-run.sh or .ci/install installs them), $(count gpu) for what the GPU" \
        "is or is not, $(count machine) for what the machine allows or declares:"
    printf '%s\n' "$lines"
fi
exit "$rc"
