#!/usr/bin/env bash
# One command for a fresh Debian machine: installs the build prerequisites, builds
# capture and replay, writes a sample archive and shows it with `hrr-replay --info`.
# Once the harness lands this becomes `hrr-harness run --family auto`.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cc >/dev/null || ! command -v cargo >/dev/null; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_=sudo
    $sudo_ apt-get update -qq
    $sudo_ apt-get install -y -qq build-essential curl ca-certificates
    command -v cargo >/dev/null || { curl -sSf https://sh.rustup.rs | sh -s -- -y; . "$HOME/.cargo/env"; }
fi
cargo build --release --workspace
out=$(mktemp -d)/sample-archive
cargo run --release -q -p hrr-archive --example sample_archive "$out"
./target/release/hrr-replay --info "$out"
echo
echo "Capture a real program:  HRR_CAPTURE_OUTPUT=DIR LD_PRELOAD=$PWD/target/release/libhrr_capture.so ./your-program"
echo "Replay it on a GPU:      ./target/release/hrr-replay DIR"
