#!/usr/bin/env bash
# Builds the GPU tests (tests/gpu/*), the examples, the benchmarks (bench/, bench/allreduce) and a `cargo oxide new` project through `cargo oxide build --release`, stripped,
# into gpu-bundle/ with run.sh, to copy to a GPU host that has no Rust toolchain:
#   scripts/gpu-bundle.sh && scp -r gpu-bundle gpu-host: && ssh gpu-host gpu-bundle/run.sh
# On a host with several GPUs, gpu-bundle/multi-gpu-check.sh runs the multi-GPU programs on all of them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/gpu-bundle"
CARGO_OXIDE="${CARGO_OXIDE:-cargo-oxide}"
ARCH="${GPU_BUNDLE_ARCH:-sm_80,sm_90}"
# Everything builds into the workspace's target dir, so the runtime crates compile once.
export CARGO_TARGET_DIR="$ROOT/target"
RELEASE="$CARGO_TARGET_DIR/oxide/release"

rm -rf "$OUT"
mkdir -p "$OUT/bin"

add() { # add <built binary> <name in the bundle>
    cp "$1" "$OUT/bin/$2"
    if command -v strip >/dev/null; then strip --strip-all "$OUT/bin/$2"; fi
}

# Device artifacts (manifest + payloads) of crate <name>, for load_kernel_module on the GPU host,
# where run.sh points CUDA_OXIDE_ARTIFACT_DIR at artifacts/.
artifacts() { # artifacts <crate name>
    local src="$CARGO_TARGET_DIR/oxide/release/device/$1"
    [ -f "$src/manifest.json" ] || return 0
    mkdir -p "$OUT/artifacts/$1"
    cp "$src/manifest.json" "$OUT/artifacts/$1/"
    cp "$src"/*.ptx "$src"/*.cubin "$OUT/artifacts/$1/" 2>/dev/null || true
    cp "$src"/*.fatbin "$OUT/artifacts/$1/" 2>/dev/null || true
    cp "$src"/*.ltoir "$src"/*.h "$OUT/artifacts/$1/" 2>/dev/null || true
}

for dir in "$ROOT"/tests/gpu/*/; do
    name="$(basename "$dir")"
    [ -f "$dir/Cargo.lock" ] || cp "$ROOT/Cargo.lock" "$dir/Cargo.lock" 2>/dev/null || true
    # A crate that needs particular archs (clusters: sm_90) names them in an `oxide-arch` file.
    arch="$ARCH"
    [ -f "$dir/oxide-arch" ] && arch="$(tr -d '[:space:]' < "$dir/oxide-arch")"
    # One that needs extra artifacts (LTOIR) names them in an `oxide-emit` file.
    emit=()
    [ -f "$dir/oxide-emit" ] && emit=(--emit "$(tr -d '[:space:]' < "$dir/oxide-emit")")
    echo "==> tests/gpu/$name (--arch $arch ${emit[*]})" >&2
    "$CARGO_OXIDE" oxide build --release --quiet --arch "$arch" "${emit[@]}" --manifest-path "$dir/Cargo.toml"
    add "$RELEASE/gpu-$name" "gpu-$name"
    artifacts "gpu_${name//-/_}"
done

# Issue 13's debugging checks (gpu-bundle/debugging/check.sh): the same crate again with full
# device debug information for cuda-gdb (not stripped), its source for the marked lines, and
# cargo-oxide itself, whose sanitize/debug/profile take the prebuilt binaries (--exe).
echo "==> tests/gpu/debugging (--device-debug full, for cuda-gdb)" >&2
"$CARGO_OXIDE" oxide build --quiet --device-debug full --arch sm_90 --manifest-path "$ROOT/tests/gpu/debugging/Cargo.toml"
mkdir -p "$OUT/debugging"
cp "$CARGO_TARGET_DIR/oxide/debug/gpu-debugging" "$OUT/debugging/gpu-debugging-G"
cp "$ROOT/tests/gpu/debugging/src/main.rs" "$ROOT/tests/gpu/debugging/check.sh" "$OUT/debugging/"
cp "$(command -v "$CARGO_OXIDE")" "$OUT/debugging/cargo-oxide"

# The Rust ⇄ CUDA C++ crates again as `cargo oxide debug` builds them (--device-debug full:
# libNVVM -g -opt=0 and nvJitLink -g, unoptimised device code), run by run.sh as `gpu-<name>-G`.
for name in interop-rust-calls-cpp interop-cub; do
    echo "==> tests/gpu/$name (--device-debug full)" >&2
    "$CARGO_OXIDE" oxide build --quiet --device-debug full --arch sm_90 --manifest-path "$ROOT/tests/gpu/$name/Cargo.toml"
    add "$CARGO_TARGET_DIR/oxide/debug/gpu-$name" "gpu-$name-G"
done

for dir in "$ROOT"/examples/*/; do
    [ -f "$dir/Cargo.toml" ] || continue
    name="$(basename "$dir")"
    # An example for one arch (wgmma: sm_90a) names it in `oxide-arch`, as the GPU tests do.
    arch="$ARCH"
    [ -f "$dir/oxide-arch" ] && arch="$(tr -d '[:space:]' < "$dir/oxide-arch")"
    echo "==> examples/$name (--arch $arch)" >&2
    if [ -f "$dir/oxide-cuda-toolkit" ]; then
        # Links the CUDA libraries (candle): a toolkit's CUDA_HOME, else link-time stand-ins.
        cuda_home="${CUDA_HOME:-}"
        nvcc="$cuda_home/bin/nvcc"
        if [ -z "$cuda_home" ] || [ ! -e "$cuda_home/lib64/libcublas.so" ]; then
            # The managed nvcc may be newer than the GPU host's driver, which JIT-compiles candle's
            # PTX: mark it with the ISA of the host's CUDA (driver 580 = CUDA 13.0: 9.0).
            cuda_home="$("$ROOT/scripts/cuda-link-stubs.sh" "$CARGO_TARGET_DIR/cuda-link-stubs" --ptx-isa "${GPU_HOST_PTX_ISA:-9.0}")"
            nvcc="$cuda_home/ptx-isa/nvcc"
            # candle's build script reruns on no change of nvcc and keeps its PTX: PTX of another
            # ISA goes with the package's build.
            for ptx in "$CARGO_TARGET_DIR"/oxide/release/build/candle-kernels-*/out/*.ptx; do
                if [ -f "$ptx" ] && ! grep -qx ".version ${GPU_HOST_PTX_ISA:-9.0}" "$ptx"; then
                    # What `cargo clean -p candle-kernels` removes (it refuses a target dir cargo did not make).
                    rm -rf "$CARGO_TARGET_DIR"/oxide/release/{build,.fingerprint}/candle-kernels-*
                    break
                fi
            done
        fi
        CUDA_HOME="$cuda_home" NVCC="$nvcc" CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}" \
            "$CARGO_OXIDE" oxide build --release --quiet --arch "$arch" --manifest-path "$dir/Cargo.toml"
        add "$RELEASE/$name" "example-$name"
        artifacts "${name//-/_}"
        continue
    fi
    "$CARGO_OXIDE" oxide build --release --quiet --arch "$arch" --manifest-path "$dir/Cargo.toml"
    add "$RELEASE/$name" "example-$name"
    artifacts "${name//-/_}"
done

# The CUDA C++ twin of examples/graph-replay (graph replay vs nvcc's), built here when an nvcc is
# at hand (the managed CUDA tools have one); otherwise the example builds it on the GPU host from
# the source copied beside it, with the host's nvcc.
mkdir -p "$OUT/cuda"
cp "$ROOT/examples/graph-replay/cuda/graph_chain.cu" "$OUT/cuda/"
nvcc="${NVCC:-$(command -v nvcc || ls "${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}"/cuda-*/nvidia/cu13/bin/nvcc 2>/dev/null | sort -V | tail -n 1 || true)}"
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
    echo "==> examples/graph-replay/cuda/graph_chain.cu ($nvcc)" >&2
    "$nvcc" -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
        -o "$OUT/cuda/graph_chain" "$ROOT/examples/graph-replay/cuda/graph_chain.cu"
fi

# The guide's programs (every ```rust block with a `main`, docs/book): tests/tests/book.rs writes
# them as one crate, whose binary runs each and prints PASS/FAIL per block. Clusters: sm_90; the
# test writes the crate's arch into `oxide-arch` (sm_90a when a block uses wgmma).
book_crate="$(mktemp -d)/book-blocks"
cargo build --quiet -p cargo-oxide -p codegen-driver # the debug binaries the test drives
OXIDE_BOOK_CRATE="$book_crate" cargo test --quiet -p oxide-tests --test book every_rust_block >/dev/null
book_arch="$(tr -d '[:space:]' < "$book_crate/oxide-arch")"
echo "==> docs/book programs (--arch $book_arch)" >&2
"$CARGO_OXIDE" oxide build --release --quiet --arch "$book_arch" --manifest-path "$book_crate/Cargo.toml"
add "$RELEASE/book-blocks" "book-programs"
artifacts book_blocks
rm -rf "$(dirname "$book_crate")"

# The Rust-vs-nvcc benchmark goes to bench/ (binary, runner, CUDA sources, cubins when built
# here): run it with gpu-bundle/bench/run.sh; the bundle's run.sh does not.
echo "==> bench (--arch sm_90a: the wgmma GEMM needs it)" >&2
"$CARGO_OXIDE" oxide build --release --quiet --arch sm_90a --manifest-path "$ROOT/bench/Cargo.toml"
mkdir -p "$OUT/bench/cuda"
cp "$RELEASE/oxide-bench" "$ROOT/bench/run.sh" "$OUT/bench/"
if command -v strip >/dev/null; then strip --strip-all "$OUT/bench/oxide-bench"; fi
cp "$ROOT"/bench/cuda/*.cu "$OUT/bench/cuda/"
# The Rust source of the kernels, for `cargo oxide profile --source-folders` (hot lines' text).
mkdir -p "$OUT/bench/src"
cp "$ROOT/bench/src/kernels.rs" "$OUT/bench/src/"
# The bf16 GEMMs are the examples' kernels (their library crates), under their own paths.
for ex in gemm-mma gemm-wgmma-tma gemm; do
    mkdir -p "$OUT/bench/examples/$ex/src"
    cp "$ROOT/examples/$ex/src/lib.rs" "$OUT/bench/examples/$ex/src/"
done
# The CUDA twins are compiled here, fresh, when an nvcc is at hand (the managed CUDA tools have
# one), so the GPU host only runs; otherwise its run.sh compiles them with the host's nvcc.
if "$ROOT/bench/run.sh" --cubins-only; then
    cp -r "$ROOT/bench/cubin" "$OUT/bench/cubin"
else
    echo "(no nvcc here: gpu-bundle/bench/run.sh compiles the CUDA twins on the GPU host)" >&2
fi

# The all-reduce benchmark (cuda-nccl vs PyTorch, bench/allreduce) goes to bench-allreduce/ with its
# PyTorch script; run it with gpu-bundle/bench-allreduce/run.sh (the bundle's run.sh does not).
echo "==> bench/allreduce" >&2
"$CARGO_OXIDE" oxide build --release --quiet --arch "$ARCH" --manifest-path "$ROOT/bench/allreduce/Cargo.toml"
mkdir -p "$OUT/bench-allreduce"
cp "$RELEASE/oxide-bench-allreduce" "$ROOT/bench/allreduce/run.sh" "$ROOT/bench/allreduce/torch_allreduce.py" \
    "$ROOT/scripts/nccl-env.sh" "$OUT/bench-allreduce/"
if command -v strip >/dev/null; then strip --strip-all "$OUT/bench-allreduce/oxide-bench-allreduce"; fi

# NCCL for the programs using cuda-nccl (found on the GPU host: PyTorch's, or CUDA_OXIDE_NCCL_LIB),
# and the multi-GPU runner: every multi-GPU program with N = all visible GPUs.
cp "$ROOT/scripts/nccl-env.sh" "$ROOT/scripts/multi-gpu-check.sh" "$OUT/"

# The project `cargo oxide new` generates must run as generated, too.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Every template: `new`, then build the generated project as it is (a workspace's binary is its
# app crate, named like the project).
for template in vecadd lib async workspace; do
    echo "==> templates/$template (cargo oxide new --template $template)" >&2
    (cd "$tmp" && "$CARGO_OXIDE" oxide new "template-$template" --template "$template")
    cp "$ROOT/Cargo.lock" "$tmp/template-$template/Cargo.lock"
    "$CARGO_OXIDE" oxide build --release --quiet --arch "$ARCH" --manifest-path "$tmp/template-$template/Cargo.toml"
    add "$RELEASE/template-$template" "template-$template"
done

# The Python template: its extension module and its GPU check (against the GPU host's PyTorch),
# run by run.sh through bin/template-python.
echo "==> templates/python (cargo oxide new --template python)" >&2
(cd "$tmp" && "$CARGO_OXIDE" oxide new template-python --template python)
cp "$ROOT/Cargo.lock" "$tmp/template-python/Cargo.lock"
"$CARGO_OXIDE" oxide build --release --quiet --arch "$ARCH" --manifest-path "$tmp/template-python/Cargo.toml"
mkdir -p "$OUT/python"
cp "$RELEASE/python/template_python.abi3.so" "$tmp/template-python/check_gpu.py" "$OUT/python/"
if command -v strip >/dev/null; then strip --strip-unneeded "$OUT/python/template_python.abi3.so"; fi
cat > "$OUT/bin/template-python" <<'PY'
#!/usr/bin/env bash
# The Python template's extension against PyTorch (gpu-bundle/python/check_gpu.py).
cd "$(dirname "${BASH_SOURCE[0]}")/../python" && PYTHONPATH="$PWD" exec python3 check_gpu.py
PY
chmod +x "$OUT/bin/template-python"

# Optional: an nvJitLink as new as the libNVVM that made the bundle's LTOIR, for a GPU host whose
# own is older (the H200's driver 580 ships nvJitLink 13.0; our LTOIR is CUDA 13.5's). Set
# GPU_BUNDLE_NVJITLINK=1 for the one `cargo oxide setup` installed, or to a libnvJitLink.so.13.
# It travels xz-compressed (117 MB → 33 MB; compressed once, kept in the target dir) and run.sh
# unpacks it and points CUDA_OXIDE_NVJITLINK at it unless that is set already.
if [ -n "${GPU_BUNDLE_NVJITLINK:-}" ]; then
    lib="$GPU_BUNDLE_NVJITLINK"
    if [ "$lib" = 1 ]; then # the newest managed install (oxide_contract::toolkit::managed_cuda_root)
        lib="$(ls -d "${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}"/cuda-*/nvidia/cu13/lib/libnvJitLink.so.13 2>/dev/null | sort -V | tail -n 1)"
    fi
    [ -f "$lib" ] || { echo "GPU_BUNDLE_NVJITLINK: no $lib (run \`cargo oxide setup\`, or give its path)" >&2; exit 1; }
    xz_cache="$CARGO_TARGET_DIR/gpu-bundle-nvjitlink/libnvJitLink.so.13.xz"
    if [ ! -f "$xz_cache" ] || [ "$lib" -nt "$xz_cache" ]; then
        echo "==> xz $lib (a few minutes, once)" >&2
        mkdir -p "$(dirname "$xz_cache")"
        xz -6 -T0 -c "$lib" > "$xz_cache.partial" && mv "$xz_cache.partial" "$xz_cache"
    fi
    mkdir -p "$OUT/lib"
    cp "$xz_cache" "$OUT/lib/"
fi

cat > "$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every binary of this bundle; prints PASS/FAIL per binary and `N passed, N failed`.
# Each binary's own PASS/FAIL lines are kept in $LOGS (default logs/) and its checks listed;
# a binary that runs longer than $TIMEOUT seconds (default 180) counts as failed (a hang).
cd "$(dirname "${BASH_SOURCE[0]}")"
# example-candle-op links the CUDA libraries (cuBLAS, cuRAND, the runtime): the toolkit's.
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
# Sideloaded modules (load_kernel_module) are found here, not next to the binaries.
export CUDA_OXIDE_ARTIFACT_DIR="$PWD/artifacts"
# NCCL (named libnccl.so, for cuda-nccl's programs) and NVLink multicast off: nccl-env.sh.
source ./nccl-env.sh
# The nvJitLink the bundle brought (GPU_BUNDLE_NVJITLINK), for linking LTOIR at load time.
if [ -f lib/libnvJitLink.so.13.xz ] && [ -z "${CUDA_OXIDE_NVJITLINK:-}" ]; then
    unpacked="${TMPDIR:-/tmp}/cuda-oxide-bundle-lib"
    mkdir -p "$unpacked"
    [ -f "$unpacked/libnvJitLink.so.13" ] || xz -dc lib/libnvJitLink.so.13.xz > "$unpacked/libnvJitLink.so.13"
    export CUDA_OXIDE_NVJITLINK="$unpacked/libnvJitLink.so.13"
fi
LOGS="${LOGS:-logs}"
mkdir -p "$LOGS"
passed=0
failed=0
for exe in bin/*; do
    name="$(basename "$exe")"
    output="$(timeout "${TIMEOUT:-180}" "$exe" 2>&1)"
    code=$?
    printf '%s\n' "$output" >"$LOGS/$name.log"
    printf '%s\n' "$output" | grep -E '^(PASS|FAIL) ' | sed 's/^/    /'
    if [ "$code" -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        [ "$code" -eq 124 ] && echo "FAIL $name (timed out after ${TIMEOUT:-180} s)" || echo "FAIL $name (exit $code)"
        printf '%s\n' "$output" | tail -n 20 | sed 's/^/    /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
RUN
chmod +x "$OUT/run.sh"
du -sh "$OUT" >&2
echo "gpu-bundle ready: $OUT/run.sh" >&2
