#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# bench_serve.sh CUPACE PLUGINS SRCDIR -- `make bench`: jobs per second that
# real `cupace serve` nodes sustain with zero-length stages, one node and
# then three on one queue, on a throwaway PostgreSQL (pg-harness.sh); says
# so and succeeds when PostgreSQL is absent.
cupace=$1
CUPACE_PACER_PATH=$2
export CUPACE_PACER_PATH
srcdir=${3:-.}
. "$srcdir/pg-harness.sh"
pg_start_bench bench_serve
work=tmp-bench-serve-$$
mkdir -p "$work"
sql() { "$pg_bin/psql" "$CUPACE_TEST_PG" -qtAX -c "$1" 2>/dev/null; }
jobs=4000
cat > "$work/node.ini" <<INI
[engine]
backend = emulated
synth_workers = 8
workers_per_device = 2
memory_budget = 1TiB
[pacer]
name = greedy
[pacer.greedy]
plugin = fixed
interval = 0
[workload]
partition_memory = 1GiB
synth_time = 0
gpu_prep = 0
gpu_kernel = 0
gpu_epilogue = 0
gpu_exclusive = no
[queue]
url = $CUPACE_TEST_PG
table = bench
lease = 10s
poll = 50ms
INI
echo "cupace serve, zero-length stages, greedy, $jobs jobs of 1 partition:"
for nodes in 1 3; do
  sql "DROP TABLE IF EXISTS bench, bench_done" >/dev/null
  "$cupace" queue init "$work/node.ini" >/dev/null
  "$cupace" queue submit "$work/node.ini" --count $jobs --partitions 1 >/dev/null
  t0=$(date +%s.%N)
  pids=
  for i in $(seq $nodes); do "$cupace" serve "$work/node.ini" -q & pids="$pids $!"; done
  while [ "$(sql "SELECT count(*) FROM bench_done")" -lt $jobs ]; do sleep 0.02; done
  t1=$(date +%s.%N)
  kill -TERM $pids; wait
  awk -v n=$nodes -v j=$jobs -v a="$t0" -v b="$t1" \
    'BEGIN { printf "   %d node%s: %.2f s = %.0f jobs/s (from the first start to the last record)\n", n, (n > 1 ? "s" : ""), b - a, j / (b - a) }'
done
rm -rf "$work"
