#!/usr/bin/env bash
# The GPU proof a capture or replay change needs, in one call on an NVIDIA machine:
#   bench/gpu/proof.sh TOOLS OUT [STEPS]
# TOOLS holds hrr-harness, hrr-replay, libhrr_capture.so and, for the controls step,
# controls/CONTROL/{libhrr_capture.so,hrr-replay} (made elsewhere with
# `hrr-harness control --all --family sm90 --build-only TOOLS/controls`).
# Controls remove each fix in a git worktree of HEAD, so HEAD must be the tree under test.
# Where the device machine's copy of the repository keeps an older HEAD, export the commit
# (`git archive REV | tar -x -C .proof-src`), carry it with the tools, and run this script
# from inside it after `git init && git add -A && git commit`.
# STEPS is a comma-separated subset of run,controls (default: both). Each step's
# output goes to OUT/<step>.log and its main report files to OUT/<step>-<file> (at most
# a handful of files, so the device tool brings them all back); the full report trees
# stay in a scratch directory. The script exits non-zero when any step did.
set -u
tools=$(cd "$1" && pwd); out=$2; steps=${3:-run,controls}
mkdir -p "$out"
work=$(mktemp -d)
rc=0
has() { case ",$steps," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader | tee "$out/gpu.txt"
if has run; then
    "$tools/hrr-harness" run --family sm90 --tools "$tools" --output "$work/run" 2>&1 | tee "$out/run.log"
    r=${PIPESTATUS[0]}; echo "run exit $r" | tee -a "$out/run.log"; [ "$r" = 0 ] || rc=1
    if command -v xmllint >/dev/null; then
        xmllint --noout --schema reports/schema/junit-10.xsd "$work/run/junit.xml" 2>&1 | tee -a "$out/run.log"
    fi
    cp "$work/run/results.json" "$out/run-results.json" 2>/dev/null
    cp "$work/run/junit.xml" "$out/run-junit.xml" 2>/dev/null
fi
if has controls; then
    "$tools/hrr-harness" control --all --family sm90 --tools "$tools" \
        --prebuilt "$tools/controls" --output "$work/controls" 2>&1 | tee "$out/controls.log"
    r=${PIPESTATUS[0]}; echo "control exit $r" | tee -a "$out/controls.log"; [ "$r" = 0 ] || rc=1
    cp "$work/controls/outcomes.json" "$out/controls-outcomes.json" 2>/dev/null
fi
exit $rc
