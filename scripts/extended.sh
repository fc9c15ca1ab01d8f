#!/usr/bin/env bash
# What CI (.ci/run) leaves out for its 40-minute budget, run before each release (docs/RELIABILITY.md "What CI runs"):
#   1. scripts/test.sh --sanitize=thread     unit and integration suites under ThreadSanitizer, the TSan-built bridge
#   2. scripts/test.sh --sanitize=address    unit and integration suites under AddressSanitizer; every bridge the
#                                            integration tests stop is checked for leaks with no suppression
#   3. scripts/fuzz.sh FUZZ_SECONDS          every fuzz target for EXTENDED_FUZZ_SECONDS (default 600) with a
#                                            random seed, building on the corpus earlier runs left in .build-fuzz
#   4. scripts/soak.sh SOAK_MINUTES          the release binary under faults for EXTENDED_SOAK_MINUTES (default 30)
# Every step runs even when one before it failed; the summary names each step's exit status and duration, and the
# script exits 1 when any failed. The counting of scripts/test.sh (floors, skips under CI) applies to 1 and 2.
# Usage: scripts/extended.sh [STEP...]     (steps: tsan asan fuzz soak; default all, in that order)
# Several hours on the shared 2-core machine: each sanitizer build alone is 10-15 minutes there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

steps=("$@")
((${#steps[@]})) || steps=(tsan asan fuzz soak)
summary=()
failed=0
for step in "${steps[@]}"; do
    case "$step" in
        tsan) command=(scripts/test.sh --sanitize=thread) ;;
        asan) command=(scripts/test.sh --sanitize=address) ;;
        fuzz) command=(scripts/fuzz.sh "${EXTENDED_FUZZ_SECONDS:-600}") ;;
        soak) command=(scripts/soak.sh "${EXTENDED_SOAK_MINUTES:-30}") ;;
        *) echo "extended: unknown step $step (tsan, asan, fuzz, soak)" >&2 && exit 64 ;;
    esac
    echo "== extended: $step: ${command[*]}" >&2
    began=$SECONDS
    status=0
    "${command[@]}" || status=$?
    summary+=("$(printf '%-5s %6d s  exit %d' "$step" $((SECONDS - began)) "$status")")
    ((status == 0)) || failed=1
done
printf 'extended: %s\n' "${summary[@]}" >&2
exit "$failed"
