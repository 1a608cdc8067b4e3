#!/usr/bin/env bash
# What the device code costs to build and to ship: for the bench's kernels (bench/src/kernels.rs
# and the two GEMM examples' crates, whose device times are summed) and for the attention kernel alone, the device build time that
# `cargo oxide build --release` reports ("Device <crate> (… s)", best of 3) and the sizes of the
# PTX, the cubin and the stripped binary — with versioned kernels keeping their own fast copy
# (CUDA_OXIDE_KERNEL_FAST_COPY=1: checked copy + fast copy in the kernel, and the twin) and
# without (the default: checked copy in the kernel, fast copy in the twin only) — next to nvcc's time for the
# same CUDA C++ (bench/cuda/*.cu but the calibration kernel, -O3 -cubin, best of 3). Needs no GPU.
#   bench/build-cost.sh [ARCH]   (default sm_90a: the wgmma GEMM needs it)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ARCH="${1:-sm_90a}"
CARGO_OXIDE="${CARGO_OXIDE:-cargo-oxide}"
NVCC="${NVCC:-$(command -v nvcc || ls "$HOME"/.cuda-oxide/cuda-*/nvidia/cu13/bin/nvcc 2>/dev/null | tail -n 1)}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export CARGO_TARGET_DIR="$WORK/target"

# A crate holding the attention kernel alone (its text cut from bench/src/kernels.rs).
mkdir -p "$WORK/attention/src"
cat > "$WORK/attention/Cargo.toml" <<TOML
[package]
name = "attention-only"
version = "0.1.0"
edition = "2024"

[dependencies]
cuda-device = { path = "$ROOT/runtime/cuda-device" }
cuda-core = { path = "$ROOT/runtime/cuda-core" }
cuda-host = { path = "$ROOT/runtime/cuda-host" }

[workspace]
TOML
python3 - "$ROOT/bench/src/kernels.rs" > "$WORK/attention/src/main.rs" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
consts = "\n".join(l for l in src.splitlines() if re.match(r"(pub )?const (ATT_\w+)", l))
start = src.index("    /// Scaled dot-product attention")
end = src.index("\n    }\n", src.index("pub fn attention(")) + 7
print("#![allow(clippy::needless_range_loop)]")
print("use cuda_device::vector::F32x4;\nuse cuda_device::{SharedMemory, cuda_module, kernel, launch_bounds, sync_threads, thread, warp};")
print(consts)
print("#[cuda_module]\npub mod kernels {\n    use super::*;\n" + src[start:end] + "}\nfn main() {}")
PY

# device_time <manifest dir> <sources to touch…>: best of 3 device builds of the crates those
# sources belong to (their "Device … (… s)" times summed; other dependencies are not rebuilt).
device_time() {
    local dir="$1" best="" t
    shift
    for _ in 1 2 3; do
        touch "$@"
        t=$("$CARGO_OXIDE" oxide build --release --arch "$ARCH" --manifest-path "$dir/Cargo.toml" 2>&1 |
            sed -n 's/.*Device [a-z_]* ([^)]*, \([0-9.]*\)s).*/\1/p' | python3 -c "import sys; print(sum(float(x) for x in sys.stdin))")
        [ "$t" != 0 ] || { echo "error: no device build in $dir" >&2; exit 1; }
        best=$(python3 -c "print(min(float('$t'), float('${best:-1e9}')))")
    done
    echo "$best"
}

sizes() {
    local crate="$1" bin="$2" dev="$CARGO_TARGET_DIR/oxide/release/device/$1"
    local ptx cubin binary
    ptx=$(stat -c %s "$dev/$crate.$ARCH.ptx")
    cubin=$(stat -c %s "$dev/$crate.$ARCH.cubin")
    strip -o "$WORK/stripped" "$CARGO_TARGET_DIR/oxide/release/$bin"
    binary=$(stat -c %s "$WORK/stripped")
    echo "$ptx $cubin $binary"
}

nvcc_time() {
    local best="" t start
    for _ in 1 2 3; do
        start=$(date +%s.%N)
        for cu in "$@"; do "$NVCC" -O3 -arch="$ARCH" -cubin -o "$WORK/x.cubin" "$cu"; done
        t=$(python3 -c "import time; print(round(time.time() - $start, 2))")
        best=$(python3 -c "print(min(float('$t'), float('${best:-1e9}')))")
    done
    echo "$best"
}

printf '%-34s %10s %10s %10s %12s\n' "build ($ARCH)" "device s" "PTX KB" "cubin KB" "binary KB"
for copies in 3 2; do
    if [ "$copies" = 3 ]; then export CUDA_OXIDE_KERNEL_FAST_COPY=1; else export CUDA_OXIDE_KERNEL_FAST_COPY=0; fi
    for subject in bench attention; do
        if [ "$subject" = bench ]; then
            dir="$ROOT/bench" crate=oxide_bench bin=oxide-bench
            sources=("$ROOT/bench/src/main.rs" "$ROOT/examples/gemm-mma/src/lib.rs" "$ROOT/examples/gemm-wgmma-tma/src/lib.rs")
        else
            dir="$WORK/attention" crate=attention_only bin=attention-only sources=("$WORK/attention/src/main.rs")
        fi
        t=$(device_time "$dir" "${sources[@]}")
        read -r ptx cubin binary < <(sizes "$crate" "$bin")
        printf '%-34s %10s %10d %10d %12d\n' "$subject, $copies copies of a versioned body" "$t" $((ptx / 1024)) $((cubin / 1024)) $((binary / 1024))
    done
done
cus=()
for cu in "$ROOT"/bench/cuda/*.cu; do [ "$(basename "$cu")" = calibrate.cu ] || cus+=("$cu"); done
printf '%-34s %10s\n' "nvcc, bench/cuda/*.cu" "$(nvcc_time "${cus[@]}")"
printf '%-34s %10s\n' "nvcc, bench/cuda/attention.cu" "$(nvcc_time "$ROOT/bench/cuda/attention.cu")"
