#!/usr/bin/env bash
# Runs the all-reduce benchmark (bench/allreduce: cuda-nccl vs PyTorch's all_reduce) on every
# visible GPU, or as the arguments say (`run.sh --devices 2 --max-mib 256`; `--help` lists them).
# Works from the repository (binary from target/oxide/release/) and from the GPU bundle
# (gpu-bundle/bench-allreduce/run.sh, binary and scripts beside it). NCCL is found, and NVLink
# multicast turned off, by nccl-env.sh.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for env in "$HERE/nccl-env.sh" "$HERE/../../scripts/nccl-env.sh"; do
    if [ -f "$env" ]; then
        # shellcheck source=../../scripts/nccl-env.sh
        source "$env"
        break
    fi
done
BIN=""
for candidate in "$HERE/oxide-bench-allreduce" "$HERE/../../target/oxide/release/oxide-bench-allreduce" \
    "$HERE/../../target/release/oxide-bench-allreduce"; do
    if [ -x "$candidate" ]; then BIN="$candidate"; break; fi
done
if [ -z "$BIN" ]; then
    echo "error: no oxide-bench-allreduce binary; build it with" >&2
    echo "  cargo oxide build --release --manifest-path bench/allreduce/Cargo.toml" >&2
    exit 2
fi
exec "$BIN" --torch-script "$HERE/torch_allreduce.py" "$@"
