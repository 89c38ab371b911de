#!/bin/sh
# The whole tree follows .clang-format: every C++ file git tracks (or, outside
# a git checkout such as a package build's copy, every one under the source
# root) is what clang-format would write. Prints the files that are not and
# the command that fixes them. Exit 77 (SKIP) without clang-format.
set -eu
src=$1
fmt=
for c in clang-format clang-format-16 clang-format-15 clang-format-14; do
    if command -v "$c" >/dev/null 2>&1; then fmt=$c; break; fi
done
if [ -z "$fmt" ]; then
    echo "SKIP: clang-format not found (apt-get install clang-format)"
    exit 77
fi
cd "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.cpp' '*.h')
else
    files=$(find . -name build -prune -o -name '.*' -prune -o \( -name '*.cpp' -o -name '*.h' \) -print)
fi
bad=0
n=0
for f in $files; do
    n=$((n + 1))
    if ! "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "not clang-format clean: $f"
        bad=$((bad + 1))
    fi
done
echo "$n files checked with $fmt, $bad not clean"
if [ "$bad" -ne 0 ]; then
    echo "fix: clang-format -i FILE (the tree's .clang-format)"
    exit 1
fi
