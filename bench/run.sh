#!/usr/bin/env bash
# Runs the Rust-vs-nvcc benchmark (bench/README.md). Works from the repository (bench/run.sh,
# binary from target/oxide/release/) and from a GPU bundle (gpu-bundle/bench/run.sh, binary beside it).
#   run.sh [--rebuild-cubins] [benchmark options…]   compile missing cubins, then run
#   run.sh --cubins-only                              compile the cubins and stop
# The cubins go to $BENCH_CUBIN_DIR (default: cubin/ beside this script); nvcc is $NVCC, else
# nvcc on PATH, else /usr/local/cuda/bin/nvcc, else the one `cargo oxide setup` installed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CUBIN_DIR="${BENCH_CUBIN_DIR:-$HERE/cubin}"
SOURCES=("$HERE"/cuda/*.cu)

find_nvcc() {
    if [ -n "${NVCC:-}" ]; then echo "$NVCC"; return; fi
    if command -v nvcc >/dev/null; then command -v nvcc; return; fi
    if [ -x /usr/local/cuda/bin/nvcc ]; then echo /usr/local/cuda/bin/nvcc; return; fi
    local wheel
    for wheel in "$HOME"/.cuda-oxide/cuda-*/nvidia/cu13/bin/nvcc; do
        if [ -x "$wheel" ]; then echo "$wheel"; return; fi
    done
    echo "error: no nvcc found (set NVCC=/path/to/nvcc, or copy prebuilt cubins into $CUBIN_DIR)" >&2
    exit 1
}

build_cubins() {
    local nvcc src name
    nvcc="$(find_nvcc)"
    mkdir -p "$CUBIN_DIR"
    "$nvcc" --version | tail -n 2 | head -n 1 > "$CUBIN_DIR/NVCC_VERSION"
    echo "==> compiling ${#SOURCES[@]} CUDA sources with $nvcc ($(cat "$CUBIN_DIR/NVCC_VERSION")) into $CUBIN_DIR" >&2
    for src in "${SOURCES[@]}"; do
        name="$(basename "$src" .cu)"
        # The same flags for the cubin that is timed and the PTX / resource report kept beside it.
        "$nvcc" -O3 -arch=sm_90 -cubin -Xptxas -v -o "$CUBIN_DIR/$name.cubin" "$src" 2> "$CUBIN_DIR/$name.ptxas.txt" \
            || { cat "$CUBIN_DIR/$name.ptxas.txt" >&2; exit 1; }
        "$nvcc" -O3 -arch=sm_90 -ptx -o "$CUBIN_DIR/$name.ptx" "$src"
    done
}

missing_cubins() {
    local src
    for src in "${SOURCES[@]}"; do
        [ -f "$CUBIN_DIR/$(basename "$src" .cu).cubin" ] || return 0
    done
    return 1
}

case "${1:-}" in
    --cubins-only)
        build_cubins
        exit 0
        ;;
    --rebuild-cubins)
        shift
        build_cubins
        ;;
    *)
        if missing_cubins; then build_cubins; fi
        ;;
esac

# cuBLAS (the sgemm128 reference) is loaded at run time by name: add the CUDA toolkit's and the
# Python wheels' library folders, where the GPU hosts keep libcublas.
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, d, "lib") for p in nvidia.__path__ for d in ("cu13", "cublas")))' 2>/dev/null); do
    if [ -d "$dir" ]; then LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir"; fi
done
export LD_LIBRARY_PATH

BIN="${BENCH_BIN:-}"
if [ -z "$BIN" ]; then
    for candidate in "$HERE/oxide-bench" "$HERE/../target/oxide/release/oxide-bench"; do
        if [ -x "$candidate" ]; then BIN="$candidate"; break; fi
    done
fi
if [ -z "$BIN" ]; then
    echo "error: no oxide-bench binary; build it with" >&2
    echo "  cargo oxide build --release --arch sm_90 --manifest-path bench/Cargo.toml" >&2
    exit 1
fi
exec "$BIN" --cubin-dir "$CUBIN_DIR" "$@"
