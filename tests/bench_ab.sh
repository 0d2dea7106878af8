#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# bench_ab.sh CUPACE PLUGINS SRCDIR -- `make bench`: a 20-seed A/B of the
# controllers of [ab] (six) on every shipped scenario, over all the cores,
# and the wall time each takes (issue 11: the many-seed A/B must stay cheap
# enough to run on every change).
set -eu
cupace=$1
CUPACE_PACER_PATH=$2
export CUPACE_PACER_PATH
conf=$3/../conf
total0=$(date +%s.%N)
printf '%-28s %8s %10s\n' "20 seeds x [ab] pacers" "runs" "wall (s)"
for f in "$conf"/cupace.ini "$conf"/scenarios/*.ini; do
  t0=$(date +%s.%N)
  "$cupace" ab "$f" -q --seeds 20 --csv /dev/null
  t1=$(date +%s.%N)
  printf '%-28s %8d %10.3f\n' "$(basename "$f")" \
    $((20 * $(sed -n 's/^pacers *= *//p' "$f" | tr ',' '\n' | grep -c .))) \
    "$(awk "BEGIN { print $t1 - $t0 }")"
done
total1=$(date +%s.%N)
printf '%-28s %8s %10.3f  (%s CPUs)\n' "all scenarios" "" "$(awk "BEGIN { print $total1 - $total0 }")" \
  "$(nproc 2>/dev/null || echo ?)"
