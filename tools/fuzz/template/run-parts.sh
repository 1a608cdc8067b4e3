#!/usr/bin/env bash
# oxide-fuzz GPU bundle in parts (written by `oxide-fuzz run --gpu-bundle`; edit
# tools/fuzz/template/run-parts.sh): runs part-*/run.sh for every part present and adds up their
# `N passed, N failed` lines. Each part-N/ also runs on its own.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")"
passed=0
failed=0
found=0
for part in part-*/; do
    [ -x "$part/run.sh" ] || continue
    found=1
    echo "== ${part%/}"
    log="$(mktemp)"
    "$part/run.sh" | tee "$log"
    last="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)"
    rm -f "$log"
    if [ -z "$last" ]; then
        echo "FAIL ${part%/}: run.sh printed no summary"
        failed=$((failed + 1))
        continue
    fi
    passed=$((passed + ${last%% passed*}))
    f="${last#*passed, }"
    failed=$((failed + ${f%% failed}))
done
if [ "$found" -eq 0 ]; then
    echo "error: no part-*/run.sh next to this script" >&2
    exit 2
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
