#!/usr/bin/env bash
# deps.sh - install the Debian packages stint needs to build, test and
# benchmark; skips apt-get when everything is already there.
set -euo pipefail
# build: compiler, elfutils, zlib, libunwind (in-process sampler), protobuf-c (pprof)
# tests: cmocka, python3, valgrind (callgrind_annotate), Go pprof (built offline
# from Debian's sources), chromium + node (the HTML report in a real browser),
# clang + libclang-rt-dev (libFuzzer: the fuzz target over the data-file reader),
# xz-utils (the in-process sampler on liblzma's threads, against perf; xz and gzip,
# stripped Debian binaries patched at load),
# libcapstone-dev (optional: patching programs built without instrumentation),
# libiberty-dev (optional: Rust's function names demangled),
# libc6-dbg (libc's separate, compressed debug file, as -dbg/-dbgsym users have),
# redis-server + redis-tools (a stripped server patched at load, its calls checked
# against its own command counts), gdb (its backtrace through the probes),
# gcc-multilib and musl-tools (32-bit and musl programs a recorded one runs)
pkgs=(build-essential cmake pkg-config libdw-dev libelf-dev zlib1g-dev libcmocka-dev
      libunwind-dev python3 binutils chromium nodejs libprotobuf-c-dev protobuf-c-compiler
      valgrind google-perftools golang-go golang-github-google-pprof-dev go-md2man man-db
      clang libclang-rt-dev xz-utils gzip libcapstone-dev libiberty-dev libc6-dbg
      redis-server redis-tools gdb gcc-multilib musl-tools)
[ "${1:-}" = "--bench" ] && pkgs+=(uftrace linux-perf libgtest-dev) # libgtest-dev: bench/trial-real.sh
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
# npm: bundled with some nodejs builds, a package of its own in Debian's
if ! command -v npm >/dev/null 2>&1; then
	SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm
fi
