#!/usr/bin/env bash
# Cages on target: every material with faces of the soak's models (tools/soak.sh's cases) caged by
# plush run --cage MATERIAL:N for N = 100 and 300 (one frame each), and the cage's triangles against N.
# One line per material and target (model|material|faces|N|triangles, "|wrap" when the cage is one wrap),
# then how many are within 20% of N (a material with no more faces than N is within when its cage is not
# over 120% of N). PLUSH_BIN names another plush binary.
#   tools/cage_target_sweep.sh [FILTER]     FILTER: only models whose path contains it
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
data=$here/../shared/data
plush=${PLUSH_BIN:-$here/build/plush}
filter=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
models=$(sed -n 's/^    "\([^|]*\.pmx\)|.*/\1/p' "$here/tools/soak.sh" | awk '!seen[$0]++')
good=0 total=0
while IFS= read -r model; do
    case $model in *"$filter"*) ;; *) continue ;; esac
    while IFS='|' read -r idx faces; do
        faces=${faces//,/}
        [ "$faces" = 0 ] && continue
        for n in 100 300; do
            log=$("$plush" run "$data/$model" --cage "$idx:$n" --frames 1 -o "$out/run" --export quality 2>&1)
            line=$(printf '%s\n' "$log" | grep -m1 '^  cage ')
            tri=$(printf '%s\n' "$line" | sed -n 's/^  cage *\([0-9]*\) triangles.*/\1/p')
            wrap=""
            case $line in *wrap*) wrap="|wrap" ;; esac
            rm -rf "$out/run"
            total=$((total + 1))
            if [ -z "$tri" ]; then
                echo "$model|$idx|$faces|$n|failed: $(printf '%s\n' "$log" | grep -m1 error)"
                continue
            fi
            echo "$model|$idx|$faces|$n|$tri$wrap"
            if [ $((5 * tri)) -le $((6 * n)) ] && { [ $((5 * tri)) -ge $((4 * n)) ] || [ "$faces" -le "$n" ]; }; then
                good=$((good + 1))
            fi
        done
    done < <("$plush" info "$data/$model" 2>/dev/null |
        sed -n 's/^  material \([0-9]*\) *"\(.*\)"\( (.*)\)\{0,1\}; \([0-9,]*\) faces.*/\1|\4/p')
done <<<"$models"
echo "within 20% of the target: $good of $total"
[ "$good" = "$total" ]
