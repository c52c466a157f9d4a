#!/usr/bin/env bash
# test.sh - install, build, and run every test: once on the release build
# (warnings as errors, with -Wshadow -Wconversion -Wundef -Wformat=2), once
# more on a build with AddressSanitizer and UBSan; and build the tools with
# clang, warnings as errors too.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSTINT_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSTINT_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure -j"$jobs")
CC=clang CXX=clang++ cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DSTINT_WERROR=ON \
  -DBUILD_TESTING=OFF >/dev/null
cmake --build build-clang -j"$jobs"
# the optional dependencies (protobuf-c for pprof, libunwind for the
# in-process sampler, libiberty for Rust's names) are optional: the tools
# build without them
cmake -S . -B build-min -DCMAKE_BUILD_TYPE=Release -DSTINT_WERROR=ON -DBUILD_TESTING=OFF \
  -DSTINT_WITH_PPROF=OFF -DSTINT_WITH_INPROC=OFF -DSTINT_WITH_IBERTY=OFF >/dev/null
cmake --build build-min -j"$jobs" --target stint
