#!/usr/bin/env bash
# One command for a fresh Debian machine: installs the build prerequisites, the GPU
# toolchains Debian has (hipcc for AMD targets, nvcc from pip for NVIDIA ones) and every
# other tool the tests use (.ci/install, shared with CI), builds
# capture, replay and the harness, and runs the main job: `hrr-harness run --family auto`
# on a machine with a GPU; on one without, it says so, compiles the family's cases and runs
# them against the stand-in runtime of standin/ (capture -> archive -> replay -> JUnit over
# host memory, no kernel run), labelled stand-in, never a GPU pass.
set -euo pipefail
cd "$(dirname "$0")"
# Everything the tests use too (.ci/install, which CI runs): afterwards ./test.sh runs
# every GPU-free test here.
.ci/install
export PATH="$HOME/.cargo/bin:$PATH"
# nvcc for NVIDIA case builds: the machine's, else the pip wheel .ci/install put here.
if ! command -v nvcc >/dev/null && [ -z "${NVCC:-}" ]; then
    export NVCC="$PWD/target/ci-tools/cuda/nvidia/cu13/bin/nvcc"
fi
cargo build --release -p hrr-capture -p hrr-replay -p hrr-harness
# A GPU the runtimes can use: nvidia-smi lists one, or the AMD KFD topology has a GPU node.
gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    gpu="NVIDIA: $(nvidia-smi -L | head -n 1)"
fi
if [ -e /dev/kfd ] && grep -qs '^gfx_target_version [1-9]' /sys/class/kfd/kfd/topology/nodes/*/properties; then
    gpu="${gpu:+$gpu; }AMD: $(grep -hs '^gfx_target_version [1-9]' /sys/class/kfd/kfd/topology/nodes/*/properties | head -n 1)"
fi
if [ -n "$gpu" ]; then
    echo "setup-and-run: GPU found ($gpu): running its family"
    exec ./target/release/hrr-harness run --family auto
fi
echo "setup-and-run: NO GPU FOUND on this machine (nvidia-smi lists none, no AMD KFD GPU node):"
echo "setup-and-run: no GPU result can come from here. Running the family's cases against the STAND-IN runtime instead:"
echo "setup-and-run: each case is compiled, captured, archived and replayed through standin/ (host memory, no kernel runs)."
rc=0
./target/release/hrr-harness run --family auto --stand-in || rc=$?
echo "setup-and-run: STAND-IN run, no GPU used: it proves capture -> archive -> replay -> JUnit work here, not any GPU result (exit $rc)."
exit "$rc"
