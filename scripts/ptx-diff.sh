#!/usr/bin/env bash
# Checks that a change to the compiler leaves the generated device code alone: snapshots every
# PTX file the GPU bundle build wrote (target/oxide/<profile>/device/<crate>/*.ptx) into a folder, or compares
# the current ones with such a snapshot. Compared modulo the hashes that name things: a crate's
# disambiguator in mangled symbols (`Cs<base62>_`), which moves whenever the dependency graph
# changes, the type hash of a generic kernel's entry name (`_<16 hex>`), derived from it, and the
# per-function numbering of labels and local depots, which follows the order of the functions, and
# the temporary folders of the template and book projects (in `.file` lines).
#   scripts/ptx-diff.sh save DIR      # after ./x gpu-bundle on the old compiler
#   scripts/ptx-diff.sh compare DIR   # after ./x gpu-bundle on the new one: exit 1 on any difference
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="${CARGO_TARGET_DIR:-$ROOT/target}/oxide"
mode="${1:?save or compare}"; dir="${2:?snapshot folder}"
case "$mode" in
    save)
        rm -rf "$dir"; mkdir -p "$dir"
        (cd "$SRC" && find . -path '*/device/*/*.ptx' -print0 | xargs -0 -I{} cp --parents {} "$dir")
        echo "saved $(find "$dir" -name '*.ptx' | wc -l) PTX files to $dir"
        ;;
    compare)
        # Function bodies are compared as a sorted list, since generic instances are emitted in the
        # order of their (hashed) entry names.
        normalize() {
            sed -E 's|/tmp/tmp\.[A-Za-z0-9]+/|/tmp/tmp.X/|g; s/Cs[0-9A-Za-z]+_/Cs#_/g; s/L__BB[0-9]+_/L__BB#_/g; s/__local_depot[0-9]+/__local_depot#/g; s/_[0-9a-f]{16}([^0-9a-f]|$)/_#\1/g' "$1" | python3 -c '
import sys, re
chunks = re.split(r"\n(?=\t// \.globl|// -- Begin function)", sys.stdin.read())
print("\n".join(sorted(chunks)))'
        }
        n=0; bad=0
        # A broken normalisation would compare empty texts: make it fail loudly instead.
        probe=$(find "$dir" -name '*.ptx' -print -quit)
        [ -z "$probe" ] || [ -n "$(normalize "$probe")" ] || { echo "error: normalising $probe gave nothing" >&2; exit 2; }
        while IFS= read -r -d '' f; do
            n=$((n + 1))
            rel="${f#"$dir"/}"
            if ! diff <(normalize "$f") <(normalize "$SRC/$rel") > /tmp/ptx-diff.$$ 2>&1; then
                bad=$((bad + 1)); echo "DIFFERS: $rel"
                head -n 10 /tmp/ptx-diff.$$
            fi
        done < <(find "$dir" -name '*.ptx' -print0)
        rm -f /tmp/ptx-diff.$$
        echo "$n PTX files compared, $bad differ"
        [ "$bad" -eq 0 ]
        ;;
    *) echo "usage: $0 save|compare DIR" >&2; exit 2 ;;
esac
