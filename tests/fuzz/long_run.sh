#!/bin/sh
# The long fuzzing job (issue 11, item 9), separate from CI's short run:
# runs the targets in turns of SLICE seconds (run_fuzzers.sh, ASan/UBSan)
# until their executions add up to TOTAL, or until DEADLINE seconds have
# passed. Each turn continues from the corpus the previous one grew
# (BUILD/fuzz/corpus_TARGET). Executions are libFuzzer's own count
# (stat::number_of_executed_units), one line per turn in
# BUILD/fuzz/long_run.tsv; the last line printed is the total.
# Exit 1 when a target finds a problem (its crash input is in
# BUILD/fuzz/crash_*: save it under tests/fuzz/corpus/TARGET/ so the unit
# suite replays it, then fix), 3 when the deadline came first.
#
# usage: long_run.sh SOURCE_ROOT BUILD_DIR [TOTAL] [DEADLINE] [TARGET...]
#   nice -n 19 tests/fuzz/long_run.sh . build 100000000 14400
set -eu
src=$1
build=$2
total=${3:-100000000}
deadline=${4:-14400}
shift 4 2>/dev/null || shift $#
targets=${*:-"decoder ingest agent mountinfo nfit kmsg vmstat meminfo cedt uevent"}
slice=${FUZZ_SLICE:-300}
# Small inputs run faster; every kernel text the guest reads in one piece
# (a mountinfo of dozens of mounts, an NFIT, a kmsg record) fits.
export FUZZ_MAX_LEN=${FUZZ_MAX_LEN:-8192}

out=$build/fuzz
mkdir -p "$out"
tsv=$out/long_run.tsv
[ -f "$tsv" ] || printf 'utc\ttarget\tseconds\texecutions\tnew_units\n' >"$tsv"
start=$(date +%s)
sum=0
status=0
while [ "$sum" -lt "$total" ]; do
    for t in $targets; do
        now=$(date +%s)
        if [ $((now - start)) -ge "$deadline" ]; then
            echo "deadline of ${deadline}s reached at $sum executions (target $total)"
            exit 3
        fi
        rc=0
        "$src/tests/fuzz/run_fuzzers.sh" "$src" "$build" "$slice" "$t" >"$out/long_run_$t.out" 2>&1 || rc=$?
        if [ $rc = 77 ]; then
            cat "$out/long_run_$t.out"
            exit 77
        fi
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$t.log" | tail -1)
        units=$(sed -n 's/^stat::new_units_added: *//p' "$out/fuzz_$t.log" | tail -1)
        execs=${execs:-0}
        sum=$((sum + execs))
        printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$slice" "$execs" "${units:-0}" >>"$tsv"
        echo "$t: $execs executions, ${units:-0} new units; total $sum"
        if [ $rc != 0 ]; then
            cat "$out/long_run_$t.out"
            status=1
        fi
        [ "$sum" -lt "$total" ] || break
    done
    [ $status = 0 ] || exit 1
done
echo "total: $sum executions in $(($(date +%s) - start))s"
