#!/usr/bin/env bash
# Installs the Debian packages Particle Sandbox needs, when they are missing.
# Usage: scripts/deps.sh [--gui-test] [--fuzz]
#   --gui-test adds Xvfb and xdotool; --fuzz adds clang 14 and libFuzzer (scripts/fuzz.sh)
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config git
      libglfw3-dev libimgui-dev libglm-dev python3-glad libstb-dev catch2 libgl-dev libegl-dev libx11-dev zlib1g-dev
      libbox2d-dev)
for arg in "$@"; do
  case "$arg" in
    --gui-test) pkgs+=(xvfb xauth xdotool libgl1-mesa-dri) ;;
    --fuzz) pkgs+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "Installing missing packages: ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null; then
  SUDO=(sudo)
else
  echo "error: these packages are missing and I am not root (no sudo): ${missing[*]}" >&2
  echo "       install them with: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
