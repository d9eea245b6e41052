#!/usr/bin/env bash
# Builds the libraries plush needs for x86_64 Windows from Debian's own source packages, with Debian's
# MinGW-w64 (posix threads flavour), into a prefix that later builds reuse:
#   Bullet (static: LinearMath, BulletCollision, BulletDynamics, BulletSoftBody -- linked into the physics
#   DLL), cmocka (static, for the test suites), meshoptimizer and Embree 3 (DLLs: plush loads them at run
#   time and falls back to its own code without them, as on Linux); header-only cglm and stb as Debian
#   ships them.
# Nothing comes from anywhere but Debian's archive. Usage:
#   tools/build-windows-deps.sh [PREFIX]      (default: $PLUSH_WINDOWS_PREFIX or ~/.cache/plush-windows)
# A prefix whose stamp names the same source versions is kept as it is: the slow part runs once per machine.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${1:-${PLUSH_WINDOWS_PREFIX:-$HOME/.cache/plush-windows}}"
HOST=x86_64-w64-mingw32
JOBS="${JOBS:-2}"
SOURCES=(bullet cmocka meshoptimizer embree)
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

# The upstream source of package $1 as Debian ships it (its .orig tarball) -> the unpacked tree on stdout.
# Where the archive serves the whole source package, that is fetch's. Where Debian's packaging tarball is
# missing from the mirror (embree_3.13.5+dfsg-2.debian.tar.xz answers 404 on deb.debian.org) but the .dsc
# and the .orig are there, the .orig is taken alone: apt checked the .dsc against the signed Sources index,
# and the .orig is checked here against the .dsc's SHA-256. Debian's patches are then not applied (they
# concern Debian's own build); any other failure stops the build.
fetch_orig() {
  local dir="$WORK/$1-src"
  mkdir -p "$dir"
  if (cd "$dir" && apt-get source -q "$1" >"$WORK/$1.log" 2>&1); then
    find "$dir" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -n1
    return 0
  fi
  local failed dsc orig want got
  failed="$(sed -n 's/^E: Failed to fetch .*\/\([^/ ]*\) .*/\1/p' "$WORK/$1.log")"
  dsc="$(find "$dir" -maxdepth 1 -name "$1_*.dsc" | head -n1)"
  orig="$(find "$dir" -maxdepth 1 -name "$1_*.orig.tar.*" | head -n1)"
  if [ -z "$dsc" ] || [ -z "$orig" ] || [ -z "$failed" ] || printf '%s\n' "$failed" | grep -qv '\.debian\.tar\.'; then
    cat "$WORK/$1.log" >&2
    exit 1
  fi
  want="$(awk -v f="$(basename "$orig")" '/^Checksums-Sha256:/ {on = 1; next} /^[^ ]/ {on = 0}
          on && $3 == f {print $1}' "$dsc")"
  got="$(sha256sum "$orig" | cut -d' ' -f1)"
  if [ -z "$want" ] || [ "$want" != "$got" ]; then
    say "$(basename "$orig"): SHA-256 $got, the .dsc says ${want:-nothing}"
    exit 1
  fi
  say "$1: Debian's packaging tarball is missing from the mirror; $(basename "$orig") alone (SHA-256 as the .dsc)"
  tar -xf "$orig" -C "$dir"
  find "$dir" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -n1
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

embree() {
  local src; src="$(fetch_orig embree)"
  # Embree's CMake takes any compiler on WIN32 that is not Intel's or a Clang for MSVC and hands it MSVC's
  # options (cl's /Fo, /EHsc...): MinGW's g++ is a GNU compiler and gets gnu.cmake, as on Linux.
  sed -i 's/ELSEIF(${CMAKE_CXX_COMPILER_FRONTEND_VARIANT} MATCHES "GNU")/ELSEIF(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR "${CMAKE_CXX_COMPILER_FRONTEND_VARIANT}" MATCHES "GNU")/' \
    "$src/CMakeLists.txt"
  grep -q 'CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR' "$src/CMakeLists.txt" || { say "embree: compiler choice not found"; exit 1; }
  # gnu.cmake's linker options are ELF's (-z noexecstack, -z relro, -pie); the PE linker has none of them
  sed -i 's/IF (CMAKE_CXX_COMPILER_ID MATCHES "GNU")$/IF (CMAKE_CXX_COMPILER_ID MATCHES "GNU" AND NOT WIN32)/;
          s/^  SET(CMAKE_EXE_LINKER_FLAGS "${CMAKE_EXE_LINKER_FLAGS} -pie").*/  IF (NOT WIN32)\n&\n  ENDIF()/' \
    "$src/common/cmake/gnu.cmake"
  # the DLL's version resource is UTF-16 text, which MSVC's rc reads and binutils' windres does not
  iconv -f UTF-16 -t UTF-8 "$src/kernels/embree.rc" >"$src/kernels/embree.rc.utf8"
  mv "$src/kernels/embree.rc.utf8" "$src/kernels/embree.rc"
  # Debian's +dfsg source leaves out the prebuilt PDF manual that the install step copies
  sed -i '/readme\.pdf/d' "$src/common/cmake/package.cmake"
  # What plush calls: triangles, point queries, single rays and ray streams (rtcIntersect1M needs the
  # packet kernels), intersection filters. Embree's own task scheduler (no TBB), SSE2 only (any x86_64
  # runs it; each further ISA compiles the kernels once more), no ISPC, tutorials or tests; a DLL with
  # its runtimes linked in, like meshoptimizer's.
  build_cmake "$src" embree -DEMBREE_TASKING_SYSTEM=INTERNAL -DEMBREE_ISPC_SUPPORT=OFF -DEMBREE_TUTORIALS=OFF \
    -DEMBREE_STATIC_LIB=OFF -DEMBREE_ISA_SSE2=ON -DEMBREE_ISA_SSE42=OFF -DEMBREE_ISA_AVX=OFF \
    -DEMBREE_ISA_AVX2=OFF -DEMBREE_ISA_AVX512=OFF -DEMBREE_GEOMETRY_TRIANGLE=ON -DEMBREE_GEOMETRY_QUAD=OFF \
    -DEMBREE_GEOMETRY_CURVE=OFF -DEMBREE_GEOMETRY_SUBDIVISION=OFF -DEMBREE_GEOMETRY_USER=OFF \
    -DEMBREE_GEOMETRY_INSTANCE=OFF -DEMBREE_GEOMETRY_GRID=OFF -DEMBREE_GEOMETRY_POINT=OFF \
    -DEMBREE_RAY_PACKETS=ON -DEMBREE_FILTER_FUNCTION=ON -DCMAKE_SHARED_LINKER_FLAGS=-static
}

headers() {
  # header-only cglm and stb: from the installed Debian -dev packages
  local h
  for h in /usr/include/cglm /usr/include/stb; do
    [ -d "$h" ] || { say "missing $h; run: sudo tools/install-deps.sh"; exit 1; }
    cp -r "$h" "$PREFIX/include/"
  done
}

T0=$(date +%s)
timed headers headers
timed bullet bullet
timed cmocka cmocka
timed meshoptimizer meshoptimizer
timed embree embree
printf '%s\n' "$WANT" >"$PREFIX/.stamp"
say "all in $(( $(date +%s) - T0 )) s into $PREFIX"
