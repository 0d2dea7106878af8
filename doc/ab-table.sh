#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# ab-table.sh [CUPACE] -- the README's 20-seed tables and trade-off plot:
# every shipped controller and the seed's own configuration against greedy
# on every shipped scenario and on the seed's case, from `cupace ab --seeds`;
# lead on held-out workloads and on synth-bound's twins.
#   CUPACE_PACER_PATH=build/plugins/.libs doc/ab-table.sh build/cupace
# Writes the tables to stdout and doc/tradeoff.png (with gnuplot).
set -eu
cupace=${1:-cupace}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.1" "$tmp.2"' EXIT
seeds=20
# the seed's controller, defined wherever a scenario does not define it
seedset="--set pacer.seed.plugin=proctime --set pacer.seed.bootstrap=seed --set pacer.seed.projection=no
 --set pacer.seed.cpu_probe=no --set pacer.seed.target=8 --set pacer.seed.kp=0.5 --set pacer.seed.ki=0.001"
pacers="--pacer greedy --pacer lead --pacer proctime --pacer seed --pacer window --pacer intercompletion --pacer stale"

row() {  # NAME: one line per scenario, makespan / p50 ratios and memory / bound per controller
  awk -v name="$1" '
    /"summary"/ { s = 1 }
    s && /"pacer":/ { split($0, a, "\""); p = a[4]; order[++n] = p }
    s && /"makespan_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mk[p] = v }
    s && /"job_latency_p50_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); lat[p] = v }
    s && /"memory_mean_over_bound"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mb[p] = v }
    END {
      printf "| %s |", name
      for (i = 1; i <= n; i++) printf " %.3f / %.3f / %.2f |", mk[order[i]], lat[order[i]], mb[order[i]]
      printf "\n"
    }' "$tmp"
}

echo "Each cell: makespan / job latency p50 (mean ratios to greedy over $seeds paired seeds) / mean memory over bound_bytes."
echo
echo "| scenario | greedy | lead | proctime | seed | window | intercompletion | stale |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for f in "$here"/conf/cupace.ini "$here"/conf/scenarios/*.ini; do
  # shellcheck disable=SC2086
  "$cupace" ab "$f" -q --seeds $seeds --baseline greedy $pacers $seedset --json "$tmp" || true
  row "$(basename "$f")"
done
# shellcheck disable=SC2086
"$cupace" ab "$here/conf/scenarios/two-worker-seed.ini" -q --seeds $seeds --baseline greedy $pacers \
  $seedset --set workload.jobs=400 --json "$tmp" || true
row "the seed's case (two-worker-seed.ini, 400 jobs)"

echo
echo "What each of proctime's departures from the seed buys (cupace.ini and the seed's case, $seeds seeds):"
echo
echo "| controller | cupace.ini | the seed's case |"
echo "| --- | --- | --- |"
dep="--pacer greedy --pacer seed --pacer seed-fill --pacer seed-projection --pacer seed-fill-projection --pacer proctime"
depset="$seedset --set pacer.seed-fill.plugin=proctime --set pacer.seed-fill.projection=no
 --set pacer.seed-fill.cpu_probe=no --set pacer.seed-projection.plugin=proctime
 --set pacer.seed-projection.bootstrap=seed --set pacer.seed-projection.cpu_probe=no
 --set pacer.seed-fill-projection.plugin=proctime --set pacer.seed-fill-projection.cpu_probe=no"
i=0
for c in "$here/conf/cupace.ini" "$here/conf/scenarios/two-worker-seed.ini --set workload.jobs=400"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$cupace" ab $c -q --seeds $seeds --baseline greedy $dep $depset --json "$tmp.$i" || true
done
for p in seed seed-fill seed-projection seed-fill-projection proctime; do
  printf '| %s |' "$p"
  for t in "$tmp.1" "$tmp.2"; do
    awk -v want="$p" '
      /"summary"/ { s = 1 }
      s && /"pacer":/ { split($0, a, "\""); p = a[4] }
      s && p == want && /"makespan_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mk = v }
      s && p == want && /"memory_mean_over_bound"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mb = v }
      END { printf " %.3f / %.2f |", mk, mb }' "$t"
  done
  echo
done
rm -f "$tmp.1" "$tmp.2"

echo
echo "Held-out workloads (--set on cupace.ini, $seeds seeds; makespan / p50 / memory over bound):"
echo
row_but_greedy() {  # NAME: row without greedy's column, the first, all ones
  row "$1" | sed 's/| [0-9.]* \/ [0-9.]* \/ [0-9.]* |/|/'
}
echo "| held-out workload | lead | proctime | window |"
echo "| --- | --- | --- | --- |"
heldout() {  # NAME SETTINGS...
  name=$1
  shift
  sets=
  for s in "$@"; do sets="$sets --set $s"; done
  # shellcheck disable=SC2086
  "$cupace" ab "$here/conf/cupace.ini" -q --seeds $seeds --baseline greedy --pacer greedy \
    --pacer lead --pacer proctime --pacer window $sets --json "$tmp" || true
  row_but_greedy "$name"
}
heldout "CPU surplus: synthesis 20 s cv 0.3, kernel 1.5 s, 24 CPUs" workload.synth_time=20s \
  workload.synth_cv=0.3 workload.gpu_kernel=1.5s workload.cpu_slots=24 engine.synth_workers=30
heldout "2 devices x 3 workers, shared kernels, contention 1.3" engine.devices=2 \
  engine.workers_per_device=3 workload.gpu_exclusive=no workload.contention=1.3 \
  workload.synth_cv=0.25 engine.memory_budget=600GiB engine.synth_workers=40 workload.cpu_slots=40 \
  workload.jobs=40
heldout "Poisson every 40 s, gamma synthesis, GPU cv 0.2" workload.arrival=poisson \
  workload.interarrival=40s workload.jobs=60 workload.gpu_cv=0.2 workload.synth_dist=gamma
heldout "bursts of 3 jobs every 10 min, synthesis 45 s" workload.arrival=burst workload.burst_jobs=3 \
  workload.burst_every=10m workload.jobs=24 workload.synth_time=45s workload.cpu_slots=30 \
  engine.synth_workers=30
heldout "one worker per device, kernel 4 s, prep 0.3 s" engine.workers_per_device=1 \
  workload.gpu_prep=0.3s workload.gpu_kernel=4s workload.jobs=15
heldout "budget-bound: 150 GiB, 3 devices" engine.devices=3 engine.memory_budget=150GiB \
  workload.cpu_slots=36 engine.synth_workers=36 workload.jobs=30
heldout "CPU-bound: 10 CPUs under 18 syntheses, synthesis cv 0.3" workload.cpu_slots=10 \
  workload.synth_cv=0.3
heldout "CPU-bound: 8 CPUs under 24 syntheses, kernel 2 s" workload.cpu_slots=8 \
  engine.synth_workers=24 workload.gpu_kernel=2s engine.memory_budget=400GiB
heldout "12 CPUs under 40 syntheses, 600 GiB" workload.cpu_slots=12 engine.synth_workers=40 \
  engine.memory_budget=600GiB workload.jobs=30

echo
echo "synth-bound's twins: the same first fill on more CPUs (C CPUs, synthesis 5C s), $seeds seeds;"
echo "unprobed is lead told as many slots as synthesis workers, which probes nothing:"
echo
echo "| CPUs, synthesis | lead | unprobed | proctime |"
echo "| --- | --- | --- | --- |"
for c in 6 9 12 15 18; do
  # shellcheck disable=SC2086
  "$cupace" ab "$here/conf/scenarios/synth-bound.ini" -q --seeds $seeds --baseline greedy \
    --pacer greedy --pacer lead --pacer unprobed --pacer proctime --set pacer.unprobed.plugin=lead \
    --set pacer.unprobed.slots=18 --set workload.cpu_slots=$c --set workload.synth_time=$((5 * c))s \
    --json "$tmp" || true
  row_but_greedy "$c, $((5 * c)) s"
done

if command -v gnuplot >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  "$cupace" ab "$here/conf/cupace.ini" -q --seeds $seeds --baseline greedy $pacers $seedset \
    --plot "$here/doc/tradeoff.png"
fi
