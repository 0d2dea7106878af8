#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# gpu-check.sh [RESULTS] -- the one prepared command that checks a real GPU.
#
# Builds cupace from a clean copy of this tree with CUDA (--with-cuda),
# runs the test-double suite and the device tests (check_cuda, check_gpu),
# then a real-time A/B on the device of proctime, greedy and window on the
# seed's two-worker case and on PoRep-like numbers, each scaled (time_scale)
# so that the A/B takes about 60 s in all.  Every figure goes to RESULTS
# (default: ./gpu-check.txt): device time against worker time, the busy
# fraction by CUDA events and by the host's timeline, the calibration.
# Where no device answers it says so and exits 77 (skipped).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$PWD/gpu-check.txt}
case $out in /*) ;; *) out=$PWD/$out ;; esac
jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/cupace-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
log() { echo "$*" | tee -a "$out"; }

: > "$out"
log "== cupace gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
command -v nvidia-smi >/dev/null 2>&1 &&
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader >> "$out" 2>&1 || true

# A clean tree: the tracked files only (or a plain copy outside git).
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" ls-files -z | (cd "$src" && xargs -0 tar cf -) | (mkdir "$work/src" && cd "$work/src" && tar xf -)
else
  cp -R "$src" "$work/src" && rm -rf "$work/src/build"*
fi
cd "$work/src"
[ -x configure ] || autoreconf -fi > "$work/autoreconf.log" 2>&1
mkdir "$work/build" && cd "$work/build"
if ! ../src/configure -q --with-cuda > "$work/configure.log" 2>&1; then
  log "gpu-check: configure --with-cuda failed:"; tail -5 "$work/configure.log" | tee -a "$out"; exit 1
fi
make -s -j"$jobs" > "$work/make.log" 2>&1 || { tail -20 "$work/make.log"; exit 1; }
make -s -j"$jobs" -C tests check_cuda check_gpu > "$work/make-tests.log" 2>&1 ||
  { tail -20 "$work/make-tests.log"; exit 1; }

# No device: say so, skip.
set +e
make -s -C tests check TESTS="check_cuda check_gpu" > "$work/check.log" 2>&1
rc=$?
set -e
cat tests/check_cuda.log tests/check_gpu.log >> "$out" 2>/dev/null || true
if grep -q '^SKIP: check_gpu' "$work/check.log"; then
  log "gpu-check: skipped: $(grep 'skipped' tests/check_gpu.log | head -1)"
  exit 77
fi
if [ "$rc" -ne 0 ]; then
  log "gpu-check: the device tests failed (see above)"; exit 1
fi
log "gpu-check: device tests passed"

# The A/B.  Each scenario is first simulated to learn its makespan, then
# scaled so that each controller's real run takes about 10 s.
export CUPACE_PACER_PATH="$work/build/plugins/.libs"
cupace=$work/build/cupace
ab() {  # ab NAME CONFIG SETS...
  name=$1 cfg=$2
  shift 2
  span=$("$cupace" ab "$cfg" -q --set engine.mode=sim "$@" --pacer proctime --pacer greedy \
           --pacer window --json - 2>/dev/null | sed -n 's/.*"makespan_s": \([0-9.e+-]*\).*/\1/p' |
         sort -g | tail -1)
  scale=$(awk -v s="$span" 'BEGIN { printf "%.6g", (s > 0 ? 10 / s : 1) }')
  log "== A/B $name: simulated makespan ${span} s, time_scale $scale"
  set +e
  "$cupace" ab "$cfg" --set engine.mode=realtime --set engine.backend=cuda \
    --set workload.time_scale="$scale" "$@" --pacer proctime --pacer greedy --pacer window \
    --json "$work/$name.json" >> "$out" 2>&1
  echo "exit $?" >> "$out"
  set -e
  cat "$work/$name.json" >> "$out" 2>/dev/null || true
  # the three figures of the closing note, per controller
  awk '
    /"pacer":/ { match($0, /"pacer": "[^"]*"/); p = substr($0, RSTART + 10, RLENGTH - 11) }
    /"gpu_busy_fraction":/ { match($0, /"gpu_busy_fraction": [0-9.e+-]*/); b = substr($0, RSTART + 21, RLENGTH - 21) }
    /"gpu_time_s":/ {
      match($0, /"device": [0-9.e+-]*/); d = substr($0, RSTART + 10, RLENGTH - 10)
      match($0, /"worker": [0-9.e+-]*/); w = substr($0, RSTART + 10, RLENGTH - 10)
      match($0, /"gpu_busy_fraction_host": [0-9.e+-]*/); h = substr($0, RSTART + 26, RLENGTH - 26)
      printf "%s: gpu_busy_fraction %s (events) %s (host timeline); device %s s, worker %s s\n", p, b, h, d, w
    }' "$work/$name.json" | tee -a "$out"
}
ab seed "$src/conf/scenarios/two-worker-seed.ini"
ab porep "$src/conf/scenarios/porep-c2-backlog.ini" --set workload.jobs=20
log "== gpu-check done: every figure is in $out"
