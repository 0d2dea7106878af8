#!/bin/bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# report-identity.sh -- the proof that a reshaping moved no figure.
#
#   tests/report-identity.sh save BUILD DIR     write every shipped scenario's `cupace ab --json`
#                                               report (all its pacers) from BUILD into DIR
#   tests/report-identity.sh diff DIR1 DIR2     compare two such folders, ignoring only the
#                                               cupace_version and config fields
#
# BUILD is a build folder (holding cupace and plugins/.libs). Run from the source tree's top.
# Exit 0 when every report is identical, 1 when one differs, 2 on usage errors.
set -eu
strip() { sed 's/"cupace_version": "[^"]*"//; s/"config": "[^"]*"//' "$1"; }
usage() { echo "usage: $0 save BUILD DIR | diff DIR1 DIR2" >&2; exit 2; }
[ $# -eq 3 ] || usage
case $1 in
  save)
    build=$2; out=$3; mkdir -p "$out"
    for f in conf/cupace.ini conf/scenarios/*.ini; do
      name=$(basename "$f" .ini)
      CUPACE_PACER_PATH="$build/plugins/.libs" "$build/cupace" ab "$f" -q --json "$out/$name.json" --csv "$out/$name.csv" \
        >/dev/null 2>&1 || true   # a stalled scenario still writes its report
      [ -s "$out/$name.json" ] || { echo "$0: no report for $f" >&2; exit 1; }
    done ;;
  diff)
    rc=0
    for a in "$2"/*.json "$2"/*.csv; do
      b="$3/$(basename "$a")"
      [ -f "$b" ] || { echo "missing: $b"; rc=1; continue; }
      if ! diff <(strip "$a") <(strip "$b") >/dev/null; then
        echo "differs: $(basename "$a")"; rc=1
      fi
    done
    [ $rc -eq 0 ] && echo "all $(ls "$2"/*.json "$2"/*.csv | wc -l) reports and series identical"
    exit $rc ;;
  *) usage ;;
esac
