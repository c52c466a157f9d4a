#!/bin/sh
# run_fuzz.sh FUZZER SECONDS SEEDS OUTDIR - a bounded run of a libFuzzer
# target (fuzz_parse or fuzz_reader) from the committed seed corpus, its new
# inputs in a scratch directory (removed after).  A crashing input is kept
# as OUTDIR/TARGET-crash-* and the run fails.  doc/safety.md has the longer
# run.
set -u
fuzzer=$1 secs=$2 seeds=$3 out=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/stint-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
"$fuzzer" -max_total_time="$secs" -max_len=65536 -timeout=30 -rss_limit_mb=3072 \
	-print_final_stats=1 -artifact_prefix="$out/$(basename "$fuzzer")-crash-" "$work" "$seeds"
