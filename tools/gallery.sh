#!/usr/bin/env bash
# Gallery: picture strips of the shared characters dancing with their soft parts caged, the way a user
# runs them (plush run MODEL --cage MATERIAL --motion DANCE --export preview), four frames of each
# preview side by side in one PNG per character. The shared models may be used only in tests (their
# terms, ../shared/data/characters/SOURCES.md), so the strips are made here, not kept in the repository.
#   tools/gallery.sh [--frames N] [--out DIR] [--preview-frame model|soft]
#     --frames N          frames of the dance to run (default 480: 16 seconds); the strip shows four,
#                         evenly spread over the second half
#     --out DIR           where the runs and the strips go (default: gallery)
#     --preview-frame F   the camera: the whole character (model, the default) or the soft part
# PLUSH_BIN names another plush binary. Prints each strip's path and the command that made it.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
data=$here/../shared/data
plush=${PLUSH_BIN:-$here/build/plush}
frames=480
out=gallery
framing=model
while [ $# -gt 0 ]; do
    case $1 in
    --frames) frames=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --preview-frame) framing=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "gallery: unknown argument $1" >&2; exit 2 ;;
    esac
done
case $frames in '' | *[!0-9]*) echo "gallery: --frames needs a whole number" >&2; exit 2 ;; esac
[ "$frames" -ge 8 ] || { echo "gallery: --frames needs at least 8" >&2; exit 2; }
command -v ffmpeg >/dev/null || { echo "gallery: ffmpeg is needed (tools/install-deps.sh)" >&2; exit 1; }
dance=$data/characters/mmd_base/サンプルモーション2.vmd
[ -f "$dance" ] || { echo "gallery: $dance is absent (the shared data sits beside the project)" >&2; exit 1; }
mkdir -p "$out"

# name | model | the --cage materials
cases=(
    "skirt|mmd/pmx_tailor/01_基本の使い方.pmx|スカート"
    "uneven-skirt|characters/pmx_tailor/03_扱えるメッシュ_裾不均等.pmx|スカート"
    "cape|characters/pmx_tailor/04_色々な使い方_裏面.pmx|表マント,裏マント"
    "alicia-hair|mmd/alicia/Alicia_solid.pmx|hair"
    "luka-hair|characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質3"
    "luka-dress|characters/blender_mmd_tools/巡音ルカ_f14b5a4.pmx|材質8"
)
failed=0
for c in "${cases[@]}"; do
    IFS='|' read -r name model cage <<<"$c"
    [ -f "$data/$model" ] || { echo "$name: $data/$model is absent, skipped"; continue; }
    dir=$out/$name
    args=(run "$data/$model" --cage "$cage" --motion "$dance" --frames "$frames" --export preview
          --preview-frame "$framing" -o "$dir")
    if ! "$plush" "${args[@]}" >"$out/$name.txt" 2>"$out/$name.err"; then
        echo "$name: plush failed (see $out/$name.err)"
        failed=1
        continue
    fi
    # four frames over the second half of the run: the part has been moving for a while
    half=$((frames / 2)) step=$((frames / 8))
    pick="eq(n\\,$half)+eq(n\\,$((half + step)))+eq(n\\,$((half + 2 * step)))+eq(n\\,$((half + 3 * step)))"
    if ffmpeg -loglevel error -y -i "$dir/preview.mp4" -vf "select='$pick',tile=4x1" -frames:v 1 \
        "$out/$name.png"; then
        echo "$out/$name.png: plush ${args[*]/#$data\//../shared/data/}"
    else
        echo "$name: ffmpeg could not make the strip"
        failed=1
    fi
done
exit $failed
