#!/usr/bin/env bash
# The README's test command: builds the whole workspace and runs every test,
# the end-to-end pipeline tests on the CPU runtime included (tests/e2e).
#
#   scripts/test.sh [cargo test args…]     e.g. scripts/test.sh -- seed
#
# Needs: Rust (cargo), gcc, and Debian's HIP/HSA headers
# (apt-get install gcc libamdhip64-dev libhsa-runtime-dev). No GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

prereqs() {
    local missing=()
    command -v gcc >/dev/null 2>&1 || missing+=(gcc)
    [ -f /usr/include/hip/hip_runtime_api.h ] || missing+=(libamdhip64-dev)
    [ -f /usr/include/hsa/hsa_ext_amd.h ] || missing+=(libhsa-runtime-dev)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "test.sh: missing prerequisites: ${missing[*]}" >&2
        echo "test.sh: install them with: sudo apt-get install ${missing[*]}" >&2
        exit 2
    fi
    if ! command -v cargo >/dev/null 2>&1; then
        echo "test.sh: cargo not found: install Rust (https://rustup.rs or apt-get install cargo)" >&2
        exit 2
    fi
}
prereqs

echo "+ cargo build --workspace"
cargo build --workspace
echo "+ cargo test --workspace --no-fail-fast $*"
cargo test --workspace --no-fail-fast "$@"
