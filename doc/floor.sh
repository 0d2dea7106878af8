#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# floor.sh [CUPACE] -- measured floors of mean memory for each scenario:
# the test-only oracle controller (tests/plugins/oracle.c), which is told
# the CPU's synthesis slots, swept over how many it keeps in synthesis and
# how many it lets wait for a GPU; the least memory / bound_bytes among the
# settings that keep makespan within 1% and job p50 within 3% of greedy's
# (20 paired seeds).  Two floors: told the slots from the start, and blind
# until the first synthesis ends (no signal carries the slots before), the
# best a controller that learns them could do.  The last column is lead
# told them (`slots`).  Run after `make check`,
# which builds the oracle:
#   CUPACE_PACER_PATH=build/plugins/.libs:build/tests/plugins/.libs doc/floor.sh build/cupace
set -eu
cupace=${1:-cupace}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
seeds=20

# shellcheck source=doc/means.sh
. "$here/doc/means.sh"

best() {  # CPUS BLIND CONFIG [--set ...]: "mk p50 mem slots stock" of the least memory within 1%/3%
  cpus=$1
  blind=$2
  shift 2
  b=
  for f in 100 90 80 70 60 50; do
    slots=$(( (cpus * f + 99) / 100 ))
    for stock in 1 2 3 4 6 8 12 16 24; do
      # shellcheck disable=SC2068
      "$cupace" ab $@ -q --seeds $seeds --baseline greedy --pacer greedy --pacer oracle \
        --set pacer.oracle.plugin=oracle --set pacer.oracle.slots=$slots \
        --set pacer.oracle.stock=$stock --set pacer.oracle.blind=$blind --json "$tmp" \
        >/dev/null 2>&1 || continue
      r=$(means "$tmp" oracle)
      b=$(printf '%s\n%s %s %s\n' "$b" "$r" "$slots" "$stock" |
        awk 'NF == 5 && $1 <= 1.01 && $2 <= 1.03' | sort -k3,3g | head -n 1)
    done
  done
  echo "${b:-none}"
}

floor() {  # NAME CONFIG [--set ...]: one table row
  name=$1
  shift
  cpus=$(sed -n 's/^cpu_slots *= *\([0-9]*\).*/\1/p' "$1" | head -n 1)
  told=$(best "$cpus" 0 "$@")
  blind=$(best "$cpus" 1 "$@")
  # shellcheck disable=SC2068
  "$cupace" ab $@ -q --seeds $seeds --baseline greedy --pacer greedy --pacer lead --pacer told \
    --set pacer.told.plugin=lead --set pacer.told.slots="$cpus" --json "$tmp" >/dev/null 2>&1 || true
  l=$(means "$tmp" lead)
  t=$(means "$tmp" told)
  echo "$name $cpus | $told | $blind | $l | $t" | awk -F' [|] ' '
    function show(s,   a) { if (split(s, a, " ") < 5) return "none within 1% | "
                            return sprintf("%d + %d: %.3f / %.3f / %.2f | ", a[4], a[5], a[1], a[2], a[3]) }
    { split($1, h, " "); split($3, b, " "); split($4, l, " "); split($5, t, " ")
      printf "| %s | %d | %s%s%.3f / %.3f / %.2f | %s | %.3f / %.3f / %.2f |\n", h[1], h[2], show($2), show($3),
        l[1], l[2], l[3], (b[3] > 0 ? sprintf("%.2f", l[3] / b[3]) : ""), t[1], t[2], t[3] }'
}

echo "| scenario | cpu_slots | oracle told the slots | oracle blind until a synthesis ends | lead | lead / blind floor | lead told the slots |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for f in "$here"/conf/cupace.ini "$here"/conf/scenarios/*.ini; do
  floor "$(basename "$f")" "$f"
done
floor "seed's-case-400" "$here/conf/scenarios/two-worker-seed.ini" --set workload.jobs=400
