#!/usr/bin/env bash
# Soak: every shared character with a soft part, caged, through both long dances to their last frame,
# the way a user runs them. A run must end with status 0, write every frame, keep quality.csv finite
# and leave no .plush.lock or .plush-tmp* behind in its OUTDIR, whatever happened.
#   tools/soak.sh [--frames N] [--out DIR] [--mode proxy|direct] [--motion M.vmd]... [FILTER]
#     --frames N   only the first N frames of each dance (a short soak; default: the whole dance)
#     --out DIR    where each run's OUTDIR goes (default: a temporary folder, removed at the end)
#     --motion M   these motions instead of the two dances (repeatable; e.g. a synthetic teleport)
#     --stress     the short hard motions too (a spin, a jump, a head shake, arms crossing, a kneel, scene cuts:
#                  build/stress/*.vmd, which make writes with tools/stress/stress_motions.c)
#     --every-material  instead of the soft parts, every material of those models caged, on the long
#                  dance only (with --frames 1500: an hour's sweep that found a crash no soft part showed)
#     FILTER       only the cases whose "model cage dance" line contains it (e.g. ルカ, test.vmd, hair)
# PLUSH_BIN names another plush binary (e.g. a local build with a different pin rule). One line per run,
# then a table; the exit status is 1 when any run failed one of the checks above.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
data=$here/../shared/data
plush=${PLUSH_BIN:-$here/build/plush}
frames=""
out=""
mode=proxy
filter=""
every=0
stress=0
motions=()
while [ $# -gt 0 ]; do
    case $1 in
    --frames) frames=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --motion) motions+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --every-material) every=1; shift ;;
    --stress) stress=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "soak: unknown option $1" >&2; exit 2 ;;
    *) filter=$1; shift ;;
    esac
done
keep=1
if [ -z "$out" ]; then
    out=$(mktemp -d)
    keep=0
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

# model | the --cage materials (its soft part)
cases=(
    "mmd/alicia/Alicia_solid.pmx|hair"
    "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質3"
    "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質18"
    "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質18,材質8"
    "characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質8"
    "mmd/pmx_tailor/01_基本の使い方.pmx|スカート"
    "mmd/pmx_tailor/04_色々な使い方_裾.pmx|スカート"
    "characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx|スカート"
    "characters/pmx_tailor/04_色々な使い方_裏面.pmx|表マント,裏マント"
    "characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx|N00_000_Hair_00_HAIR"
    "mmd/blender2pmxem/sample_finish.pmx|スカート"
    "mmd/blender2pmxem/sample_finish.pmx|髪"
)
dances=(
    "$data/characters/mmd_base/サンプルモーション2.vmd"
    "$data/characters/blender_mmd_tools/test.vmd"
)
if [ $every = 1 ]; then
    # every material with faces of each model above, as plush info lists them (the name, then its English
    # name in parentheses when that differs)
    models=$(printf '%s\n' "${cases[@]}" | cut -d'|' -f1 | awk '!seen[$0]++')
    cases=()
    while IFS= read -r model; do
        while IFS= read -r name; do
            cases+=("$model|$name")
        done < <("$plush" info "$data/$model" 2>/dev/null |
            sed -n 's/^  material [0-9]* *"\(.*\)"\( (.*)\)\{0,1\}; \([0-9,]*\) faces.*/\3|\1/p' | awk -F'|' '$1 != "0" { print $2 }')
    done <<<"$models"
    dances=("${dances[0]}")
fi
[ ${#motions[@]} -gt 0 ] && dances=("${motions[@]}")
if [ $stress = 1 ]; then
    for m in spin jump head_shake arms_cross kneel cut; do
        [ -f "$here/build/stress/$m.vmd" ] || { echo "soak: $here/build/stress/$m.vmd is missing (run make)" >&2; exit 2; }
        dances+=("$here/build/stress/$m.vmd")
    done
fi

# A column of quality.csv that is not a finite number, other than a volume ratio (an open surface has
# no volume: nan there is the measurement's answer, not a fault), an empty stretch across cage pieces
# (no edge crosses), an empty author's surface (the author's physics does not move the part, so its
# surface is not measured), an empty share through a limb (the first frame: no way since a frame before) or an
# empty jitter (the first two frames).
# Prints "column@frame" or nothing.
nonfinite() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) name[i] = $i; next }
        { for (i = 2; i <= NF; i++) if (name[i] !~ /volume/ &&
                                        !(name[i] ~ /^(crossing|author_surface|through|author_through|jitter|author_jitter|show|author_show)/ && $i == "") &&
                                        $i !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) {
              print name[i] "@" $1; exit } }' "$1"
}

status_text() {
    local rc=$1
    if [ "$rc" -gt 128 ]; then
        local sig
        sig=$(kill -l $((rc - 128)) 2>/dev/null || echo "?")
        echo "$rc(SIG$sig)"
    else
        echo "$rc"
    fi
}

failed=0
table=()
n=0
for c in "${cases[@]}"; do
    model=${c%%|*}
    cage=${c#*|}
    for dance in "${dances[@]}"; do
        line="$model $cage ${dance#"$data"/}"
        case $line in *"$filter"*) ;; *) continue ;; esac
        n=$((n + 1))
        dir=$out/run$n
        rm -rf "$dir"
        args=(run "$data/$model" --cage "$cage" --motion "$dance" --mode "$mode" --export quality -o "$dir")
        [ -n "$frames" ] && args+=(--frames "$frames")
        start=$(date +%s)
        "$plush" "${args[@]}" >"$out/run$n.out" 2>"$out/run$n.err"
        rc=$?
        secs=$(($(date +%s) - start))
        done_frames=-
        [ -f "$dir/quality.csv" ] && done_frames=$(($(wc -l <"$dir/quality.csv") - 1))
        want=$(sed -n 's/^  frames *\([0-9]*\) .*/\1/p' "$out/run$n.out")
        quality=$(sed -n 's/^  quality *[^;]*; *//p' "$out/run$n.out")
        blowups=$(sed -n 's/^  blow-ups *//p' "$out/run$n.out")
        soft=$(sed -n 's/^  soft part *//p' "$out/run$n.out")
        body=$(sed -n 's/^  body *//p' "$out/run$n.out")
        bad=""
        [ -f "$dir/quality.csv" ] && bad=$(nonfinite "$dir/quality.csv")
        stray=$(cd "$dir" 2>/dev/null && ls -d .plush.lock .plush-tmp* 2>/dev/null | tr '\n' ' ')
        verdict=ok
        if [ "$rc" -ne 0 ] || [ -n "$bad" ] || [ -n "$stray" ] || [ "$done_frames" = - ] ||
            { [ -n "$want" ] && [ "$done_frames" != "$want" ]; }; then
            verdict=FAIL
            failed=1
        fi
        echo "[$n] $verdict $line: exit $(status_text $rc), frames $done_frames/${want:-?}, ${secs}s" \
            "${blowups:+, blow-ups $blowups}${bad:+, non-finite $bad}${stray:+, left behind: $stray}"
        echo "    quality: ${quality:-none}"
        [ -n "$soft" ] && echo "    soft part: $soft"
        [ -n "$body" ] && echo "    body: $body"
        [ "$rc" -ne 0 ] && sed 's/^/    stderr: /' "$out/run$n.err" | tail -3
        table+=("$verdict|$(status_text $rc)|$done_frames/${want:-?}|${blowups:-0}|${bad:--}|${stray:--}|$line|${quality:-none}")
    done
done

echo
echo "verdict | exit | frames | blow-ups | non-finite | left behind | case | worst quality"
for row in "${table[@]}"; do
    echo "$row" | sed 's/|/ | /g'
done
[ $keep = 1 ] && echo "outputs in $out"
exit $failed
