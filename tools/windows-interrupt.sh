#!/usr/bin/env bash
# An interrupted Windows run leaves the old outputs or the new ones, never a mix (tools/test-windows.sh).
# Under Wine a SIGINT to the program is delivered as a console Ctrl+C event (CTRL_C_EVENT on a new thread,
# as Windows does), so this reaches plush's console handler, not a POSIX signal handler.
# One OUTDIR gets a finished run (old: --every 10), then the same run with other outputs (new: --every 5) is
# interrupted at several moments; after each, every output must match all old or all new files, no lock may be
# left, and a hidden staging folder left must be removed by the next run. Usage: tools/windows-interrupt.sh PLUSH_EXE WINE FOLDER
set -uo pipefail
EXE="$1"; WINE="$2"; DIR="$3"
cd "$DIR" || exit 1
BEAR=(demo-windows/plush_bear.pmx --motion demo-windows/plush_bear_shake.vmd --im2 demo-windows/plush_bear.im2
      --export pmx+vmd,gltf,ply --frames 60)

digest() {  # name -> sha of every output (plush's own files excluded, and what its hidden staging folders hold:
             # one the cleanup could not remove is checked below, not counted as an output)
  (cd "$1" && find . -path './.plush*' -prune -o -type f ! -name '.plush*' -print0 | sort -z | xargs -0 sha256sum) 2>/dev/null
}
run_to() {  # outdir, every
  timeout -k 10 300 "$WINE" "$EXE" run "${BEAR[@]}" --every "$2" -o "$1" >/dev/null 2>&1
}
# Waits for a run started in the background, at most HANG_S seconds after its Ctrl+C: a run the event left
# hanging is killed and named, never waited for (one hung CI until its time ran out). Sets code.
HANG_S=120
wait_bounded() {  # pid, delay (for the message)
  local t
  for ((t = 0; t < HANG_S * 10; t++)); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; code=$?; return 0; }
    sleep 0.1
  done
  echo "after $2 s: plush.exe still ran ${HANG_S} s after the Ctrl+C event: it hung"
  pkill -KILL -f 'plush\.exe run' 2>/dev/null; kill -KILL "$1" 2>/dev/null
  exit 1
}

rm -rf ictl-old ictl-new ictl
run_to ictl-old 10 || { echo "the first run failed"; exit 1; }
t0=$(date +%s%N)
run_to ictl-new 5 || { echo "the second run failed"; exit 1; }
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
OLD="$(digest ictl-old)"; NEW="$(digest ictl-new)"
[ "$OLD" != "$NEW" ] || { echo "the two runs wrote the same files: nothing to tell apart"; exit 1; }

# interruptions spread over the run's own length, more of them near its end, where the outputs are committed
olds=0; news=0; finished=0; stopped=0; leftovers=
for share in 10 30 50 70 85 92 96 99; do
  delay="$(awk -v ms="$ms" -v s="$share" 'BEGIN { printf "%.2f", ms * s / 100000 }')"
  rm -rf ictl && cp -a ictl-old ictl    # times kept: plush replaces only what is as it wrote it
  "$WINE" "$EXE" run "${BEAR[@]}" --every 5 -o ictl >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  # the Windows process behind the launcher: the one whose command line names plush.exe
  target="$(pgrep -f 'plush\.exe run' | head -n1)"
  [ -n "$target" ] && kill -INT "$target" 2>/dev/null
  wait_bounded "$pid" "$delay"
  # finished (0), or ended by the console handler with STATUS_CONTROL_C_EXIT (0xC000013A; the shell sees 0x3A)
  case "$code" in
    0) finished=$((finished + 1)) ;;
    58) stopped=$((stopped + 1)) ;;
    *) echo "after ${delay} s: plush.exe exited with $code (neither finished nor stopped by Ctrl+C)"; exit 1 ;;
  esac
  got="$(digest ictl)"
  if [ -e ictl/.plush.lock ]; then echo "after ${delay} s: left behind: the lock"; exit 1; fi
  if [ "$got" = "$OLD" ]; then olds=$((olds + 1)); elif [ "$got" = "$NEW" ]; then news=$((news + 1));
  else echo "after ${delay} s: a mix of old and new outputs"; diff <(echo "$OLD") <(echo "$got") | head; exit 1; fi
  # A hidden staging folder (or the folder of the replaced outputs) the cleanup could not remove: under Wine a
  # file some handle still holds cannot be deleted (docs/windows.md). The next run into the folder must
  # remove it and say so; it is counted and named in the result line.
  left="$(find ictl -maxdepth 1 \( -name '.plush-tmp.*' -o -name '.plush-old.*' \) -printf '%f ')"
  if [ -n "$left" ]; then
    said="$(timeout -k 10 300 "$WINE" "$EXE" run "${BEAR[@]}" --frames 1 --every 5 -o ictl 2>&1 >/dev/null)"
    again="$(find ictl -maxdepth 1 \( -name '.plush-tmp.*' -o -name '.plush-old.*' \) -printf '%f ')"
    if [ -n "$again" ] || ! grep -q 'left by a run that no longer runs' <<<"$said"; then
      echo "after ${delay} s: left behind $left, and the next run did not remove it (still: ${again:-none})"; exit 1
    fi
    leftovers="${leftovers}${left}(at ${delay} s, removed by the next run) "
  fi
done
[ "$stopped" -gt 0 ] || { echo "no Ctrl+C event landed while the run ran: nothing was tested"; exit 1; }
echo "8 Ctrl+C events over a ${ms} ms run ($stopped stopped it, $finished came after it finished): $olds left the old outputs, $news the new ones, none a mix; hidden folders left: ${leftovers:-none}"
