#!/usr/bin/env bash
# Formats every C++ and CUDA source in the repository with the committed .clang-format
# (clang-format-14, Debian's clang-format-14 package). --check: lists the files that differ
# and exits 1 instead of writing.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "format.sh: clang-format-14 not found (apt-get install clang-format-14)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$fmt" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "$f"
      bad=1
    fi
  done
  exit $bad
fi
"$fmt" --style=file -i "${files[@]}"
