#!/usr/bin/env bash
# Installs every Debian package plush uses. Idempotent. `--check` only reports whether all are present.
set -euo pipefail
PACKAGES=(
  build-essential pkg-config
  libbullet-dev libcglm-dev libcmocka-dev libembree-dev libmeshoptimizer-dev libstb-dev
  clang ffmpeg
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${1:-}" = "--check" ]; then
  [ ${#missing[@]} -eq 0 ] && exit 0
  echo "plush: missing packages: ${missing[*]}" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
