#!/usr/bin/env bash
# bench-spawn.sh - what instrumentation adds to a program that starts many
# short processes (bench/spawn_work.sh under Debian's bash: 100 commands),
# where each process's start-up is most of the cost: stint record (every
# program patched at load), uftrace record -P . (its dynamic patching, which
# follows the exec'd programs too), and for reference sampling by stint and
# by perf record -g; medians of several runs, as ratios to the run alone.
#
#   bash bench/bench-spawn.sh             # RUNS=5, ROUNDS=25
#   WORK=compile bash bench/bench-spawn.sh  # gcc -O2 -c of a small file, ROUNDS=5
#
# Environment (all optional): STINT (default build/stint), RUNS (5), ROUNDS
# (25; 5 with WORK=compile), WORK (spawn: bench/spawn_work.sh, or compile:
# bench/compile_work.sh).  Writes into bench/out/ (gitignored); the summary also goes to
# bench/out/spawn-summary.md.  See bench/README.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
RUNS="${RUNS:-5}"
WORK="${WORK:-spawn}"
case "$WORK" in
spawn) ROUNDS="${ROUNDS:-25}" per=4 ;;
compile) ROUNDS="${ROUNDS:-5}" per=3; bench_need gcc ;; # gcc, cc1, as
*) echo "bench-spawn: WORK is spawn or compile, not '$WORK'" >&2; exit 1 ;;
esac
bench_need uftrace perf python3 bash
bench_check RUNS ROUNDS
exec python3 "$here/bench_spawn.py" --stint "$STINT" --out "$out" --runs "$RUNS" --rounds "$ROUNDS" \
	--work "$here/${WORK}_work.sh" --commands-per-round "$per"
