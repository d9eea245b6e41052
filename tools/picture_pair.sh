#!/bin/sh
# The README's before/after picture pair, from plush compare on the demo bear with its shake: frame 110
# (the middle of 221 frames, as the hook drops the bear) with the original method's proxy (--seed: nearest
# four triangles, each triangle's own frame) and with today's (smoothed weights, patch frames). Each
# picture is bones | proxy | direct | proxy error as colours.
#   tools/picture_pair.sh [OUTDIR]     (default docs/; some twenty minutes: direct, run twice, is the slow part)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs}
plush=${PLUSH_BIN:-$here/build/plush}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for method in before after; do
    seed=""
    [ "$method" = before ] && seed="--seed"
    "$plush" compare "$here/proxies/plush_bear.pmx" --motion "$here/proxies/plush_bear_shake.vmd" \
        --im2 "$here/proxies/plush_bear.im2" --frames 221 $seed -o "$work/$method" >/dev/null
    mkdir -p "$out"
    cp "$work/$method/frame_00110.png" "$out/plush_$method.png"
    cp "$work/$method/quality.png" "$out/plush_${method}_quality.png"
    cp "$work/$method/report.md" "$out/plush_${method}_report.md"
done
echo "wrote $out/plush_before.png and $out/plush_after.png (and their quality plots and reports)"
