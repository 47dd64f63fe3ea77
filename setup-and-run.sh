#!/usr/bin/env bash
# One command for a fresh Debian machine: installs the build prerequisites and the GPU
# toolchains Debian has (hipcc for AMD targets, nvcc from pip for NVIDIA ones), builds
# capture, replay and the harness, and runs the main job: `hrr-harness run --family auto`.
set -euo pipefail
cd "$(dirname "$0")"
sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_=sudo
need=()
command -v cc >/dev/null || need+=(build-essential)
command -v curl >/dev/null || need+=(curl)
command -v git >/dev/null || need+=(git)
command -v hipcc >/dev/null || need+=(hipcc libamdhip64-dev rocm-device-libs)
command -v clang++-19 >/dev/null || need+=(clang-19)
command -v python3 >/dev/null || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
[ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
if [ ${#need[@]} -gt 0 ]; then
    $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}"
fi
command -v cargo >/dev/null || { curl -sSf https://sh.rustup.rs | sh -s -- -y; . "$HOME/.cargo/env"; }
# nvcc for NVIDIA case builds, unless the machine has one.
if ! command -v nvcc >/dev/null && [ -z "${NVCC:-}" ]; then
    cuda=target/ci-tools/cuda/nvidia/cu13
    if [ ! -x "$cuda/bin/nvcc" ]; then
        python3 -m pip install -q --disable-pip-version-check --break-system-packages \
            --target target/ci-tools/cuda nvidia-cuda-nvcc nvidia-cuda-cccl nvidia-cuda-runtime
    fi
    [ -e "$cuda/lib/libcudart.so" ] || ln -s libcudart.so.13 "$cuda/lib/libcudart.so"
    export NVCC="$PWD/$cuda/bin/nvcc"
fi
cargo build --release -p hrr-capture -p hrr-replay -p hrr-harness
exec ./target/release/hrr-harness run --family auto
