#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# twins-floor.sh [CUPACE] -- what learning synth-bound's slots costs, as a
# floor: until n falls, synth-bound (6 CPUs, synthesis 30 s) and its twins
# (C CPUs, synthesis 5C s) give a controller the same signals, so one
# probe serves them all.  The test-only oracle (tests/plugins/oracle.c) is
# blind until the first synthesis ends, then holds K in synthesis until
# three syntheses started at K have ended, and then knows the slots: with
# `step` 0 it learns them from that one level (more than any learner can),
# with `step` 4 it goes on down a quarter at a time while the level is
# above them, as lead does, with a perfect verdict at each level.  Each
# row: synth-bound's makespan / p50 / memory over bound, then each twin's
# makespan (20 paired seeds, ratios to greedy).  Run after `make check`,
# which builds the oracle:
#   CUPACE_PACER_PATH=build/plugins/.libs:build/tests/plugins/.libs doc/twins-floor.sh build/cupace
set -eu
cupace=${1:-cupace}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
seeds=20

# shellcheck source=doc/means.sh
. "$here/doc/means.sh"

twins() {  # NAME PACER [--set ...]: one row, synth-bound then its twins
  name=$1
  pacer=$2
  shift 2
  printf '| %s |' "$name"
  for c in 6 9 12 15 18; do
    # shellcheck disable=SC2068
    "$cupace" ab "$here/conf/scenarios/synth-bound.ini" -q --seeds $seeds --baseline greedy \
      --pacer greedy --pacer "$pacer" $@ --set pacer.oracle.slots=$c --set workload.cpu_slots=$c \
      --set workload.synth_time=$((5 * c))s --json "$tmp" >/dev/null 2>&1 || true
    means "$tmp" "$pacer" | while read -r mk lat mb; do
      if [ "$c" -eq 6 ]; then printf ' %.3f / %.3f / %.2f |' "$mk" "$lat" "$mb"; else printf ' %.3f |' "$mk"; fi
    done
  done
  echo
}

oracle="--set pacer.oracle.plugin=oracle --set pacer.oracle.stock=12"
echo "| probe | synth-bound | 9 CPUs, 45 s | 12, 60 s | 15, 75 s | 18, 90 s |"
echo "| --- | --- | --- | --- | --- | --- |"
# shellcheck disable=SC2086
twins "oracle told the slots" oracle $oracle
# shellcheck disable=SC2086
twins "oracle blind until a synthesis ends" oracle $oracle --set pacer.oracle.blind=1
for k in 17 16 15 14 12 10 8; do
  # shellcheck disable=SC2086
  twins "one level of $k, then knows" oracle $oracle --set pacer.oracle.probe=$k
done
# shellcheck disable=SC2086
twins "a quarter at a time from 14, perfect verdicts" oracle $oracle --set pacer.oracle.probe=14 \
  --set pacer.oracle.step=4
twins "lead" lead
