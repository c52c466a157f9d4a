#!/usr/bin/env bash
# demo.sh - install, build, and profile the bundled demo program.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
./build/stint record -o build/demo.data -- ./build/demo
./build/stint report -i build/demo.data
