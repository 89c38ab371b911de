#!/bin/bash
# Mutation check: plants each bug of tests/mutation/mutants.txt, one at a
# time, in a scratch copy of the tree, rebuilds, runs the unit and
# integration suites, and expects them to fail. Prints one line per mutant
# and the score; exits 1 if any mutant survived.
#
#   tests/mutation/run.sh [MUTANT_ID...]     (default: all)
#
# The scratch copy lives in .mutation/ at the top of the tree (ignored by
# git) and mirrors the tree's layout, so with CCACHE_BASEDIR set to a parent
# of the tree a rebuild reuses the main build's cache: each mutant recompiles
# one file and relinks. Takes roughly 1-3 minutes per mutant on 2 cores.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
scratch="$top/.mutation"
list="$top/tests/mutation/mutants.txt"
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$top")}

mkdir -p "$scratch"
# A fresh copy of the tracked and new files (not build dirs, not .git).
(cd "$top" && git ls-files -co --exclude-standard -z) |
    (cd "$top" && tar --null -T - -cf -) | (cd "$scratch" && tar -xf -)
if [ ! -f "$scratch/build/build.ninja" ]; then
    (cd "$scratch" && meson setup build -Dvm_tests=disabled >/dev/null) || { echo "setup failed"; exit 2; }
fi

suites() {
    meson test -C "$scratch/build" --suite unit --suite integration --no-rebuild "$@"
}

echo "== baseline: the unmutated copy must build and pass"
if ! meson compile -C "$scratch/build" >"$scratch/baseline.log" 2>&1 || ! suites >>"$scratch/baseline.log" 2>&1; then
    echo "baseline fails; see $scratch/baseline.log"
    exit 2
fi

caught=0 survived=0 total=0
survivors=()
while IFS=$'\t' read -r id file from to why; do
    [[ -z "$id" || "$id" == \#* ]] && continue
    if [ $# -gt 0 ] && [[ ! " $* " == *" $id "* ]]; then
        continue
    fi
    total=$((total + 1))
    cp "$top/$file" "$scratch/$file"
    if ! python3 - "$scratch/$file" "$from" "$to" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2].replace("@NL@", "\n"), sys.argv[3].replace("@NL@", "\n")
text = open(path).read()
if old not in text:
    sys.exit(f"text to replace not found in {path}: {old!r}")
open(path, "w").write(text.replace(old, new, 1))
PY
    then
        echo "ERROR    $id: could not be planted (the source moved on: update mutants.txt)"
        survived=$((survived + 1)); survivors+=("$id (not planted)")
        continue
    fi
    log="$scratch/mutant-$id.log"
    if ! meson compile -C "$scratch/build" >"$log" 2>&1; then
        verdict="CAUGHT   $id: does not build"
        caught=$((caught + 1))
    elif suites >>"$log" 2>&1; then
        verdict="SURVIVED $id: $why"
        survived=$((survived + 1)); survivors+=("$id")
    else
        failing=$(grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$log" | sed -E 's/^ *[0-9]+\/[0-9]+ +//; s/ +(FAIL|TIMEOUT|ERROR).*//' | tr -s ' ' | paste -sd, -)
        verdict="CAUGHT   $id by ${failing:-?}"
        caught=$((caught + 1))
    fi
    echo "$verdict"
    cp "$top/$file" "$scratch/$file"
done <"$list"

# Leave the scratch build matching the tree, for the next run.
meson compile -C "$scratch/build" >/dev/null 2>&1
echo "== score: $caught of $total caught"
[ $survived -eq 0 ] || { echo "survivors: ${survivors[*]}"; exit 1; }
