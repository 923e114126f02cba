#!/usr/bin/env bash
# Installs what is missing, builds in Release and opens the sandbox on its
# default scene. Without a display it runs the scene headless and writes
# images and a summary to out/. Extra arguments go to `sandbox`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target sandbox
exec build/sandbox "$@"
