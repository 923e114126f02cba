#!/usr/bin/env bash
# Installs what is missing, builds everything (library, app, tests, bench) in
# Release and runs the whole test suite with ctest, GUI test included; then
# every fuzz harness for 30 s under ASan + UBSan (scripts/fuzz.sh --smoke).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --gui-test --fuzz
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 --timeout 900
scripts/fuzz.sh --smoke
