# SPDX-License-Identifier: MIT OR Apache-2.0
# shellcheck shell=sh
# means.sh -- sourced by doc/floor.sh and doc/twins-floor.sh.

means() {  # JSON PACER: PACER's makespan, job p50 and memory/bound means from a `cupace ab --json`
  awk -v want="$2" '
    /"summary"/ { s = 1 }
    s && /"pacer":/ { split($0, a, "\""); p = a[4] }
    s && p == want && /"makespan_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mk = v }
    s && p == want && /"job_latency_p50_ratio"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); lat = v }
    s && p == want && /"memory_mean_over_bound"/ { v = $0; sub(/.*"mean": /, "", v); sub(/,.*/, "", v); mb = v }
    END { printf "%.3f %.3f %.3f\n", mk, lat, mb }' "$1"
}
