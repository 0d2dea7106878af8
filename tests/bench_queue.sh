#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# bench_queue.sh -- `make bench`: runs bench_queue on a throwaway PostgreSQL
# server (pg-harness.sh); says so and succeeds when PostgreSQL is absent.
srcdir=${1:-.}
. "$srcdir/pg-harness.sh"
pg_start_bench bench_queue
./bench_queue
