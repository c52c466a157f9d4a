#!/usr/bin/env bash
# trial-real.sh - stint on real programs nobody here wrote, as a new user
# runs them: Lua 5.3 (npm pack lua-src), SQLite's shell (npm pack sqlite3,
# whose package carries the amalgamation) and googletest's death tests
# (Debian's libgtest-dev sources: clone()d children, exec, exceptions,
# threads), each built plain -O2 (patched at load) and with
# -finstrument-functions; then Debian's redis-server (patched at load: threads,
# a fork for BGSAVE) under redis-benchmark, alone, under stint and under
# uftrace, its calls checked against the server's own INFO commandstats.
#
# Not a test: a script a developer runs (~5 minutes).  trial_real.py
# checks, per program: the output and exit status are the same with and
# without stint; calls of the plain build equal those of the instrumented
# one (Lua is built with -fno-inline and a fixed string-hash seed for
# that, so both builds make the same calls); no reported value is negative,
# inclusive >= exclusive, Application <= Elapsed; and it prints the
# session's compensated times next to the program's own CPU time, and
# stint's top exclusive shares next to perf's (when perf is installed).
# Exit status 1 when a check failed.
#
#   bash scripts/deps.sh --bench      # perf, libgtest-dev, npm, redis-server
#   bash bench/trial-real.sh
#   LUA_SRC=/path/lua-5.3/src SQLITE_SRC=/path/sqlite-autoconf bash bench/trial-real.sh  # offline
#
# Builds into bench/out/real/ (gitignored).  See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out/real"
STINT="${STINT:-$root/build/stint}"
[ -x "$STINT" ] || { echo "trial-real: no stint at '$STINT' (build it first)" >&2; exit 1; }
for t in gcc g++ python3; do
	command -v "$t" >/dev/null 2>&1 || { echo "trial-real: $t is missing: bash scripts/deps.sh --bench" >&2; exit 1; }
done
mkdir -p "$out"
cd "$out"

# --- the sources ---------------------------------------------------------
lua_src="${LUA_SRC:-$out/lua/package/src}"
if [ ! -f "$lua_src/lua.c" ]; then
	mkdir -p lua
	(cd lua && npm pack lua-src >/dev/null 2>&1 && tar xzf lua-src-*.tgz) ||
		{ echo "trial-real: 'npm pack lua-src' failed (offline?): set LUA_SRC" >&2; exit 1; }
fi
sq_src="${SQLITE_SRC:-}"
if [ -z "$sq_src" ]; then
	sq_src="$(ls -d "$out"/sqlite/sqlite-autoconf-* 2>/dev/null | head -1 || true)"
fi
if [ -z "$sq_src" ] || [ ! -f "$sq_src/sqlite3.c" ]; then
	mkdir -p sqlite
	(cd sqlite && npm pack sqlite3 >/dev/null 2>&1 && tar xzf sqlite3-*.tgz &&
		tar xzf package/deps/sqlite-autoconf-*.tar.gz) ||
		{ echo "trial-real: 'npm pack sqlite3' failed (offline?): set SQLITE_SRC" >&2; exit 1; }
	sq_src="$(ls -d "$out"/sqlite/sqlite-autoconf-* | head -1)"
fi
gt=/usr/src/googletest/googletest

# --- the builds (each once; delete bench/out/real to rebuild) ------------
build() { # name, then the compiler command
	local name="$1"
	shift
	[ -x "$name" ] && return 0
	echo "building $name"
	nice "$@" -o "$name"
}
mkdir -p luad
cp "$lua_src"/*.[ch] luad/
# the string hash's seed mixes in addresses (ASLR): fixed, so both builds
# hash, and so call, alike
sed -i 's/g->seed = makeseed(L);/g->seed = 0x5eed; (void)makeseed;/' luad/lstate.c
lua_files=$(ls luad/*.c | grep -v luac.c)
lua_flags="-g -O2 -fno-inline -fno-ipa-cp -fno-ipa-sra -DLUA_USE_POSIX -DLUA_USE_DLOPEN"
# shellcheck disable=SC2086
build lua-plain gcc $lua_flags $lua_files -lm -ldl -Wl,-E
# shellcheck disable=SC2086
build lua-inst gcc $lua_flags -finstrument-functions $lua_files -lm -ldl -Wl,-E
build sqlite-plain gcc -g -O2 "$sq_src/shell.c" "$sq_src/sqlite3.c" -lpthread -ldl -lm
build sqlite-inst gcc -g -O2 -finstrument-functions "$sq_src/shell.c" "$sq_src/sqlite3.c" -lpthread -ldl -lm
if [ -f "$gt/src/gtest-all.cc" ]; then
	[ -f gtest-all.o ] || nice g++ -g -O2 -pthread -I"$gt/include" -I"$gt" -c "$gt/src/gtest-all.cc" -o gtest-all.o
	[ -f gtest_main.o ] || nice g++ -g -O2 -pthread -I"$gt/include" -I"$gt" -c "$gt/src/gtest_main.cc" -o gtest_main.o
	build gtest-death-plain g++ -g -O2 -pthread -I"$gt/include" -I"$gt" \
		"$gt/test/googletest-death-test-test.cc" gtest-all.o gtest_main.o
else
	echo "trial-real: no googletest sources (Debian libgtest-dev): its trial is skipped"
fi

exec python3 "$here/trial_real.py" --stint "$STINT" --out "$out"
