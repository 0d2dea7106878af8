#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# heldout.sh [CUPACE] [COUNT] [DRAW] [change] -- controllers on workloads nobody
# tuned on: COUNT (150) random workloads, each a set of --set changes on
# conf/cupace.ini (devices, workers, exclusive or shared kernels, synthesis
# time, spread and law, CPUs against synthesis workers, kernel time,
# arrivals, jobs, budget), drawn from DRAW (1) by a fixed generator, so
# that the same DRAW gives the same workloads on any machine.  Each runs
# greedy, lead and proctime on 6 paired seeds.  One line per workload,
# then per controller the mean makespan ratio to greedy, how many are
# more than 1% (and 2%) behind, the worst, and the mean memory over bound.
# With `change`, each workload of the draw (the same ones) also gets a step
# change at 120, 300 or 600 s: its kernel or its synthesis twice or half as
# long, or 1.5 or 0.67 times (drawn from a second generator, so that the
# workloads themselves are those without it).
#   CUPACE_PACER_PATH=build/plugins/.libs doc/heldout.sh build/cupace 150 2
set -eu
cupace=${1:-cupace}
count=${2:-150}
draw=${3:-1}
change=${4:-}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
out=$(mktemp)
trap 'rm -f "$tmp" "$tmp.w" "$out"' EXIT

# the workloads: a 32-bit LCG in awk's doubles (exact below 2^53), so that
# mawk and gawk draw alike
awk -v n="$count" -v seed="$draw" -v change="$change" '
  function u() { x = (1664525 * x + 1013904223) % 4294967296; return x / 4294967296 }
  function pick(list,   a, k) { k = split(list, a, " "); return a[int(u() * k) + 1] }
  function v() { y = (1664525 * y + 1013904223) % 4294967296; return y / 4294967296 }
  function vpick(list,   a, k) { k = split(list, a, " "); return a[int(v() * k) + 1] }
  BEGIN {
    x = seed * 2654435761 % 4294967296
    y = (seed + 1000) * 2654435761 % 4294967296
    for (i = 1; i <= n; i++) {
      sw = pick("8 12 18 24 36 48"); slots = int(sw * pick("0.3 0.5 0.7 1 1 1.5")); if (slots < 1) slots = 1
      ex = pick("yes yes no"); arr = pick("backlog backlog poisson burst")
      s = sprintf("engine.devices=%s engine.workers_per_device=%s workload.gpu_exclusive=%s", pick("1 1 2 3"), pick("1 2 2 3"), ex)
      st = pick("5 10 20 30 45 60")
      s = s sprintf(" workload.synth_time=%ss workload.synth_cv=%s engine.synth_workers=%s workload.cpu_slots=%d", st, pick("0 0.1 0.15 0.3 0.5"), sw, slots)
      gk = pick("0.5 1 1.5 2.5 4")
      s = s sprintf(" workload.gpu_kernel=%ss workload.arrival=%s workload.jobs=%s workload.partitions_per_job=%s", gk, arr, pick("10 20 40"), pick("1 5 10"))
      s = s sprintf(" workload.gpu_cv=%s workload.synth_dist=%s engine.memory_budget=%s", pick("0.02 0.05 0.2"), pick("lognormal gamma"), pick("314GiB 600GiB 2000GiB"))
      if (ex == "no") s = s " workload.contention=" pick("1.0 1.3 2.0")
      if (arr == "poisson") s = s " workload.interarrival=" pick("10 30 60 120") "s"
      if (arr == "burst") s = s " workload.burst_jobs=" pick("2 3 5") " workload.burst_every=" pick("5m 10m")
      if (change != "") {
        f = vpick("2 0.5 1.5 0.67")
        s = s " workload.change=" vpick("120 300 600") "s:" (v() < 0.5 ? "gpu_kernel=" gk * f : "synth_time=" st * f) "s"
      }
      print s
    }
  }' >"$tmp.w"

i=0
while read -r w; do
  i=$((i + 1))
  sets=
  for s in $w; do sets="$sets --set $s"; done
  # shellcheck disable=SC2086
  if ! "$cupace" ab "$here/conf/cupace.ini" -q --seeds 6 --baseline greedy --pacer greedy \
       --pacer lead --pacer proctime $sets --json "$tmp" >/dev/null 2>&1; then
    echo "$i failed: $w"
    continue
  fi
  awk -v i="$i" -v w="$w" '
    /"summary"/ { s = 1 }
    s && /"pacer":/ { split($0, a, "\""); p = a[4] }
    s && /"makespan_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mk[p] = v }
    s && /"memory_mean_over_bound"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mb[p] = v }
    END { printf "%d lead %.4f %.2f proctime %.4f %.2f greedy %.2f | %s\n", i, mk["lead"], mb["lead"],
          mk["proctime"], mb["proctime"], mb["greedy"], w }' "$tmp" | tee -a "$out"
done <"$tmp.w"

echo
awk '
  function add(p, mk, mb) { n[p]++; s[p] += mk; m[p] += mb; if (mk > 1.01) a[p]++; if (mk > 1.02) b[p]++
                            if (mk > worst[p]) worst[p] = mk }
  $2 == "lead" { add("lead", $3, $4); add("proctime", $6, $7); add("greedy", 1, $9)
                 if ($3 > $6 + 0.01) behind++; if ($6 > $3 + 0.01) ahead++ }
  END {
    if (!n["lead"]) { print "no workload ran: is CUPACE_PACER_PATH set?"; exit 1 }
    printf "%d workloads x 6 seeds; makespan ratio to greedy and memory over bound:\n", n["lead"]
    for (k = 1; k <= 3; k++) {
      p = k == 1 ? "lead" : k == 2 ? "proctime" : "greedy"
      printf "  %-9s makespan mean %.4f, over 1.01: %d, over 1.02: %d, worst %.4f; memory / bound mean %.3f\n",
             p, s[p] / n[p], a[p], b[p], worst[p], m[p] / n[p]
    }
    printf "  lead more than 1%% behind proctime on %d, more than 1%% ahead on %d\n", behind, ahead
  }' "$out"
