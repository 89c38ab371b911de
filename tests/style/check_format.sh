#!/bin/sh
# The whole tree follows .clang-format, and every quoted include names its
# folder from the project root ("protocol/schema.h", docs/conventions.md).
# Checks every C++ file git tracks (or, outside a git checkout such as a
# package build's copy, every one under the source root). Prints the files
# that are not clean and the command that fixes them. Exit 77 (SKIP) without
# clang-format.
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
n=$(echo "$files" | wc -w)
status=0
# One clang-format process for the whole tree: one per file took 30 s on a
# busy machine.
# shellcheck disable=SC2086
if ! "$fmt" --dry-run -Werror $files 2>/tmp/check_format.$$; then
    grep -o '^[^:]*\.\(cpp\|h\):' /tmp/check_format.$$ | sort -u | sed 's/^/not clang-format clean: /; s/:$//'
    echo "fix: clang-format -i FILE (the tree's .clang-format)"
    status=1
fi
rm -f /tmp/check_format.$$
# shellcheck disable=SC2086
bare=$(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]*"' $files || true)
if [ -n "$bare" ]; then
    echo "$bare" | sed 's/^/include without its folder: /'
    echo "fix: name the header from the project root, e.g. #include \"protocol/schema.h\""
    status=1
fi
echo "$n files checked with $fmt and for bare includes: $([ $status = 0 ] && echo clean || echo NOT clean)"
exit $status
