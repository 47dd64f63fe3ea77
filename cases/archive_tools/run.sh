#!/bin/sh
# archive_tools: hrr-replay's GPU-free commands against a committed archive (written by
# `cargo run -p hrr-archive --example sample_archive`): --version, --info as JSON, --events,
# a torn event log reported as truncated, repaired (every whole record kept, the original
# kept beside it, still incomplete since its end was lost), and a damaged archive refused
# with exit 2. Needs no GPU; the harness runs it on every family.
set -u
cd "$(dirname "$0")"
replay=${HRR_REPLAY:?set by hrr-harness}
out=${HRR_CASE_OUTPUT:?set by hrr-harness}
fail() { echo "archive_tools: FAILED: $*"; exit 1; }

"$replay" --version | grep -q "archive format version 2" || fail "--version does not name the archive format"

cp -r fixture "$out/good"
"$replay" --info --json "$out/good" > "$out/info.json" || fail "--info exited $?"
grep -q '"complete": true' "$out/info.json" || fail "--info does not report the fixture complete"
grep -q '"Memcpy": 2' "$out/info.json" || fail "--info does not count 2 Memcpy events"
[ "$("$replay" --events "$out/good" | wc -l)" -eq 4 ] || fail "--events does not list 4 events"

# Tear the log: cut the trailer and half of the last record.
cp -r fixture "$out/torn"
log=$(ls "$out"/torn/pid-*/events.bin)
size=$(wc -c < "$log")
truncate -s $((size - 40)) "$log"
"$replay" --info --json "$out/torn" > "$out/torn.json"
grep -q '"status": "truncated"' "$out/torn.json" || fail "a torn log is not reported truncated"
"$replay" --repair "$out/torn" > "$out/repair.txt" || fail "--repair exited $?"
grep -q "kept 4 events, dropped 12 bytes after the last whole record; still incomplete" "$out/repair.txt" \
    || fail "--repair does not say what it kept and lost: $(cat "$out/repair.txt")"
[ -f "$(dirname "$log")/events.bin.before-repair" ] || fail "--repair did not keep the original log"
"$replay" --info --json "$out/torn" > "$out/repaired.json"
grep -q '"complete": false' "$out/repaired.json" || fail "a repaired archive that lost its end is called complete"
grep -q '"repaired": true' "$out/repaired.json" || fail "the repaired archive is not marked repaired"
[ "$("$replay" --events "$out/torn" | wc -l)" -eq 4 ] || fail "the repaired archive does not list its 4 events"

# Damage: a wrong format version must be refused with exit 2, naming both versions.
cp -r fixture "$out/bad"
sed -i 's/"format_version": 2/"format_version": 99/' "$out/bad/manifest.json"
"$replay" --info "$out/bad" > "$out/bad.txt" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "an archive of format 99 gave exit $rc, expected 2"
grep -q "99" "$out/bad.txt" || fail "the refusal does not name version 99"
echo "archive_tools: ok"
