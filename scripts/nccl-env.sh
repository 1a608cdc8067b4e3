# Sourced (not run) by the scripts that start NCCL: scripts/multi-gpu-check.sh, the GPU bundle's
# run.sh and bench-allreduce/run.sh, and tests/tests/gpu.rs's multi_gpu.
#  1. NVLink multicast off, for NCCL, PyTorch and NVSHMEM alike: on shared multi-GPU hosts a program
#     using it can take every GPU of the host out of service (cuda-nccl sets NCCL_NVLS_ENABLE=0
#     itself too).
#  2. An NCCL under the name cudarc opens (`libnccl.so`) first on LD_LIBRARY_PATH: NVIDIA's wheels
#     and packages ship only `libnccl.so.2`. Found as $CUDA_OXIDE_NCCL_LIB, else the copy
#     `cargo oxide setup` installed, else Python's `nvidia.nccl` (PyTorch's), else ldconfig's, else
#     the first under /opt, /usr/local, /usr/lib, ~/.local; a link to it goes into a directory of
#     our own under $TMPDIR.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

oxide_find_nccl() {
    local f
    if [ -n "${CUDA_OXIDE_NCCL_LIB:-}" ]; then
        echo "$CUDA_OXIDE_NCCL_LIB"
        return 0
    fi
    for f in "${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}"/nccl-*/nvidia/nccl/lib/libnccl.so.2; do
        if [ -f "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    f="$(python3 -c 'import nvidia.nccl, os; print(next(os.path.join(p, "lib", "libnccl.so.2") for p in nvidia.nccl.__path__ if os.path.isfile(os.path.join(p, "lib", "libnccl.so.2"))))' 2>/dev/null)" \
        && [ -f "$f" ] && { echo "$f"; return 0; }
    f="$(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF; exit}')"
    [ -n "$f" ] && [ -f "$f" ] && { echo "$f"; return 0; }
    # Last: a Python environment other than the first python3's (PyTorch in a venv under /opt).
    f="$(find /opt /usr/local /usr/lib "$HOME/.local" -name libnccl.so.2 -print -quit 2>/dev/null)"
    [ -n "$f" ] && [ -f "$f" ] && { echo "$f"; return 0; }
    return 1
}

if oxide_nccl_lib="$(oxide_find_nccl)"; then
    oxide_nccl_dir="${TMPDIR:-/tmp}/cuda-oxide-nccl-$(id -u)"
    mkdir -p "$oxide_nccl_dir"
    ln -sf "$oxide_nccl_lib" "$oxide_nccl_dir/libnccl.so"
    export LD_LIBRARY_PATH="$oxide_nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NCCL: $oxide_nccl_lib (as $oxide_nccl_dir/libnccl.so); NCCL_NVLS_ENABLE=0" >&2
else
    echo "NCCL: none found (set CUDA_OXIDE_NCCL_LIB=/path/to/libnccl.so.2); programs using cuda-nccl will say so" >&2
fi
