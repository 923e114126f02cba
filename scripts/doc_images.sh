#!/bin/sh
# Refreshes the window's screenshots in docs/images from the GUI tests that take them
# (gui_lesson_tour: every lesson in presenter view, lesson 01's stopped block, lesson 06's
# bonds near breaking; gui_compare_layout: dam_break's comparison tiled by its aspect).
# Usage: scripts/doc_images.sh [BUILD_DIR]   (a build with the window; default build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out="$root/docs/images"
for t in gui_lesson_tour gui_compare_layout; do
  python3 "$root/tests/gui/${t}_test.py" --sandbox "$build/sandbox" --work "$(mktemp -d)" --images "$out"
done
echo "docs/images refreshed from $build/sandbox"
