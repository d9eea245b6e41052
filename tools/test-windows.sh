#!/usr/bin/env bash
# make test-windows: the Windows build checked under Wine.
#   1. every cmocka suite that runs on Windows (mk/windows.mk lists them), as a Windows program; each suite
#      left out is named with the reason;
#   2. the CLI on the shared data, from a folder with a Japanese name: `plush.exe demo` (binding through the
#      zip's Embree), and `plush.exe run` on a shared character with --cage over the short dance, each
#      against the Linux build's own outputs of the same command (tools/compare-outputs.py: frames and
#      files within 1e-5 units, the bake as a player poses it within its own tolerance, the summary figures
#      to their last digit);
#   3. hostile files (tools/windows-hostile.sh): truncated and garbled models and motions, a folder, a missing
#      file: exit 1 with one line naming the file and the byte, never a crash;
#   4. an interruption: a Ctrl+C event in the middle of a run leaves OUTDIR with the old outputs or the new
#      ones, never a mix, and no staging folder or lock.
# Usage: tools/test-windows.sh BUILD_DIR WINE "SUITES..." "LEFT_OUT_SOURCES..." ZIP
# The CLI checks run plush.exe as unpacked from ZIP into the Japanese-named folder.
set -uo pipefail
WB="$1"; WINE="$2"; SUITES="$3"; LEFT_OUT="$4"; ZIP="$5"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export WINEPREFIX="$ROOT/$WB/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
# the suites live below build-windows/tests/: they are told where the physics DLL is (Wine maps / to Z:);
# plush.exe finds it beside itself, as a user's copy does
PHYSICS_DLL="Z:$(echo "$ROOT/$WB/plush_physics.dll" | tr / '\\')"
# and find the optional DLLs (meshoptimizer, Embree) in the build folder, as plush.exe does beside itself
export WINEPATH="Z:$(echo "$ROOT/$WB" | tr / '\\')"
LINUX_PLUSH="${LINUX_PLUSH:-$ROOT/build/plush}"
LOGS="$WB/test-logs"
mkdir -p "$LOGS"

if [ ! -d "$WINEPREFIX" ]; then
  echo "test-windows: making the Wine prefix $WINEPREFIX"
  "$WINE" wineboot -i >/dev/null 2>&1 || true
fi

passed=0; failed=0; skipped=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
pass() { echo "ok: $*"; passed=$((passed + 1)); }

# ---- 1. the suites ----
for src in $LEFT_OUT; do
  why="$(grep -oE '#include [<"](support/)?(sys/wait\.h|spawn\.h|sys/resource\.h|signal\.h|dlfcn\.h|cli_run\.h|bake_long\.h)' "$src" | head -n1 | sed 's/#include [<"]//')"
  case "$src" in
    */test_symbols.c) why="Linux-only: reads the library with nm" ;;
    *) why="Linux-only: $why" ;;
  esac
  echo "skip: ${src#tests/} ($why)"
  skipped=$((skipped + 1))
done
for exe in $SUITES; do
  name="${exe#$WB/tests/}"
  log="$LOGS/${name//\//_}.log"
  t0=$(date +%s)
  if PLUSH_PHYSICS_LIB="$PHYSICS_DLL" timeout 600 "$WINE" "$exe" >"$log" 2>&1; then
    pass "$name ($(( $(date +%s) - t0 )) s)"
  elif code=$? && [ ! -s "$log" ] &&
       PLUSH_PHYSICS_LIB="$PHYSICS_DLL" timeout 600 "$WINE" "$exe" >"$log.again" 2>&1; then
    # It wrote nothing at all: Wine did not bring it up, or it crashed before its output (buffered, into a
    # file) was written. Seen once, test_anim_skin.exe in a full local run of this check, and not in 60 runs
    # of it alone since, under load or not; the cause is not known. Run once more, and say so in its line.
    pass "$name ($(( $(date +%s) - t0 )) s; its first run exited $code having written nothing, the second passed: $log.again)"
  elif [ -s "$log" ]; then
    fail "$name (log: $log)"; tail -n 30 "$log"
  else
    fail "$name (it wrote nothing, exit $code; run again: $log.again)"; tail -n 30 "$log.again"
  fi
done

# ---- 2. the CLI from a Japanese folder, against Linux ----
cli_check() {  # name, expected files, then the plush arguments after the output folder option
  local name="$1" outdir="$2"; shift 2
  local win="$JP/$outdir-windows" lin="$JP/$outdir-linux"
  rm -rf "$win" "$lin"
  if ! (cd "$JP" && timeout 1500 "$WINE" "$EXE" "$@" -o "$outdir-windows" >"$ROOT/$LOGS/cli-$outdir.log" \
        2>"$ROOT/$LOGS/cli-$outdir.err"); then
    fail "$name under Wine (log: $LOGS/cli-$outdir.err)"; tail -n 20 "$LOGS/cli-$outdir.err"; return
  fi
  if [ ! -x "$LINUX_PLUSH" ]; then
    fail "$name: no Linux build at $LINUX_PLUSH to compare with (make all first)"; return
  fi
  (cd "$JP" && "$LINUX_PLUSH" "$@" -o "$outdir-linux" >"$ROOT/$LOGS/cli-$outdir-linux.log" \
     2>"$ROOT/$LOGS/cli-$outdir-linux.err") || { fail "$name on Linux (log: $LOGS/cli-$outdir-linux.err)"; return; }
  if PLUSH_POSE="$LINUX_PLUSH" python3 "$ROOT/tools/compare-outputs.py" "$lin" "$win" "$ROOT/$LOGS/cli-$outdir-linux.log" \
      "$ROOT/$LOGS/cli-$outdir.log" >"$ROOT/$LOGS/cli-$outdir-compare.log" 2>&1; then
    pass "$name: $(tail -n 1 "$ROOT/$LOGS/cli-$outdir-compare.log")"
  else
    fail "$name differs from Linux (log: $LOGS/cli-$outdir-compare.log)"; tail -n 20 "$ROOT/$LOGS/cli-$outdir-compare.log"
  fi
}
JP="$ROOT/$WB/テスト/ぬいぐるみ"
rm -rf "$JP" && mkdir -p "$JP"
unzip -q -o "$ZIP" -d "$JP"
EXE="$JP/$(basename "$ZIP" .zip)/plush.exe"
# the demo writes its inputs (the bear) beside its outputs: one OUTDIR per build
cli_check "plush.exe demo, unpacked from the zip into $WB/テスト/ぬいぐるみ" demo demo
# the zip's libembree3.dll loads beside plush.exe: the demo's binding went through Embree's BVH (plush
# warns when it binds by brute force instead, and the summaries' comparison leaves the warning count out)
if [ -f "$LOGS/cli-demo.err" ] && grep -q "embree" "$LOGS/cli-demo.err"; then
  fail "the zip's plush.exe did not load Embree: $(grep -m1 embree "$LOGS/cli-demo.err")"
elif [ -f "$JP/demo-windows/plush_bear.pmx" ]; then
  pass "the zip's plush.exe bound through Embree (no brute-force warning)"
fi
CAPE="$ROOT/../shared/data/characters/pmx_tailor/04_色々な使い方_裏面.pmx"
DANCE="$ROOT/../shared/data/characters/blender_mmd_tools/test.vmd"   # the short shared dance
if [ -f "$CAPE" ] && [ -f "$DANCE" ]; then
  cp "$CAPE" "$JP/マント.pmx"
  cp "$DANCE" "$JP/ダンス.vmd"
  cli_check "plush.exe run マント.pmx --cage 表マント --motion ダンス.vmd" run run マント.pmx --cage 表マント --motion ダンス.vmd
  # as Explorer and a dragged file hand paths over: absolute, with a drive and backslashes
  win_jp="Z:$(echo "$JP" | tr / '\\')"
  rm -rf "$JP/絶対パス"
  if (cd "$JP" && timeout 600 "$WINE" "$EXE" run "$win_jp\\マント.pmx" --cage 表マント --frames 5 \
        -o "$win_jp\\絶対パス" >"$ROOT/$LOGS/cli-absolute.log" 2>&1) &&
     [ -f "$JP/絶対パス/マント_plush.pmx" ] && [ -f "$JP/絶対パス/マント_plush.vmd" ]; then
    pass "plush.exe run with absolute backslash paths: $(ls "$JP/絶対パス" | tr '\n' ' ')"
  else
    fail "plush.exe run with absolute backslash paths (log: $LOGS/cli-absolute.log)"; ls -a "$JP/絶対パス" 2>&1 | head
  fi
else
  echo "skip: plush.exe run on the cape (../shared/data not here)"; skipped=$((skipped + 1))
fi

# ---- 3. hostile files: exit 1 with one line naming the file and the byte; never a crash ----
if [ -f "$CAPE" ] && [ -f "$DANCE" ]; then
  if tools/windows-hostile.sh "$EXE" "$WINE" "$JP" "$CAPE" "$DANCE" >"$LOGS/hostile.log" 2>&1; then
    pass "hostile files: $(tail -n 1 "$LOGS/hostile.log")"
  else
    fail "hostile files (log: $LOGS/hostile.log)"; tail -n 20 "$LOGS/hostile.log"
  fi
fi

# ---- 4. interrupted by a Ctrl+C event ----
if [ -f "$JP/demo-windows/plush_bear.pmx" ]; then
  if tools/windows-interrupt.sh "$EXE" "$WINE" "$JP" >"$LOGS/interrupt.log" 2>&1; then
    pass "interrupted run: $(tail -n 1 "$LOGS/interrupt.log")"
  else
    fail "interrupted run (log: $LOGS/interrupt.log)"; tail -n 20 "$LOGS/interrupt.log"
  fi
fi

echo
echo "test-windows: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
