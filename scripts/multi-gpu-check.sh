#!/usr/bin/env bash
# Runs the multi-GPU programs with N = every visible GPU (and N = 2 when there are more), for the
# machines with several GPUs: tests/gpu/multi-gpu (`--devices all`), examples/data-parallel (all
# GPUs, checked against GPU 0 alone and the CPU) and the all-reduce benchmark (its table).
# Prints PASS/FAIL per program and `N passed, N failed`; exit status 0 when all passed.
#   from the GPU bundle:   gpu-bundle/multi-gpu-check.sh
#   from the repository:   scripts/multi-gpu-check.sh   (after `scripts/gpu-bundle.sh`, or after
#                          building the three with `cargo oxide build --release`)
# NVLink multicast stays off (nccl-env.sh sets NCCL_NVLS_ENABLE=0 and PyTorch's and NVSHMEM's
# switches; cuda-nccl sets NCCL's itself too).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -d "$HERE/bin" ]; then # the bundle
    TEST="$HERE/bin/gpu-multi-gpu"
    EXAMPLE="$HERE/bin/example-data-parallel"
    BENCH="$HERE/bench-allreduce/run.sh"
    export CUDA_OXIDE_ARTIFACT_DIR="$HERE/artifacts"
else # the repository
    RELEASE="$HERE/../target/oxide/release"
    TEST="$RELEASE/gpu-multi-gpu"
    EXAMPLE="$RELEASE/data-parallel"
    BENCH="$HERE/../bench/allreduce/run.sh"
fi
# shellcheck source=nccl-env.sh
source "$HERE/nccl-env.sh"

gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
echo "== ${gpus:-?} GPU(s) visible"
nvidia-smi topo -m 2>/dev/null || true
LOGS="${LOGS:-multi-gpu-logs}"
mkdir -p "$LOGS"
passed=0
failed=0
run() { # run <name> <command...>
    local name="$1" code
    shift
    echo "==> $name: $*"
    timeout "${TIMEOUT:-900}" "$@" 2>&1 | tee "$LOGS/$name.log"
    code="${PIPESTATUS[0]}"
    if [ "$code" -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        [ "$code" -eq 124 ] && echo "FAIL $name (timed out)" || echo "FAIL $name (exit $code)"
    fi
}
run gpu-multi-gpu-all "$TEST" --devices all
if [ "${gpus:-0}" -gt 2 ]; then
    run gpu-multi-gpu-2 "$TEST" --devices 2
fi
run data-parallel-all "$EXAMPLE"
run bench-allreduce "$BENCH"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
