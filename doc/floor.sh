#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# floor.sh [CUPACE] -- a measured floor of mean memory for each scenario:
# the test-only oracle controller (tests/plugins/oracle.c), which is told
# the CPU's synthesis slots, swept over how many it keeps in synthesis and
# how many it lets wait for a GPU; the least memory / bound_bytes among the
# settings that keep makespan within 1% and job p50 within 3% of greedy's
# (20 paired seeds).  Run after `make check`, which builds the oracle:
#   CUPACE_PACER_PATH=build/plugins/.libs:build/tests/plugins/.libs doc/floor.sh build/cupace
set -eu
cupace=${1:-cupace}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
seeds=20

cell() {  # PACER: makespan p50 memory/bound means from "$tmp"
  awk -v want="$1" '
    /"summary"/ { s = 1 }
    s && /"pacer":/ { split($0, a, "\""); p = a[4] }
    s && p == want && /"makespan_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mk = v }
    s && p == want && /"job_latency_p50_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); lat = v }
    s && p == want && /"memory_mean_over_bound"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mb = v }
    END { printf "%.3f %.3f %.3f\n", mk, lat, mb }' "$tmp"
}

floor() {  # NAME CONFIG [--set ...]: one table row
  name=$1
  shift
  cpus=$(sed -n 's/^cpu_slots *= *\([0-9]*\).*/\1/p' "$1" | head -n 1)
  best=
  for f in 100 90 80 70 60 50; do
    slots=$(( (cpus * f + 99) / 100 ))
    for stock in 1 2 3 4 6 8 12 16; do
      # shellcheck disable=SC2068
      "$cupace" ab $@ -q --seeds $seeds --baseline greedy --pacer greedy --pacer oracle \
        --set pacer.oracle.plugin=oracle --set pacer.oracle.slots=$slots \
        --set pacer.oracle.stock=$stock --json "$tmp" >/dev/null 2>&1 || continue
      r=$(cell oracle)
      best=$(printf '%s\n%s %s %s\n' "$best" "$r" "$slots" "$stock" |
        awk 'NF == 5 && $1 <= 1.01 && $2 <= 1.03' | sort -k3,3g | head -n 1)
    done
  done
  # shellcheck disable=SC2068
  "$cupace" ab $@ -q --seeds $seeds --baseline greedy --pacer greedy --pacer lead --json "$tmp" \
    >/dev/null 2>&1 || true
  l=$(cell lead)
  if [ -n "$best" ]; then
    echo "$name $cpus $best $l" | awk '{ printf "| %s | %d | %d in synthesis, %d waiting | %.3f / %.3f / %.2f | %.3f / %.3f / %.2f | %.2f |\n",
      $1, $2, $6, $7, $3, $4, $5, $8, $9, $10, $10 / $5 }'
  else
    echo "$name $cpus $l" | awk '{ printf "| %s | %d | none within 1%% | | %.3f / %.3f / %.2f | |\n", $1, $2, $3, $4, $5 }'
  fi
}

echo "| scenario | cpu_slots | oracle's best setting | oracle | lead | lead / floor |"
echo "| --- | --- | --- | --- | --- | --- |"
for f in "$here"/conf/cupace.ini "$here"/conf/scenarios/*.ini; do
  floor "$(basename "$f")" "$f"
done
floor "seed's-case-400" "$here/conf/scenarios/two-worker-seed.ini" --set workload.jobs=400
