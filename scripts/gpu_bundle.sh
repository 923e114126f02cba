#!/usr/bin/env bash
# Prepares what a GPU machine without network needs for scripts/gpu_session.sh:
#   .deps/usr   Catch2 2.13 (headers, CMake package, libCatch2WithMain.a) and Box2D 2.4 from this machine
#   .whl/       Taichi and dill wheels for Python 3.12 (the peer benchmark)
# Both folders are git-ignored; name them in the device call's `carry`.
# usage: scripts/gpu_bundle.sh [--no-taichi]
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -f /usr/include/catch2/catch.hpp ]] || { echo "catch2 missing here: apt-get install catch2" >&2; exit 1; }
rm -rf .deps/usr
mkdir -p .deps/usr/include .deps/usr/lib/cmake
cp -r /usr/include/catch2 .deps/usr/include/
cp -r /usr/lib/cmake/Catch2 .deps/usr/lib/cmake/
cp /usr/lib/libCatch2WithMain.a .deps/usr/lib/
# Box2D 2.4 (rigid bodies): headers, CMake package and the shared library, same layout.
[[ -f /usr/include/box2d/box2d.h ]] || { echo "box2d missing here: apt-get install libbox2d-dev" >&2; exit 1; }
mkdir -p .deps/usr/lib/x86_64-linux-gnu/cmake
cp -r /usr/include/box2d .deps/usr/include/
cp -r /usr/lib/x86_64-linux-gnu/cmake/box2d .deps/usr/lib/x86_64-linux-gnu/cmake/
cp -a /usr/lib/x86_64-linux-gnu/libbox2d.so* .deps/usr/lib/x86_64-linux-gnu/
echo "Catch2 -> .deps/usr ($(du -sh .deps | cut -f1))"
if [[ "${1:-}" != "--no-taichi" ]]; then
  mkdir -p .whl
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl taichi==1.7.4 dill
  echo "wheels -> .whl ($(du -sh .whl | cut -f1))"
fi
