#!/usr/bin/env bash
# Installs every Debian package plush uses. Idempotent. `--check` only reports whether all are present.
# `--windows` adds what the Windows build needs (make windows, test-windows, dist-windows): MinGW-w64, the
# tools that build its libraries from Debian's source packages (tools/build-windows-deps.sh), Wine, zip;
# `--windows --check` reports on those too. CI passes it; a Linux user's `make run` does not pull them.
# `--clients` also installs the real clients used to check exports by hand (Blender with numpy for
# tools/blender_gltf_check.py); no test needs them, and they are large, so CI leaves them out.
set -euo pipefail
if [ "${1:-}" = "--clients" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends blender python3-numpy
  exit 0
fi
PACKAGES=(
  build-essential pkg-config
  libbullet-dev libcglm-dev libcmocka-dev libembree-dev libmeshoptimizer-dev libstb-dev
  clang ffmpeg
)
if [ "${1:-}" = "--windows" ]; then
  shift
  PACKAGES+=(gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix mingw-w64-x86-64-dev cmake dpkg-dev
             wine64 zip unzip python3)
fi
# The Khronos glTF-Validator for the glTF tests: Debian's node and npm, the package from npm into the
# git-ignored tools/node. A machine that has node from elsewhere (nodesource bundles npm) keeps it.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
install_validator() {
  [ -f "$ROOT/tools/node/node_modules/gltf-validator/package.json" ] && return 0
  command -v npm >/dev/null 2>&1 || return 0
  npm install --prefix "$ROOT/tools/node" --no-audit --no-fund gltf-validator >/dev/null ||
    echo "plush: npm could not install gltf-validator (the glTF validation test will be skipped)" >&2
}
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-}" = "--check" ]; then
  # the validator is optional for building: its test skips without it
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "plush: missing packages: ${missing[*]}" >&2
  exit 1
fi
if [ ${#missing[@]} -eq 0 ]; then
  install_validator
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
install_validator
