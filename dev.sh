#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# dev.sh -- set up a fresh Debian machine, build cupace, and run or test it.
#
#   ./dev.sh run     install what is missing, build, run `cupace ab` on the default config
#   ./dev.sh test    install what is missing, build, run the test suite (make check)
#   ./dev.sh build   install what is missing and build
#
# The build lives in ./build (out of tree); the source tree stays clean.
set -eu
cd "$(dirname "$0")"

deps="autoconf automake libtool pkg-config make gcc check gnuplot-nox postgresql libpq-dev libmicrohttpd-dev"
missing=
for p in $deps; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "dev.sh: installing:$missing" >&2
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

[ -x configure ] || ./autogen.sh >/dev/null 2>&1
mkdir -p build
[ -f build/Makefile ] || (cd build && ../configure -q)
jobs=$(nproc 2>/dev/null || echo 2)
make -C build -s -j"$jobs" >/dev/null     # errors still reach stderr

case ${1:-build} in
  run)
    CUPACE_PACER_PATH=build/plugins/.libs exec build/cupace ab conf/cupace.ini ;;
  test)
    make -C build -s -j"$jobs" check ;;
  build) ;;
  *) echo "usage: ./dev.sh run|test|build" >&2; exit 2 ;;
esac
