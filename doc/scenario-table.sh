#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# scenario-table.sh [CUPACE] -- the README's scenario table: proctime against
# greedy (and the others) on every shipped scenario, from `cupace ab --json`.
#   CUPACE_PACER_PATH=build/plugins/.libs doc/scenario-table.sh build/cupace
set -eu
cupace=${1:-cupace}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

echo "| scenario | greedy fills memory | makespan proctime / greedy | mean memory proctime / greedy | job p50 intercompletion / greedy | job p50 stale / greedy |"
echo "| --- | --- | --- | --- | --- | --- |"
for f in "$here"/conf/cupace.ini "$here"/conf/scenarios/*.ini; do
  "$cupace" ab "$f" -q --pacer proctime --pacer greedy --pacer intercompletion --pacer stale \
    --json "$tmp" || true
  awk -v name="$(basename "$f")" '
    /"pacer":/ { split($0, a, "\""); p = a[4] }
    /"makespan_s":/ { v = $0; sub(/.*"makespan_s": /, "", v); sub(/,.*/, "", v); mk[p] = v + 0 }
    /"peak_bytes":/ { v = $0; sub(/.*"peak_bytes": /, "", v); sub(/,.*/, "", v); pk[p] = v + 0
                      b = $0; sub(/.*"budget_bytes": /, "", b); sub(/,.*/, "", b); bud[p] = b + 0 }
    /"mean_bytes":/ { v = $0; sub(/.*"mean_bytes": /, "", v); sub(/,.*/, "", v); mem[p] = v + 0 }
    /"job_latency_s":/ { v = $0; sub(/.*"p50": /, "", v); sub(/,.*/, "", v); lat[p] = v + 0 }
    END {
      fills = (pk["greedy"] + 15 * 2^30 > bud["greedy"]) ? "yes" : "no"
      printf "| %s | %s | %.3f | %.3f | %.2f | %.2f |\n", name, fills,
        mk["proctime"] / mk["greedy"], mem["proctime"] / mem["greedy"],
        lat["intercompletion"] / lat["greedy"], lat["stale"] / lat["greedy"]
    }' "$tmp"
done
