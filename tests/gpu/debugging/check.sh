#!/usr/bin/env bash
# Issue 13's debugging checks, on a GPU host with the CUDA toolkit's compute-sanitizer, cuda-gdb
# and ncu (PATH, CUDA_HOME or /usr/local/cuda). Runs from a GPU bundle (scripts/gpu-bundle.sh puts
# it in gpu-bundle/debugging/ with the -G build, main.rs, cargo-oxide and the bench's kernels.rs):
#   gpu-bundle/debugging/check.sh
# Each check prints PASS/FAIL with the report lines that prove it; logs stay in $LOGS.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUNDLE="$(dirname "$HERE")"
OXIDE="$HERE/cargo-oxide"
BIN="$BUNDLE/bin/gpu-debugging"     # release build: line info (the default)
GBIN="$HERE/gpu-debugging-G"        # --device-debug full: variables, no device optimisation
SRC="$HERE/main.rs"
LOGS="${LOGS:-$HERE/logs}"
mkdir -p "$LOGS"
export CUDA_OXIDE_ARTIFACT_DIR="$BUNDLE/artifacts"

line() { grep -n "// MARK: $1\$" "$SRC" | cut -d: -f1; }
passed=0
failed=0

# expect <check> <log> <extended regex>...: every pattern must occur in the log.
expect() {
    local check="$1" log="$2" missing=() p
    shift 2
    for p in "$@"; do grep -Eq -- "$p" "$log" || missing+=("$p"); done
    if [ ${#missing[@]} -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS debugging/$check"
        for p in "$@"; do grep -Em1 -- "$p" "$log" | cut -c1-200 | sed 's/^/    /'; done
    else
        failed=$((failed + 1))
        echo "FAIL debugging/$check: not in $log: ${missing[*]}"
        tail -n 40 "$log" | sed 's/^/    /'
    fi
}

# memcheck: the planted raw-pointer write one past the end, at its Rust line.
timeout 600 "$OXIDE" oxide sanitize --tool memcheck --exe "$BIN" -- oob >"$LOGS/memcheck.log" 2>&1
expect memcheck_oob_write "$LOGS/memcheck.log" \
    "Invalid __global__ write of size 4" "main.rs:$(line oob-write)" "fill_raw"

# racecheck: the write and the unordered read of the shared slot, both lines named.
timeout 600 "$OXIDE" oxide sanitize --tool racecheck --exe "$BIN" -- race >"$LOGS/racecheck.log" 2>&1
expect racecheck_shared_race "$LOGS/racecheck.log" \
    "[Hh]azard|[Rr]ace reported" "main.rs:$(line race-write)" "main.rs:$(line race-read)"

# synccheck: the barrier 16 of 64 threads reach (bounded: a divergent barrier may hang without it).
timeout 180 "$OXIDE" oxide sanitize --tool synccheck --exe "$BIN" -- divergent-barrier >"$LOGS/synccheck.log" 2>&1
expect synccheck_divergent_barrier "$LOGS/synccheck.log" "Barrier error|[Dd]ivergent"

# cuda-gdb in batch mode: break on a kernel line, step, print a local and a slice element, backtrace.
# The breakpoint is deleted before `next`: line 33 has several locations (its bounds checks are blocks
# of their own), and `next` would stop at the next one, still on line 33.
loop="$(line debug-loop)"
cat >"$LOGS/debug.gdb" <<GDB
set pagination off
set confirm off
set breakpoint pending on
set cuda break_on_launch none
break main.rs:$loop
run
delete
next
print running_total
print k
bt
with language c -- print a.data_ptr[1]
print a[1]
kill
GDB
timeout 600 "$OXIDE" oxide debug --batch "$LOGS/debug.gdb" --exe "$GBIN" -- debug-target >"$LOGS/cuda-gdb.log" 2>&1
expect cuda_gdb_batch "$LOGS/cuda-gdb.log" \
    "Breakpoint 1.*main.rs:$loop|weighted_sum.*main.rs:$loop" \
    "^$((loop + 1))[[:space:]]" \
    "^\\\$1 = -?[0-9]" \
    "^#0 .*weighted_sum.*main.rs" \
    "^\\\$3 = -?[0-9]"

# ncu through `cargo oxide profile`: the bench's transpose, with its hottest Rust lines.
timeout 600 "$OXIDE" oxide profile --kernel transpose --source-folders "$BUNDLE/bench/src" \
    --exe "$BUNDLE/bench/oxide-bench" -- --only transpose --reps 1 --warmup 0 >"$LOGS/profile.log" 2>&1
expect profile_transpose "$LOGS/profile.log" \
    "^transpose .*[0-9]" "hottest lines of transpose" "TILE_S|out\\[|input\\["

echo "debugging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
