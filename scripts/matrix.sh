#!/usr/bin/env bash
# The delivery-guarantee matrix (Tests/BridgeIntegrationTests/DeliveryMatrix, docs/RELIABILITY.md "Delivery matrix"):
# origins × sinks × faults × modes, each point checked against the emulator's own record of what it wrote.
#
# Usage: scripts/matrix.sh [--seed N] [--count K|all] [--point ORIGIN,SINK,FAULT,MODE]
#   --seed N     the order the points are drawn in (default 1; CI runs seed 1)
#   --count K    how many points of that order to run; `all` runs the whole space (about 170 points); default:
#                the shortest prefix that covers every value of every axis and the backpressure points
#                (MatrixCase.backpressure), which is what CI runs
#   --point P    that one point, as a run prints it (e.g. snapshot,webhook,sink-slow,activity)
# Prints the seed and each point; exits non-zero when a point breaks the guarantee.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
seed=1
count=""
point=""
while (($#)); do
    case "$1" in
        --seed) seed="$2"; shift 2 ;;
        --count) count="$2"; shift 2 ;;
        --point) point="$2"; shift 2 ;;
        *) echo "matrix.sh: unknown argument $1 (use --seed N, --count K|all, --point P)" >&2; exit 64 ;;
    esac
done
[[ "$seed" =~ ^[0-9]+$ ]] || { echo "matrix.sh: --seed takes a number" >&2; exit 64; }
[[ -z "$count" || "$count" == all || "$count" =~ ^[1-9][0-9]*$ ]] || { echo "matrix.sh: --count takes a number or all" >&2; exit 64; }
scripts/bootstrap.sh
export PATH="/opt/swift/usr/bin:$PATH"
export BRIDGE_PYTHON="$ROOT/.venv/bin/python"
swift build --build-tests
echo "== delivery matrix: seed $seed, count ${count:-covering prefix}" >&2
export BRIDGE_MATRIX_SEED="$seed"
if [[ -n "$count" ]]; then export BRIDGE_MATRIX_COUNT="$count"; fi
if [[ -n "$point" ]]; then export BRIDGE_MATRIX_POINT="$point"; fi
started=$SECONDS
swift test --skip-build --filter DeliveryMatrixTests --verbose 2>&1 | tee "${TMPDIR:-/tmp}/matrix-$seed.log" \
    | grep -E "×|Test run with"
status=${PIPESTATUS[0]}
echo "== delivery matrix: seed $seed, $((SECONDS - started)) s, exit $status" >&2
exit "$status"
