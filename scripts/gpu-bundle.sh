#!/usr/bin/env bash
# Builds the GPU tests (tests/gpu/*), the examples, the benchmark (bench/) and a `cargo oxide new` project through `cargo oxide build --release`, stripped,
# into gpu-bundle/ with run.sh, to copy to a GPU host that has no Rust toolchain:
#   scripts/gpu-bundle.sh && scp -r gpu-bundle gpu-host: && ssh gpu-host gpu-bundle/run.sh
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
}

for dir in "$ROOT"/tests/gpu/*/; do
    name="$(basename "$dir")"
    [ -f "$dir/Cargo.lock" ] || cp "$ROOT/Cargo.lock" "$dir/Cargo.lock" 2>/dev/null || true
    # A crate that needs particular archs (clusters: sm_90) names them in an `oxide-arch` file.
    arch="$ARCH"
    [ -f "$dir/oxide-arch" ] && arch="$(tr -d '[:space:]' < "$dir/oxide-arch")"
    echo "==> tests/gpu/$name (--arch $arch)" >&2
    "$CARGO_OXIDE" oxide build --release --quiet --arch "$arch" --manifest-path "$dir/Cargo.toml"
    add "$RELEASE/gpu-$name" "gpu-$name"
    artifacts "gpu_${name//-/_}"
done

for dir in "$ROOT"/examples/*/; do
    [ -f "$dir/Cargo.toml" ] || continue
    name="$(basename "$dir")"
    echo "==> examples/$name" >&2
    "$CARGO_OXIDE" oxide build --release --quiet --arch "$ARCH" --manifest-path "$dir/Cargo.toml"
    add "$RELEASE/$name" "example-$name"
    artifacts "${name//-/_}"
done

# The Rust-vs-nvcc benchmark goes to bench/ (binary, runner, CUDA sources, cubins when built
# here): run it with gpu-bundle/bench/run.sh; the bundle's run.sh does not.
echo "==> bench (--arch sm_90)" >&2
"$CARGO_OXIDE" oxide build --release --quiet --arch sm_90 --manifest-path "$ROOT/bench/Cargo.toml"
mkdir -p "$OUT/bench/cuda"
cp "$RELEASE/oxide-bench" "$ROOT/bench/run.sh" "$OUT/bench/"
if command -v strip >/dev/null; then strip --strip-all "$OUT/bench/oxide-bench"; fi
cp "$ROOT"/bench/cuda/*.cu "$OUT/bench/cuda/"
# The CUDA twins are compiled here, fresh, when an nvcc is at hand (the managed CUDA tools have
# one), so the GPU host only runs; otherwise its run.sh compiles them with the host's nvcc.
if "$ROOT/bench/run.sh" --cubins-only; then
    cp -r "$ROOT/bench/cubin" "$OUT/bench/cubin"
else
    echo "(no nvcc here: gpu-bundle/bench/run.sh compiles the CUDA twins on the GPU host)" >&2
fi

# The project `cargo oxide new` generates must run as generated, too.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "==> templates/vecadd (cargo oxide new)" >&2
(cd "$tmp" && "$CARGO_OXIDE" oxide new template-vecadd)
cp "$ROOT/Cargo.lock" "$tmp/template-vecadd/Cargo.lock"
"$CARGO_OXIDE" oxide build --release --quiet --arch "$ARCH" --manifest-path "$tmp/template-vecadd/Cargo.toml"
add "$RELEASE/template-vecadd" "template-vecadd"

cat > "$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs every binary of this bundle; prints PASS/FAIL per binary and `N passed, N failed`.
cd "$(dirname "${BASH_SOURCE[0]}")"
# Sideloaded modules (load_kernel_module) are found here, not next to the binaries.
export CUDA_OXIDE_ARTIFACT_DIR="$PWD/artifacts"
passed=0
failed=0
for exe in bin/*; do
    name="$(basename "$exe")"
    if output="$("$exe" 2>&1)"; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        code=$?
        failed=$((failed + 1))
        echo "FAIL $name (exit $code)"
        printf '%s\n' "$output" | tail -n 20 | sed 's/^/    /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
RUN
chmod +x "$OUT/run.sh"
du -sh "$OUT" >&2
echo "gpu-bundle ready: $OUT/run.sh" >&2
