#!/bin/sh
# compile_work.sh - the workload of `WORK=compile bash bench/bench-spawn.sh`:
# a compiler run ROUNDS times (argv[1], default 5) on a small C file
# (bench/tiny_calls.c), as a build does: gcc starts cc1 (25 MB of code,
# tens of thousands of C++ functions) and as for each file; the objects go
# to a temporary directory.
rounds=${1:-5}
src="$(dirname "$0")/tiny_calls.c"
dir=$(mktemp -d)
i=0
while [ "$i" -lt "$rounds" ]; do
	gcc -O2 -c "$src" -o "$dir/tiny_calls.o"
	i=$((i + 1))
done
rm -rf "$dir"
