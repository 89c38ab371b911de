#!/bin/bash
# Mutation check: plants each bug of tests/mutation/mutants.txt, one at a
# time, in a scratch copy of the tree, rebuilds, runs the unit and
# integration suites, and expects them to fail. Prints one line per mutant
# and the score; exits 1 if any mutant survived.
#
#   tests/mutation/run.sh [MUTANT_ID...]              (default: all)
#   tests/mutation/run.sh --in-place BUILD [--no-baseline] [ID...]
#
# By default the scratch copy lives in .mutation/ at the top of the tree
# (ignored by git); its first build is a full one, after that each mutant
# recompiles one file and relinks (26-115 s per mutant, 65 s on average, on
# 2 cores at load 8-12: 7 mutants in 487 s, see the commit that says so).
# --in-place plants each bug in the tree itself and rebuilds BUILD (an
# existing build of this tree): no second full build, but only for a clean
# checkout of the mutated files; each file is restored after its mutant and
# on any exit (trap). --no-baseline: the suites just passed on BUILD (CI
# runs this right after the README's test command), so do not run them
# again first.
#
# Each mutant runs only the tests that can see it: those whose programs its
# rebuild relinked (tests/mutation/affected.py); all of both suites if it
# changed no program. The first failing test ends its run (--maxfail 1).
# Timeouts are tripled, so that a slow machine is not taken for a caught
# mutant.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
list="$top/tests/mutation/mutants.txt"
pristine=$(mktemp -d)
baseline=yes
if [ "${1:-}" = "--in-place" ]; then
    scratch="$top"
    builddir=$(cd "$2" && pwd) || exit 2
    shift 2
    if [ "${1:-}" = "--no-baseline" ]; then
        baseline=no
        shift
    fi
    restore_all() {
        (cd "$pristine" && find . -type f) | while read -r f; do
            cp "$pristine/$f" "$top/$f"
            git -C "$top" update-index --no-assume-unchanged -- "$f"
        done
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

# Only what the suites run: the whole build would remake the .debs and the
# guest images from the mutated sources.
programs=()
compile() {
    [ ${#programs[@]} -gt 0 ] ||
        mapfile -t programs < <(python3 "$top/tests/mutation/affected.py" programs "$builddir")
    ninja -C "$builddir" "${programs[@]}"
}

suites() {
    meson test -C "$builddir" --no-rebuild --timeout-multiplier 3 --maxfail 1 "$@"
}

if [ $baseline = yes ]; then
    echo "== baseline: the unmutated tree must build and pass"
    if ! compile >"$logs/baseline.log" 2>&1 ||
        ! suites --suite unit --suite integration >>"$logs/baseline.log" 2>&1; then
        echo "baseline fails; see $logs/baseline.log"
        exit 2
    fi
elif ! compile >"$logs/baseline.log" 2>&1; then
    echo "the unmutated tree does not build; see $logs/baseline.log"
    exit 2
fi
# The unmutated programs' digests: what each mutant's are compared with.
snapshot="$logs/outputs.json"
python3 "$top/tests/mutation/affected.py" snapshot "$builddir" "$snapshot" || exit 2

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
        # git describe --dirty (the programs' version) must not see the
        # mutant, or every program would relink for it.
        [ "$scratch" = "$top" ] && git -C "$top" update-index --assume-unchanged -- "$file"
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
    start=$SECONDS
    tests=()
    if ! compile >"$log" 2>&1; then
        verdict="CAUGHT   $id: does not build"
        caught=$((caught + 1))
    elif mapfile -t tests < <(python3 "$top/tests/mutation/affected.py" select "$builddir" "$snapshot") &&
        echo "tests that can see it: ${tests[*]:-all (no program changed)}" >>"$log" &&
        suites ${tests[@]+"${tests[@]}"} $([ ${#tests[@]} -gt 0 ] || echo --suite unit --suite integration) >>"$log" 2>&1; then
        verdict="SURVIVED $id: $why"
        survived=$((survived + 1)); survivors+=("$id")
    else
        failing=$(grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$log" | sed -E 's/^ *[0-9]+\/[0-9]+ +//; s/ +(FAIL|TIMEOUT|ERROR).*//' | tr -s ' ' | paste -sd, -)
        verdict="CAUGHT   $id by ${failing:-?}"
        caught=$((caught + 1))
    fi
    # Rebuilt with the next mutant (the restored file's objects are ccache hits).
    cp "$pristine/$file" "$scratch/$file"
    echo "$verdict ($((SECONDS - start)) s, ${#tests[@]} tests)"
done 3<"$list"

# Leave the build matching the tree, for the next run.
compile >/dev/null 2>&1
echo "== score: $caught of $total caught"
[ $survived -eq 0 ] || { echo "survivors: ${survivors[*]}"; exit 1; }
