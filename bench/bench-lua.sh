#!/usr/bin/env bash
# bench-lua.sh - how accurate stint's probe-cost compensation is on a real
# program: Lua 5.3 running bench/lua_work.lua (table inserts, string
# building, recursion, sorting).
#
# Not a test: a script a developer runs.  It fetches Lua's C sources with
# `npm pack lua-src` (or takes them from LUA_SRC), builds lua-inst
# (-O2 -g -finstrument-functions) and lua-plain (-O2 -g), then compares
# stint's compensated exclusive shares of lua-inst with perf's sampled
# shares of lua-plain (bench_lua.py says how).  The figure printed last is
# the summed absolute gap over stint's top 20 functions, in percentage
# points: the smaller, the closer compensation brings stint to a run
# without probes.
#
#   bash bench/bench-lua.sh                    # 3 rounds, median gap
#   RUNS=5 bash bench/bench-lua.sh
#   LUA_SRC=/path/to/lua-5.3/src bash bench/bench-lua.sh   # offline
#   REPORT_OPTIONS=--no-compensation bash bench/bench-lua.sh
#   PATCHED=1 bash bench/bench-lua.sh     # record lua-plain patched at load
#                                         # (perf's shares then by symbol)
#
# Builds into bench/out/lua/ (gitignored).  See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out/lua"
STINT="${STINT:-$root/build/stint}"
RUNS="${RUNS:-3}"
REPORT_OPTIONS="${REPORT_OPTIONS:-}"

missing=()
need() { command -v "$1" >/dev/null 2>&1 || missing+=("$1 (Debian package $2)"); }
need gcc gcc
need perf linux-perf
need addr2line binutils
need python3 python3
[ -n "${LUA_SRC:-}" ] || need npm npm
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench-lua: missing tools:" >&2
	for m in "${missing[@]}"; do echo "  - $m" >&2; done
	echo "install them with:  bash scripts/deps.sh --bench" >&2
	exit 1
fi
if [ ! -x "$STINT" ]; then
	echo "bench-lua: no stint at '$STINT' (build it, or set STINT=/path/to/stint)" >&2
	exit 1
fi
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "bench-lua: RUNS must be a positive number" >&2; exit 1; }

mkdir -p "$out"
src="${LUA_SRC:-$out/package/src}"
if [ ! -f "$src/lua.c" ]; then
	echo "fetching Lua's sources: npm pack lua-src"
	if ! (cd "$out" && npm pack lua-src >/dev/null 2>&1); then
		echo "bench-lua: 'npm pack lua-src' failed (offline?): set LUA_SRC to a Lua 5.3 src/ directory" >&2
		exit 1
	fi
	tar xzf "$out"/lua-src-*.tgz -C "$out"
fi
srcs=()
for f in "$src"/*.c; do
	case "$(basename "$f")" in luac.c) ;; *) srcs+=("$f") ;; esac
done
CC="${CC:-gcc}"
flags=(-O2 -g -no-pie -DLUA_USE_POSIX -DLUA_USE_DLOPEN)
echo "building lua-plain and lua-inst into $out"
$CC "${flags[@]}" -o "$out/lua-plain" "${srcs[@]}" -lm -ldl -Wl,-E
$CC "${flags[@]}" -finstrument-functions -o "$out/lua-inst" "${srcs[@]}" -lm -ldl -Wl,-E
expected="$("$out/lua-plain" "$here/lua_work.lua")"
got="$("$out/lua-inst" "$here/lua_work.lua")"
[ "$got" = "$expected" ] || { echo "bench-lua: lua-inst prints '$got', lua-plain '$expected'" >&2; exit 1; }

echo "stint $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo '+dirty'), $RUNS rounds"
exec python3 "$here/bench_lua.py" --out "$out" --stint "$STINT" --runs "$RUNS" --script "$here/lua_work.lua" \
	--report-options "$REPORT_OPTIONS" $([ "${PATCHED:-0}" = 1 ] && echo --patched)
