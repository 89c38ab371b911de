#!/bin/sh
# Builds the libFuzzer targets with Debian's clang (the main build uses g++)
# and runs each for a bounded time under ASan/UBSan. Exit 77 = skipped.
# The list of targets is tests/fuzz/meson.build's.
# usage: run_fuzzers.sh SOURCE_ROOT BUILD_DIR [SECONDS] [TARGET...]
# Targets: decoder ingest agent kernel_text (the default, CI's set), and the
# single-parser builds of kernel_text: mountinfo nfit kmsg vmstat meminfo cedt
# uevent (the long run's, tests/fuzz/long_run.sh). FUZZ_MAX_LEN caps an input's
# size (default 65536).
set -eu
src=$1
out=$2/fuzz
secs=${3:-20}
shift 3 2>/dev/null || shift $#
targets=${*:-"decoder ingest agent kernel_text"}

CXX=${FUZZ_CXX:-}
if [ -z "$CXX" ]; then
    for c in clang++ clang++-16 clang++-15 clang++-14; do
        if command -v "$c" >/dev/null 2>&1; then CXX=$c; break; fi
    done
fi
if [ -z "$CXX" ]; then
    echo "SKIP: no clang++ (apt-get install clang libclang-rt-14-dev)"; exit 77
fi
mkdir -p "$out"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long){return 0;}\n' > "$out/probe.cpp"
if ! "$CXX" -fsanitize=fuzzer "$out/probe.cpp" -o "$out/probe" 2>"$out/probe.log"; then
    echo "SKIP: $CXX cannot link -fsanitize=fuzzer (libclang-rt missing?):"; cat "$out/probe.log"; exit 77
fi

# The targets and their sources come from tests/fuzz/meson.build (the same
# dependencies the replay tests link), built in a second meson build dir with
# clang: sanitizers everywhere, libFuzzer's coverage on every file. A unity
# build (meson's default of 4 files per compile): the instrumented
# compile of the same headers and templates is done a quarter as often,
# 365 CPU-s instead of 508 on this project's 2-core machine (bench/README.md
# at 0db4c71).
# Through ccache when there is one (meson adds it only when CXX is unset),
# keyed on content, not on where the clone is: a machine's second run of the
# suite compiles nothing here.
engine=$out/engine
launcher=""
command -v ccache >/dev/null 2>&1 && launcher="ccache "
export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=true
if [ ! -f "$engine/build.ninja" ]; then
    echo "== configuring the libFuzzer build in $engine with $launcher$CXX"
    CXX="$launcher$CXX" meson setup "$engine" "$src" -Dfuzz_engine=true -Dbuildtype=plain --unity on \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dcpp_args="-g -O1 -fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined" \
        -Dvm_tests=disabled -Dman=disabled -Dsystemd=disabled -Dstatic_libstdcxx=false >"$out/engine-setup.log" 2>&1 ||
        { cat "$out/engine-setup.log"; exit 1; }
fi
# shellcheck disable=SC2046
meson compile -C "$engine" $(for t in $targets; do printf 'fuzz_%s ' "$t"; done) >"$out/engine-build.log" 2>&1 ||
    { tail -60 "$out/engine-build.log"; exit 1; }

status=0
for t in $targets; do
    bin="$engine/tests/fuzz/fuzz_$t"
    corpus="$out/corpus_$t"
    mkdir -p "$corpus"
    cp -n "$src/tests/fuzz/corpus/$t"/* "$corpus/" 2>/dev/null || true
    echo "== running fuzz_$t for ${secs}s"
    if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="${FUZZ_MAX_LEN:-65536}" \
        -dict="$src/tests/fuzz/json.dict" -artifact_prefix="$out/crash_${t}_" \
        -print_final_stats=1 "$corpus" 2>"$out/fuzz_$t.log"; then
        echo "FAIL: fuzz_$t found a problem; see $out/fuzz_$t.log and $out/crash_${t}_*"
        tail -40 "$out/fuzz_$t.log"
        status=1
    else
        grep -E '^stat::(number_of_executed_units|new_units_added)' "$out/fuzz_$t.log" || true
    fi
done
exit $status
