#!/usr/bin/env bash
# Builds bridge-fuzz with libFuzzer and AddressSanitizer and runs each fuzz target for SECONDS (default 60) over
# its checked-in seed corpus Fuzz/corpus/<target>. New inputs libFuzzer finds go to .build-fuzz/corpus/<target>
# (kept between runs, not checked in); a crash, a broken invariant, a timeout or running out of memory saves the
# input under Fuzz/artifacts/<target>/ and makes the script exit 1 after the other targets ran.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (targets: .build/debug/bridge-fuzz --list)
#        scripts/fuzz.sh --replay [BINARY]          every seed of every target once through a debug build of
#                                                   bridge-fuzz (default .build/debug/bridge-fuzz, built by `swift
#                                                   build`): seconds, no fuzzing build; scripts/test.sh runs it with
#                                                   its AddressSanitizer build's, where a leak fails the replay too.
# Without TARGETs, the targets `--list` names must be exactly the folders of Fuzz/corpus and at least the floor
# `fuzz-targets` of scripts/test-floors: a list that came back empty or short (its format changed, a target was
# dropped) fails instead of fuzzing nothing. Before fuzzing, each target replays its checked-in seeds once
# (libFuzzer given the seed files), every one of which must have run.
# BRIDGE_FUZZ_SEED=N fixes libFuzzer's random seed; under CI (CI=true) it is 1 unless set, so a red run points at a
# change, not at luck. Unset outside CI, each run picks its own.
# Reproduce a saved input: .build-fuzz/release/bridge-fuzz TARGET Fuzz/artifacts/TARGET/crash-…
# (or, without the fuzzing build, .build/debug/bridge-fuzz TARGET FILE). See docs/RELIABILITY.md "Fuzzing".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"

# The targets binary $1 lists, checked against the folders of Fuzz/corpus and the floor.
all_targets() {
    local listed folders minimum
    listed="$("$1" --list 2>&1 | sed -n 's/^  \([a-z0-9-]*\): .*/\1/p' | sort)"
    folders="$(find Fuzz/corpus -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)"
    minimum="$(awk '$1 == "floor" && $2 == "fuzz-targets" { print $3 }' scripts/test-floors)"
    if [[ "$listed" != "$folders" ]]; then
        echo "fuzz: $1 --list names other targets than the folders of Fuzz/corpus:" >&2
        diff <(echo "$listed") <(echo "$folders") >&2 || true
        return 1
    fi
    if [[ -z "$listed" ]] || (($(wc -l <<<"$listed") < ${minimum:?no fuzz-targets floor in scripts/test-floors})); then
        echo "fuzz: $(grep -c . <<<"$listed") targets, fewer than the floor of $minimum (scripts/test-floors)" >&2
        return 1
    fi
    echo "$listed"
}

if [[ "${1:-}" == --replay ]]; then
    debug="${2:-.build/debug/bridge-fuzz}"
    targets="$(all_targets "$debug")"
    for target in $targets; do
        seeds=(Fuzz/corpus/"$target"/*)
        # The plain build replays each file and ends with "TARGET: N inputs replayed, every invariant held".
        # A seed that crashes the binary leaves no such line: the count check below reports it.
        replayed="$("$debug" "$target" "${seeds[@]}" 2>&1 | sed -n "s/^$target: \([0-9]*\) inputs replayed.*/\1/p")" ||
            replayed=""
        if [[ "$replayed" != "${#seeds[@]}" ]]; then
            echo "fuzz: $target replayed ${replayed:-no} of its ${#seeds[@]} seeds; the binary says:" >&2
            "$debug" "$target" "${seeds[@]}" 2>&1 | tail -n 20 >&2 || true
            exit 1
        fi
        echo "fuzz: $target: ${#seeds[@]} seeds replayed" >&2
    done
    exit 0
fi

SECONDS_EACH="${1:-60}"
shift || true
BUILD=".build-fuzz"
BIN="$BUILD/release/bridge-fuzz"

echo "== fuzz: building bridge-fuzz with -sanitize=fuzzer,address" >&2
# Linked with the toolchain's lld: ld.gold stops with an internal error (format_file_lineno) on this binary.
set +o pipefail
swift build -c release --product bridge-fuzz --build-path "$BUILD" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DBRIDGE_FUZZING -Xswiftc -use-ld=lld 2>&1 |
    grep -v "Cannot export local symbol" >&2
status="${PIPESTATUS[0]}"
set -o pipefail
((status == 0)) || { echo "fuzz: the build failed" >&2; exit "$status"; }

# Swift's own crash backtracer reads the stack in a way AddressSanitizer reports as a stack-buffer-underflow;
# libFuzzer prints the stack of a crash itself.
export SWIFT_BACKTRACE=enable=no

if (($#)); then
    targets=("$@")
else
    listed="$(all_targets "$BIN")"
    mapfile -t targets <<<"$listed"
fi
[[ -n "${BRIDGE_FUZZ_SEED:-}" || "${CI:-}" != true ]] || BRIDGE_FUZZ_SEED=1

# Inputs longer than libFuzzer's default 4 KiB where a target needs room: a response head may reach 16 KiB, the
# example configuration is 5 KiB.
max_len() {
    case "$1" in
        handshake-response) echo 20480 ;;
        config) echo 8192 ;;
        *) echo 4096 ;;
    esac
}

failed=()
for target in "${targets[@]}"; do
    seeds="Fuzz/corpus/$target"
    [[ -d "$seeds" ]] || { echo "fuzz: no seed corpus $seeds" >&2; exit 2; }
    work="$BUILD/corpus/$target"
    artifacts="Fuzz/artifacts/$target"
    log="$BUILD/logs/$target.log"
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    extra=()
    [[ -f "Fuzz/dictionaries/$target.dict" ]] && extra+=(-dict="Fuzz/dictionaries/$target.dict")
    [[ -n "${BRIDGE_FUZZ_SEED:-}" ]] && extra+=(-seed="$BRIDGE_FUZZ_SEED")
    # Every checked-in seed once, given as files: libFuzzer runs each and prints "Executed FILE in N ms".
    seed_files=("$seeds"/*)
    if ! "$BIN" "$target" -runs=0 -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
        -artifact_prefix="$artifacts/" "${seed_files[@]}" >"$log" 2>&1 || (($(grep -c '^Executed ' "$log") != ${#seed_files[@]})); then
        echo "fuzz: $target FAILED replaying its ${#seed_files[@]} seeds, the end of the log:" >&2
        tail -n 40 "$log" >&2
        failed+=("$target")
        continue
    fi
    echo "== fuzz: $target: ${#seed_files[@]} seeds replayed; fuzzing for ${SECONDS_EACH}s (log $log)" >&2
    if "$BIN" "$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
        -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" "$work" "$seeds" >"$log" 2>&1; then
        executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
        last="$(grep -E '^#[0-9]+' "$log" | tail -1)"
        cov="$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\)\/.*/cov \1 ft \2 corpus \3/p' <<<"$last")"
        echo "fuzz: $target clean: $executions executions, $cov" >&2
    else
        echo "fuzz: $target FAILED; the input is in $artifacts, the end of the log:" >&2
        tail -n 40 "$log" >&2
        failed+=("$target")
    fi
done
if ((${#failed[@]})); then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
