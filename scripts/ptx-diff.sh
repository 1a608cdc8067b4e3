#!/usr/bin/env bash
# Checks that a change to the compiler leaves the generated device code alone: snapshots every
# PTX file the GPU bundle build wrote (target/oxide/<profile>/device/<crate>/*.ptx) into a folder,
# or compares the current ones with such a snapshot, function by function. What moves between
# equivalent builds is normalised (tests/src/ptx_snapshot.rs: crate disambiguators, type hashes in
# names, label and depot numbering, comments, source paths).
#   scripts/ptx-diff.sh save DIR      # after ./x gpu-bundle on the old compiler
#   scripts/ptx-diff.sh compare DIR   # after ./x gpu-bundle on the new one: exit 1 on any difference
# The committed snapshots of the bench and the corpus are checked by `./x test` itself
# (tests/ptx-snapshot/, tests/tests/corpus.rs and debuginfo.rs).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${CARGO_TARGET_DIR:-$ROOT/target}/oxide"
mode="${1:?save or compare}"; dir="${2:?snapshot folder}"
case "$mode" in
    save) rm -rf "$dir" ;;
    compare) ;;
    *) echo "usage: $0 save|compare DIR" >&2; exit 2 ;;
esac
cargo run --quiet --release --manifest-path "$ROOT/Cargo.toml" -p oxide-tests --bin ptx-snapshot -- "$mode" "$SRC" "$dir"
