#!/bin/sh
# Regenerates the report.html screenshots in this directory (report-*.png, 1200x800):
# reports/tests/html.rs's Chromium verdict test renders a GPU pass, a failure, a stand-in
# run, a compile-only run and a merge missing a shard, checks each badge's words and
# colour, and with HRR_WRITE_SCREENSHOTS set saves each page here. Needs chromium
# (apt-get install chromium); fonts differ between machines, so the pixels may too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
HRR_REQUIRE_ALL=1 HRR_WRITE_SCREENSHOTS="$here" \
    cargo test -p hrr-reports --test html -- --exact headless_chromium_shows_each_verdict_in_its_words_and_colour
