#!/usr/bin/env bash
# The edit-build loop of `cargo oxide build` against plain `cargo build` of the same crate (the
# vecadd template from `cargo oxide new`), as ratios, medians of RUNS (default 5) runs each:
#   no-op       build again with nothing changed                     target ≤ 1.5×
#   kernel edit change one line of the kernel's body, build          target ≤ 2×
#   cold        build after removing the crate's own outputs          target ≤ 1.2×
#               (dependencies stay built, as after `cargo clean -p`)
# Each side has its own copy of the project and its own target dir, so neither warms the other.
#   scripts/rebuild-timing.sh            # uses `cargo oxide` from PATH (./x setup installs it)
#   CARGO_OXIDE=target/release/cargo-oxide RUNS=7 scripts/rebuild-timing.sh
set -euo pipefail

RUNS="${RUNS:-5}"
CARGO_OXIDE="${CARGO_OXIDE:-cargo-oxide}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

(cd "$WORK" && "$CARGO_OXIDE" oxide new app --template vecadd >/dev/null && mv app oxide)
cp -r "$WORK/oxide" "$WORK/cargo"
SRC=src/main.rs
TOOLCHAIN="$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$(dirname "$0")/../rust-toolchain.toml" 2>/dev/null || true)"

build() { # build oxide|cargo
    if [[ "$1" == oxide ]]; then
        (cd "$WORK/oxide" && "$CARGO_OXIDE" oxide build --arch sm_90 --quiet >/dev/null 2>&1)
    else
        (cd "$WORK/cargo" && cargo ${TOOLCHAIN:++$TOOLCHAIN} build --quiet >/dev/null 2>&1)
    fi
}

seconds() { # seconds <command...>: wall time of one run
    local t0 t1
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

# The kernel edit: a different constant in an expression the kernel really computes, so the
# device code changes (and no build can skip it).
edit() { # edit <side> <n>
    sed -i "s/\*c_elem = a\[i\] + b\[i\].*;/*c_elem = a[i] + b[i] + 0.0 * $2.0;/" "$WORK/$1/$SRC"
}

# The crate's own outputs, not its dependencies' (as `cargo clean -p app` would remove).
clean_own() { # clean_own <side>
    find "$WORK/$1/target" \( -name 'app-*' -o -name 'app' -o -name 'app.d' -o -path '*/device/app*' \) \
        -prune -exec rm -rf {} + 2>/dev/null || true
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "warming both sides (first builds compile the dependencies)…" >&2
build oxide
build cargo

# One round runs the case on both sides back to back, so drift in the machine's load (other
# jobs on a shared machine) falls on both sides alike instead of on whichever ran later.
measure() { # measure <case> -> "cargo-median oxide-median"
    local case=$1 i side c=() o=()
    for ((i = 1; i <= RUNS; i++)); do
        for side in cargo oxide; do
            case "$case" in
                noop) build "$side" ;;
                edit) edit "$side" "$i" ;;
                cold) clean_own "$side" ;;
            esac
            if [ "$side" = cargo ]; then c+=("$(seconds build cargo)"); else o+=("$(seconds build oxide)"); fi
        done
    done
    echo "$(printf '%s\n' "${c[@]}" | median) $(printf '%s\n' "${o[@]}" | median)"
}

printf '%-12s %10s %10s %7s %7s\n' case "cargo s" "oxide s" ratio target
for case in noop edit cold; do
    target=$(case $case in noop) echo 1.5 ;; edit) echo 2.0 ;; cold) echo 1.2 ;; esac)
    read -r c o < <(measure "$case")
    printf '%-12s %10.3f %10.3f %7.2f %7s\n' "$case" "$c" "$o" "$(echo "$o / $c" | bc -l)" "≤ $target"
done
