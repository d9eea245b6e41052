#!/usr/bin/env bash
# Builds the libraries plush needs for x86_64 Windows from Debian's own source packages, with Debian's
# MinGW-w64 (posix threads flavour), into a prefix that later builds reuse:
#   Bullet (static: LinearMath, BulletCollision, BulletDynamics, BulletSoftBody -- linked into the physics
#   DLL), cmocka (static, for the test suites), meshoptimizer (a DLL: plush loads it at run time and falls
#   back to its own code without it); header-only cglm and stb, and Embree's headers (plush is built
#   against them and runs without the library, as on Linux without libembree3), as Debian ships them.
# Nothing comes from anywhere but Debian's archive. Usage:
#   tools/build-windows-deps.sh [PREFIX]      (default: $PLUSH_WINDOWS_PREFIX or ~/.cache/plush-windows)
# A prefix whose stamp names the same source versions is kept as it is: the slow part runs once per machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${1:-${PLUSH_WINDOWS_PREFIX:-$HOME/.cache/plush-windows}}"
HOST=x86_64-w64-mingw32
JOBS="${JOBS:-2}"
SOURCES=(bullet cmocka meshoptimizer)
SRC_LIST=/etc/apt/sources.list.d/plush-deb-src.sources

say() { echo "build-windows-deps: $*" >&2; }

for tool in $HOST-gcc-posix $HOST-g++-posix cmake dpkg-source; do
  command -v "$tool" >/dev/null || { say "missing $tool; run: sudo tools/install-deps.sh --windows"; exit 1; }
done

# The source versions the archive offers now: the stamp that says whether the prefix is current.
versions() {
  for p in "${SOURCES[@]}"; do
    printf '%s %s\n' "$p" "$(apt-cache showsrc "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -n1)"
  done
  printf 'script %s\n' "$(sha256sum "$ROOT/tools/build-windows-deps.sh" | cut -c1-16)"
}

# A deb-src entry for the suite the machine runs (bookworm here), once; then the source index.
ensure_deb_src() {
  if apt-cache showsrc bullet 2>/dev/null | grep -q '^Version:'; then return 0; fi
  local suite
  suite="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  say "adding a deb-src entry for $suite ($SRC_LIST)"
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$suite" | $sudo tee "$SRC_LIST" >/dev/null
  $sudo apt-get update -q >/dev/null
}

ensure_deb_src
WANT="$(versions)"
if [ -f "$PREFIX/.stamp" ] && [ "$(cat "$PREFIX/.stamp")" = "$WANT" ]; then
  say "$PREFIX is current"
  exit 0
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/plush-windows-deps.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
rm -rf "$PREFIX"
mkdir -p "$PREFIX/include" "$PREFIX/lib" "$PREFIX/bin"

CMAKE_CROSS=(
  -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR=x86_64
  -DCMAKE_C_COMPILER=$HOST-gcc-posix -DCMAKE_CXX_COMPILER=$HOST-g++-posix -DCMAKE_RC_COMPILER=$HOST-windres
  -DCMAKE_FIND_ROOT_PATH=/usr/$HOST -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER
  -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY
  -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=Release
  # -O2 as Debian's own build of these libraries (RelWithDebInfo), not CMake's -O3
  -DCMAKE_C_FLAGS_RELEASE=-O2 -DCMAKE_CXX_FLAGS_RELEASE=-O2
)

fetch() {  # unpacked source tree of package $1 (Debian's patches applied) -> its path on stdout
  (cd "$WORK" && apt-get source -q "$1" >"$WORK/$1.log" 2>&1) || { cat "$WORK/$1.log" >&2; exit 1; }
  find "$WORK" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -n1
}

timed() {  # name, then the command: runs it and says how long it took
  local name="$1" t0; shift
  t0=$(date +%s)
  "$@"
  say "$name: $(( $(date +%s) - t0 )) s"
}

build_cmake() {  # source dir, build log name, cmake options...
  local src="$1" name="$2"; shift 2
  cmake -S "$src" -B "$WORK/build-$name" "${CMAKE_CROSS[@]}" "$@" >"$WORK/$name-configure.log" 2>&1 ||
    { tail -n 40 "$WORK/$name-configure.log" >&2; exit 1; }
  cmake --build "$WORK/build-$name" -j"$JOBS" >"$WORK/$name-build.log" 2>&1 ||
    { tail -n 40 "$WORK/$name-build.log" >&2; exit 1; }
  cmake --install "$WORK/build-$name" >"$WORK/$name-install.log" 2>&1 ||
    { tail -n 40 "$WORK/$name-install.log" >&2; exit 1; }
}

bullet() {
  local src; src="$(fetch bullet)"
  # the four libraries plush links, single precision, static; no demos, extras, Bullet 3 or tests
  build_cmake "$src" bullet -DBUILD_SHARED_LIBS=OFF -DUSE_DOUBLE_PRECISION=OFF -DBUILD_BULLET3=OFF \
    -DBUILD_EXTRAS=OFF -DBUILD_CPU_DEMOS=OFF -DBUILD_BULLET2_DEMOS=OFF -DBUILD_OPENGL3_DEMOS=OFF \
    -DBUILD_UNIT_TESTS=OFF -DBUILD_PYBULLET=OFF -DBUILD_ENET=OFF -DBUILD_CLSOCKET=OFF -DINSTALL_LIBS=ON \
    -DUSE_GRAPHICAL_BENCHMARK=OFF -DUSE_GLUT=OFF -DENABLE_VHACD=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_OpenGL=ON
}

cmocka() {
  local src; src="$(fetch cmocka)"
  build_cmake "$src" cmocka -DWITH_STATIC_LIB=ON -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF
}

meshoptimizer() {
  local src; src="$(fetch meshoptimizer)"
  # its -Werror meets a warning of MinGW's GCC 12 (array-bounds in vertexfilter.cpp) that Debian's build
  # does not see: warnings stay, they just do not stop the build
  sed -i 's/ -Werror)/)/' "$src/CMakeLists.txt"
  # its runtimes (libstdc++, libgcc, winpthreads) linked in: the DLL stands alone beside plush.exe
  # Debian names the soname 2d (debian/rules); on Windows the DLL keeps the plain name
  build_cmake "$src" meshoptimizer -DMESHOPT_BUILD_SHARED_LIBS=ON -DMESHOPT_SOVERSION=2d \
    -DCMAKE_SHARED_LINKER_FLAGS=-static
}

headers() {
  # header-only cglm and stb, Embree 3's API headers: from the installed Debian -dev packages
  local h
  for h in /usr/include/cglm /usr/include/stb /usr/include/embree3; do
    [ -d "$h" ] || { say "missing $h; run: sudo tools/install-deps.sh"; exit 1; }
    cp -r "$h" "$PREFIX/include/"
  done
}

T0=$(date +%s)
timed headers headers
timed bullet bullet
timed cmocka cmocka
timed meshoptimizer meshoptimizer
printf '%s\n' "$WANT" >"$PREFIX/.stamp"
say "all in $(( $(date +%s) - T0 )) s into $PREFIX"
