#!/usr/bin/env bash
# A CUDA_HOME for building programs that LINK the CUDA libraries (candle: its cudarc links
# libcuda, libcublas, libcublasLt, libcurand and libnvrtc, candle-kernels libcudart) on a machine
# without them, like this project's build machine. Nothing here runs on a GPU:
#   - lib64/lib{cuda,cublas,cublasLt,curand,nvrtc}.so: stand-ins with the real libraries' SONAMEs
#     and the function names of cudarc's bindings, so that the binary records the real names
#     (libcuda.so.1, libcublas.so.13, ...) and the GPU host's libraries resolve them at run time,
#     as NVIDIA's own stubs (lib64/stubs) do;
#   - lib64/libcudart.so, bin/, nvvm/, include/: the managed CUDA tools' (`cargo oxide setup`),
#     the headers together with CCCL's (libcu++'s <nv/target> and <cuda/...>, which the CUDA
#     headers include).
# Usage: scripts/cuda-link-stubs.sh DIR   then build with CUDA_HOME=DIR (and NVCC=DIR/bin/nvcc).
# A machine with the CUDA toolkit needs none of this: build with its CUDA_HOME.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:?usage: scripts/cuda-link-stubs.sh DIR}"
TOOLS="$(ls -d "${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}"/cuda-*/nvidia/cu13 2>/dev/null | sort -V | tail -n 1 || true)"
[ -n "$TOOLS" ] || { echo "error: no CUDA tools in ~/.cuda-oxide; run \`cargo oxide setup\`" >&2; exit 1; }
[ -f "$TOOLS/lib/libcudart.so.13" ] || { echo "error: $TOOLS/lib/libcudart.so.13 is missing; run \`cargo oxide setup\` again" >&2; exit 1; }
CCCL="$(ls -d "${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}"/cccl-*/nvidia/cu13/include/cccl 2>/dev/null | sort -V | tail -n 1 || true)"
[ -n "$CCCL" ] || { echo "error: no CCCL headers in ~/.cuda-oxide; run \`cargo oxide setup\`" >&2; exit 1; }
CC="${CC:-cc}"

# cudarc's sources: the version this workspace locks.
CUDARC="$(cargo metadata --format-version 1 --manifest-path "$ROOT/Cargo.toml" 2>/dev/null \
    | python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "cudarc").rsplit("/", 1)[0])')"

# nvcc finds its tools, headers and libraries beside the folder it is called from (nvcc.profile:
# TOP = bin/..), so bin/ holds links to each tool rather than being one, and include/ has CCCL
# where the profile looks for it (include/cccl) and at the top, as a toolkit install has it.
mkdir -p "$OUT/bin" "$OUT/lib64" "$OUT/include"
for tool in "$TOOLS"/bin/*; do
    ln -sfn "$tool" "$OUT/bin/$(basename "$tool")"
done
ln -sfn "$TOOLS/nvvm" "$OUT/nvvm"
ln -sfn "$TOOLS/lib" "$OUT/lib"
for header in "$TOOLS"/include/* "$CCCL"/*; do
    ln -sfn "$header" "$OUT/include/$(basename "$header")"
done
ln -sfn "$CCCL" "$OUT/include/cccl"
ln -sf "$TOOLS/lib/libcudart.so.13" "$OUT/lib64/libcudart.so"

stub() { # stub <cudarc module> <library name> <soname>
    local names c="$OUT/lib64/$2.stub.c"
    names="$(grep -ohE 'pub unsafe fn [A-Za-z_][A-Za-z0-9_]*' "$CUDARC/src/$1/sys/mod.rs" | awk '{print $4}' | sort -u)"
    [ -n "$names" ] || { echo "error: no functions in $CUDARC/src/$1/sys/mod.rs" >&2; exit 1; }
    printf '/* Link-time stand-in for %s (scripts/cuda-link-stubs.sh); never run. */\n' "$3" > "$c"
    printf 'void %s(void) {}\n' $names >> "$c"
    "$CC" -shared -fPIC -o "$OUT/lib64/$3" -Wl,-soname,"$3" "$c"
    ln -sf "$3" "$OUT/lib64/$2.so"
    rm -f "$c"
}
stub driver libcuda libcuda.so.1
stub cublas libcublas libcublas.so.13
stub cublaslt libcublasLt libcublasLt.so.13
stub curand libcurand libcurand.so.10
stub nvrtc libnvrtc libnvrtc.so.13
echo "$OUT"
