#!/bin/sh
# Builds the libFuzzer targets with Debian's clang (the main build uses g++)
# and runs each for a bounded time under ASan/UBSan. Exit 77 = skipped.
# usage: run_fuzzers.sh SOURCE_ROOT BUILD_DIR [SECONDS] [TARGET...]
# Targets: decoder ingest agent kernel_text (the default, CI's set), and the
# single-parser builds of kernel_text: mountinfo nfit kmsg vmstat meminfo
# (the long run's, tests/fuzz/long_run.sh). FUZZ_MAX_LEN caps an input's
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

flags="-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
inc="-I$src" # includes name their folder from the project root
base="$src/base/result.cpp $src/base/root.cpp $src/base/beneath.cpp"
proto="$src/protocol/line_decoder.cpp $src/protocol/message.cpp $src/protocol/json_text.cpp $src/protocol/json_validate.cpp $src/protocol/schema.cpp $src/protocol/verdicts.cpp"

sources() {
    case $1 in
    decoder) echo "$src/tests/fuzz/fuzz_decoder.cpp $base $proto" ;;
    ingest) echo "$src/tests/fuzz/fuzz_ingest.cpp $base $proto $src/collector/ingest.cpp $src/collector/store.cpp $src/collector/store_file.cpp $src/collector/store_read.cpp $src/collector/sqlite_db.cpp $src/collector/wal_checkpointer.cpp" ;;
    agent) echo "$src/tests/fuzz/fuzz_agent.cpp $base $proto $src/agent/daemon/agent_session.cpp $src/agent/daemon/command_scan.cpp" ;;
    kernel_text | mountinfo | nfit | kmsg | vmstat | meminfo) echo "$src/tests/fuzz/fuzz_kernel_text.cpp $base $src/probes/text_util.cpp $src/probes/mountinfo.cpp $src/probes/nfit.cpp $src/probes/kmsg.cpp $src/probes/mount_history.cpp $src/probes/dax_refusals.cpp $src/probes/remedies.cpp $src/probes/bounce_buffer.cpp $src/probes/vmstat.cpp $src/probes/meminfo.cpp" ;;
    *) echo "unknown fuzz target '$1'" >&2; exit 2 ;;
    esac
}
# The single-parser targets: fuzz_kernel_text.cpp with the parser fixed.
defines() {
    case $1 in
    mountinfo) echo "-DKERNEL_TEXT_PARSER=0" ;;
    nfit) echo "-DKERNEL_TEXT_PARSER=1" ;;
    kmsg) echo "-DKERNEL_TEXT_PARSER=2" ;;
    vmstat) echo "-DKERNEL_TEXT_PARSER=3" ;;
    meminfo) echo "-DKERNEL_TEXT_PARSER=4" ;;
    esac
}
libs() {
    case $1 in
    ingest) echo "-lsqlite3 -lfmt" ;;
    *) echo "-lfmt" ;;
    esac
}

status=0
for t in $targets; do
    bin="$out/fuzz_$t"
    srcs=$(sources "$t") || exit 2
    # Rebuild only when a source or header changed.
    stale=1
    if [ -x "$bin" ] && [ -z "$(find $srcs "$src/protocol" "$src/collector" "$src/agent/daemon" "$src/base" "$src/probes" "$src/tests/fuzz" -newer "$bin" -name '*.[ch]*' 2>/dev/null | head -1)" ]; then
        stale=0
    fi
    if [ $stale = 1 ]; then
        echo "== building fuzz_$t with $CXX"
        # shellcheck disable=SC2086
        "$CXX" $flags $(defines "$t") $inc -I"$src/tests/fuzz" $srcs $(libs "$t") -o "$bin"
    fi
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
