#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# run.sh SECONDS SRCDIR NAME... -- runs each libFuzzer harness fuzz_NAME
# (built in the current folder) for SECONDS, one after the other, and says
# how many inputs each executed.  New inputs go to fuzz-corpus/NAME (the
# checked-in seeds in SRCDIR/NAME are read, never written); a crash, a
# leak, a hang or an oracle's abort leaves its input in fuzz-artifacts/ and
# makes the exit status 1.  Full logs: fuzz-NAME.log.
#
# Extra libFuzzer flags may be given in FUZZ_FLAGS.
set -u
secs=$1
srcdir=$2
shift 2
status=0
mkdir -p fuzz-artifacts
for name in "$@"; do
  mkdir -p "fuzz-corpus/$name"
  dict=
  case $name in conf|set) dict=-dict=$srcdir/ini.dict ;; esac
  # -timeout: an input that takes 10 s is a hang; -max_len: longer than the
  # readers' line buffers (4096), so lines that do not fit are tried too.
  ./fuzz_"$name" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
      -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="fuzz-artifacts/$name-" \
      $dict ${FUZZ_FLAGS:-} "fuzz-corpus/$name" "$srcdir/$name" > "fuzz-$name.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "fuzz-$name.log")
  units=$(ls "fuzz-corpus/$name" | wc -l)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$name: ${execs:-?} executions in ${secs} s, ${units} new corpus inputs: ok"
  else
    status=1
    grep -E -A12 'ERROR|oracle failed|runtime error|Test unit written' "fuzz-$name.log" | head -40
    echo "fuzz_$name: ${execs:-?} executions: FAILED (exit $rc; fuzz-$name.log)"
  fi
done
exit $status
