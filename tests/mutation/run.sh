#!/bin/bash
# Mutation check: plants each bug of tests/mutation/mutants.txt, one at a
# time, in a scratch copy of the tree, rebuilds, runs the unit and
# integration suites, and expects them to fail. Prints one line per mutant
# and the score; exits 1 if any mutant survived.
#
#   tests/mutation/run.sh [MUTANT_ID...]              (default: all)
#   tests/mutation/run.sh --in-place BUILD [ID...]
#
# By default the scratch copy lives in .mutation/ at the top of the tree
# (ignored by git); its first build is a full one, after that each mutant
# recompiles one file and relinks (1-3 minutes per mutant on 2 cores).
# --in-place plants each bug in the tree itself and rebuilds BUILD (an
# existing build of this tree): no second full build, but only for a clean
# checkout of the mutated files; each file is restored after its mutant and
# on any exit (trap).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
list="$top/tests/mutation/mutants.txt"
pristine=$(mktemp -d)
if [ "${1:-}" = "--in-place" ]; then
    scratch="$top"
    builddir=$(cd "$2" && pwd) || exit 2
    shift 2
    restore_all() {
        (cd "$pristine" && find . -type f) | while read -r f; do cp "$pristine/$f" "$top/$f"; done
        rm -rf "$pristine"
    }
    trap restore_all EXIT
    trap 'exit 130' INT TERM
else
    scratch="$top/.mutation"
    builddir="$scratch/build"
    mkdir -p "$scratch"
    # A fresh copy of the tracked and new files (not build dirs, not .git).
    (cd "$top" && git ls-files -co --exclude-standard -z) |
        (cd "$top" && tar --null -T - -cf -) | (cd "$scratch" && tar -xf -)
    if [ ! -f "$builddir/build.ninja" ]; then
        (cd "$scratch" && meson setup build -Dvm_tests=disabled >/dev/null) || { echo "setup failed"; exit 2; }
    fi
    trap 'rm -rf "$pristine"' EXIT
fi
logs="$builddir/mutation-logs"
mkdir -p "$logs"

suites() {
    meson test -C "$builddir" --suite unit --suite integration --no-rebuild "$@"
}

echo "== baseline: the unmutated tree must build and pass"
if ! meson compile -C "$builddir" >"$logs/baseline.log" 2>&1 || ! suites >>"$logs/baseline.log" 2>&1; then
    echo "baseline fails; see $logs/baseline.log"
    exit 2
fi

caught=0 survived=0 total=0
survivors=()
while IFS=$'\t' read -r -u 3 id file from to why; do
    [[ -z "$id" || "$id" == \#* ]] && continue
    if [ $# -gt 0 ] && [[ ! " $* " == *" $id "* ]]; then
        continue
    fi
    total=$((total + 1))
    if [ ! -f "$pristine/$file" ]; then
        if [ "$scratch" = "$top" ] && ! git -C "$top" diff --quiet HEAD -- "$file"; then
            echo "ERROR    $id: $file has uncommitted changes; --in-place needs a clean file"
            survived=$((survived + 1)); survivors+=("$id (not planted)")
            continue
        fi
        mkdir -p "$(dirname "$pristine/$file")"
        cp -p "$top/$file" "$pristine/$file"
    fi
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
    log="$logs/mutant-$id.log"
    if ! meson compile -C "$builddir" >"$log" 2>&1; then
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
    cp "$pristine/$file" "$scratch/$file"
done 3<"$list"

# Leave the build matching the tree, for the next run.
meson compile -C "$builddir" >/dev/null 2>&1
echo "== score: $caught of $total caught"
[ $survived -eq 0 ] || { echo "survivors: ${survivors[*]}"; exit 1; }
