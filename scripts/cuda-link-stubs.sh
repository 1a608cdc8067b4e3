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
#   - with --ptx-isa X.Y, DIR/ptx-isa/nvcc: nvcc that marks the PTX it writes (`--ptx`) as ISA X.Y
#     (and, given CUDA_LINK_STUBS_FAST_OBJECTS=1, compiles objects fast for build-only checks).
#     candle loads its kernels as PTX, which the driver JIT-compiles, and a driver reads only the
#     ISA versions of its CUDA release or older (driver 580 = CUDA 13.0: ISA 9.0); the managed nvcc
#     may be newer than the GPU host's driver (13.5 writes 9.5). candle's kernels use no newer
#     instruction; one that did would fail to load with the JIT's error, not run differently.
# Usage: scripts/cuda-link-stubs.sh DIR [--ptx-isa X.Y]   then build with CUDA_HOME=DIR and
# NVCC=DIR/bin/nvcc (DIR/ptx-isa/nvcc with --ptx-isa).
# A machine with the CUDA toolkit needs none of this: build with its CUDA_HOME.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:?usage: scripts/cuda-link-stubs.sh DIR [--ptx-isa X.Y]}"
PTX_ISA=""
if [ $# -ge 2 ]; then
    [ "$2" = "--ptx-isa" ] && [[ "${3:-}" =~ ^[0-9]+\.[0-9]+$ ]] \
        || { echo "error: expected \`--ptx-isa X.Y\` (such as 9.0) after DIR, got: ${*:2}" >&2; exit 1; }
    PTX_ISA="$3"
fi
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
if [ -n "$PTX_ISA" ]; then
    # nvcc writes `--ptx` output as <--output-directory or .>/<source stem>.ptx, or to `-o FILE`.
    mkdir -p "$OUT/ptx-isa"
    cat > "$OUT/ptx-isa/nvcc" <<WRAPPER
#!/usr/bin/env bash
# nvcc whose PTX says \`.version $PTX_ISA\` (scripts/cuda-link-stubs.sh --ptx-isa).
# With CUDA_LINK_STUBS_FAST_OBJECTS=1 (build-only checks such as tests/tests/candle.rs, whose
# binary never runs) an object compile (-c) optimises device code less (-O1: at -O0 cicc cannot
# lower the inline PTX of the dp4a intrinsics) and embeds PTX instead of SASS: candle's quantized
# kernels then take ~13 s a file instead of ~40. PTX output (--ptx) is unchanged.
set -euo pipefail
args=("\$@")
if [ "\${CUDA_LINK_STUBS_FAST_OBJECTS:-}" = 1 ] && [[ " \$* " == *" -c "* ]] && [[ " \$* " != *" --ptx "* ]]; then
    args=("\${args[@]//code=sm_/code=compute_}" -Xcicc -O1)
fi
"$OUT/bin/nvcc" "\${args[@]}"
ptx=0; dir=.; out=""; sources=()
while [ \$# -gt 0 ]; do
    case "\$1" in
        --ptx|-ptx) ptx=1 ;;
        --output-directory|-odir) dir="\$2"; shift ;;
        --output-directory=*) dir="\${1#*=}" ;;
        -o|--output-file) out="\$2"; shift ;;
        *.cu) sources+=("\$1") ;;
    esac
    shift
done
[ "\$ptx" = 1 ] || exit 0
files=()
if [ -n "\$out" ]; then files=("\$out"); else
    for src in "\${sources[@]}"; do b="\$(basename "\$src")"; files+=("\$dir/\${b%.cu}.ptx"); done
fi
for f in "\${files[@]}"; do
    [ -f "\$f" ] && sed -i -E '0,/^\.version [0-9]+\.[0-9]+/s//.version $PTX_ISA/' "\$f"
done
exit 0
WRAPPER
    chmod +x "$OUT/ptx-isa/nvcc"
fi

stub driver libcuda libcuda.so.1
stub cublas libcublas libcublas.so.13
stub cublaslt libcublasLt libcublasLt.so.13
stub curand libcurand libcurand.so.10
stub nvrtc libnvrtc libnvrtc.so.13
echo "$OUT"
