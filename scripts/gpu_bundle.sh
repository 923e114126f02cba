#!/usr/bin/env bash
# Prepares what a GPU machine without network needs for scripts/gpu_session.sh:
#   .deps/usr          Catch2 2.13 (headers, CMake package, libCatch2WithMain.a) and Box2D 2.4 from this machine
#   .whl/              Taichi and dill wheels for Python 3.12 (the peer benchmark)
#   .deps/window.tar.xz  (--window) the Debian 12 packages the window needs there, unpacked and trimmed:
#                      GLFW, Dear ImGui, GLM, glad, stb, the GL, EGL and Xlib headers to build it; Xvfb, xkbcomp,
#                      the keymaps, glvnd and Mesa's swrast driver (Xvfb's GLX extension needs one) to run
#                      it. gpu_session.sh unpacks it into .deps/win, never into /.
# Both folders are git-ignored; name them in the device call's `carry`.
# usage: scripts/gpu_bundle.sh [--no-taichi] [--window]
set -euo pipefail
cd "$(dirname "$0")/.."
taichi=1 window=0
for arg in "$@"; do
  case $arg in
    --no-taichi) taichi=0 ;;
    --window) window=1 ;;
    *) echo "gpu_bundle.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
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
echo "Catch2 -> .deps/usr ($(du -sh .deps/usr | cut -f1))"

if ((window)); then
  # Build: headers, static ImGui, GLFW and the glad generator. Run: Xvfb with its GLX extension
  # (Mesa's swrast driver, which pulls in LLVM), xkbcomp and the keymaps, GLFW's X11 libraries,
  # and glvnd, whose libGLX hands the window's context to the NVIDIA driver there
  # (__GLX_VENDOR_LIBRARY_NAME=nvidia), so OpenGL runs on the GPU.
  pkgs=(libglfw3 libglfw3-dev libimgui-dev libglm-dev python3-glad libstb-dev libstb0 libgl-dev libglx-dev
        libegl-dev libx11-dev x11proto-dev
        libgl1 libglx0 libglvnd0 libopengl0 libegl1 pkgconf pkgconf-bin libpkgconf3
        xvfb x11-xkb-utils xkb-data libxkbfile1 libxfont2 libfontenc1 libfreetype6 libpng16-16 libbrotli1
        libpixman-1-0 libunwind8 libx11-6 libx11-data libxcb1 libxau6 libxdmcp6 libbsd0 libmd0
        libxrandr2 libxrender1 libxext6 libxinerama1 libxcursor1 libxfixes3 libxi6 libx11-xcb1
        libgl1-mesa-dri libglapi-mesa libllvm15 libdrm2 libdrm-amdgpu1 libdrm-intel1 libdrm-nouveau2
        libdrm-radeon1 libpciaccess0 libelf1 libexpat1 libsensors5 libxcb-dri3-0 libedit2 libffi8 libtinfo6
        libxml2 libzstd1 liblzma5)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download "${pkgs[@]}" >/dev/null 2>&1) ||
    { echo "apt-get download failed (network, or a package name changed)" >&2; exit 1; }
  root=$tmp/root
  for f in "$tmp"/*.deb; do dpkg -x "$f" "$root"; done
  L=$root/usr/lib/x86_64-linux-gnu
  # One libdir: usr-merged and not, the same folder there.
  if [[ -d $root/lib/x86_64-linux-gnu ]]; then cp -a "$root"/lib/x86_64-linux-gnu/. "$L"/; rm -rf "$root/lib"; fi
  # Trim: only swrast among Mesa's drivers (Xvfb loads that one), no documentation.
  find "$L/dri" -type f ! -name swrast_dri.so -delete
  find "$L/dri" -type l ! -name swrast_dri.so -delete
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/lintian" "$root/usr/share/bug"
  # LLVM links libz3 (its static analyser's solver) and libxml2 links ICU (encoding
  # conversions); Mesa's llvmpipe calls neither. Instead of their 55 MB, stubs with the same
  # names that abort loudly if anything ever calls them.
  stub() {  # stub SONAME LIB-THAT-NEEDS-IT PATTERN
    local soname=$1 user=$2 pat=$3 c=$tmp/${1%%.so*}.c
    echo '#include <stdio.h>
#include <stdlib.h>
static void die(const char* f) { fprintf(stderr, "gpu bundle stub: %s called\n", f); abort(); }' >"$c"
    nm -D --undefined-only "$user" | awk -v p="$pat" '$2 ~ p {print $2}' | sed 's/@.*//' | sort -u |
      while read -r s; do echo "void $s(void) { die(\"$s\"); }"; done >>"$c"
    gcc -shared -fPIC -O1 -Wl,-soname,"$soname" -o "$L/$soname" "$c"
  }
  stub libz3.so.4 "$L/libLLVM-15.so.1" '^Z3_'
  stub libicuuc.so.72 "$L/libxml2.so.2" '_72$'
  # Base libraries Xvfb and Mesa link that a minimal image may lack: gpu_session.sh links each
  # one into the search path only when the machine has no library of that name.
  fb=(libaudit1 libcap-ng0 libcap2 libgcrypt20 libgpg-error0 liblz4-1 libpcre2-8-0 libselinux1 libsystemd0
      libbz2-1.0 zlib1g)
  mkdir -p "$tmp/fb"
  (cd "$tmp/fb" && apt-get download "${fb[@]}" >/dev/null 2>&1) || { echo "apt-get download failed" >&2; exit 1; }
  for f in "$tmp"/fb/*.deb; do dpkg -x "$f" "$tmp/fbroot"; done
  mkdir -p "$root/fallback"
  find "$tmp/fbroot" -name '*.so.*' \( -type f -o -type l \) -exec cp -a {} "$root/fallback/" \;
  mkdir -p .deps
  tar -C "$root" -cf - . | xz -T2 -6 >.deps/window.tar.xz
  echo "window packages -> .deps/window.tar.xz ($(du -sh .deps/window.tar.xz | cut -f1))"
fi

if ((taichi)); then
  mkdir -p .whl
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl taichi==1.7.4 dill
  echo "wheels -> .whl ($(du -sh .whl | cut -f1))"
fi
