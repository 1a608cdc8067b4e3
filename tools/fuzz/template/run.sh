#!/usr/bin/env bash
# oxide-fuzz GPU bundle (written by `oxide-fuzz run --gpu-bundle`; edit tools/fuzz/template/run.sh).
# Runs every batch binary on the GPU: each runs its programs on the CPU and as kernels on the GPU,
# compares the checksums thread by thread and with the build machine's CPU (refs/), and prints
# PASS/FAIL per program. Needs bash, coreutils and the NVIDIA driver; no Rust toolchain.
#   ./run.sh                 every binary
#   ./run.sh NAME...         only these binaries (file names in bin/, e.g. fuzz_1_0003.release)
# Ends with `N passed, N failed`; exits non-zero when anything failed.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")"
TIMEOUT="${FUZZ_TIMEOUT:-900}"

# The binaries travel as xz-compressed tars, one per profile (bin-release.tar.xz, bin-debug.tar.xz).
BIN="$PWD/bin"
if [ ! -d "$BIN" ]; then
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/oxide-fuzz.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    for archive in bin-*.tar.xz; do
        [ -f "$archive" ] || continue
        if command -v xz >/dev/null; then
            xz -dc "$archive" | tar -x -C "$tmp" || exit 2
        elif command -v python3 >/dev/null; then
            python3 -c 'import lzma, sys, tarfile; tarfile.open(fileobj=lzma.open(sys.argv[1])).extractall(sys.argv[2])' "$archive" "$tmp" || exit 2
        else
            echo "error: unpacking $archive needs xz or python3" >&2
            exit 2
        fi
    done
    BIN="$tmp/bin"
fi
if [ ! -d "$BIN" ]; then
    echo "error: no binaries (bin/ or bin-*.tar.xz) next to run.sh" >&2
    exit 2
fi

passed=0
failed=0
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for exe in "$BIN"/*; do names+=("$(basename "$exe")"); done
fi
for name in "${names[@]}"; do
    exe="$BIN/$name"
    from=0
    while :; do
        log="$(mktemp)"
        timeout "$TIMEOUT" "$exe" --expect "refs/$name.txt" --from "$from" >"$log" 2>&1
        code=$?
        # Program lines only: a failed setup is reported once, below.
        grep -E '^(PASS|FAIL) ' "$log" | grep -v '^FAIL setup:'
        passed=$((passed + $(grep -c '^PASS ' "$log")))
        failed=$((failed + $(grep '^FAIL ' "$log" | grep -vc '^FAIL setup:')))
        next=""
        if [ "$code" -eq 3 ]; then
            # The CUDA context broke (a trap, a fault): go on after the program that broke it.
            next="$(sed -n 's/^ABORT next=//p' "$log" | tail -n 1)"
        elif [ "$code" -eq 124 ] || [ "$code" -ge 128 ]; then
            # Timed out or crashed: the last program started is to blame; go on after it.
            last="$(grep '^RUN ' "$log" | tail -n 1)"
            if [ -n "$last" ]; then
                k="${last#RUN }"; k="${k%% *}"; id="${last#RUN * }"
                if ! grep -qE "^(PASS|FAIL) $id(:|\$)" "$log"; then
                    echo "FAIL $id: $name $( [ "$code" -eq 124 ] && echo "timed out after ${TIMEOUT}s" || echo "died with exit $code")"
                    failed=$((failed + 1))
                fi
                next=$((k + 1))
            else
                echo "FAIL $name: exit $code before any program ran"
                tail -n 5 "$log" | sed 's/^/    /'
                failed=$((failed + 1))
            fi
        elif [ "$code" -eq 2 ]; then
            echo "FAIL $name: could not start"
            tail -n 5 "$log" | sed 's/^/    /'
            failed=$((failed + 1))
        fi
        rm -f "$log"
        [ -n "$next" ] || break
        from="$next"
    done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
