#!/bin/sh
# spawn_work.sh - the workload of bench/bench-spawn.sh: what a build script,
# a configure run or a version-manager shim does, many short processes.
# Each of ROUNDS (argv[1], default 25) rounds starts four programs (true,
# basename in a command substitution, a second shell, tr in a pipeline).
rounds=${1:-25}
i=0
while [ "$i" -lt "$rounds" ]; do
	/bin/true
	x=$(basename /a/b/c)
	/bin/bash -c ':'
	echo "$x" | tr a-z A-Z >/dev/null
	i=$((i + 1))
done
