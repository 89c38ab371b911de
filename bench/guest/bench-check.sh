# Not a test scenario: bench/check_bench.py guest boots this to measure
# `daxprobe check` against its peer toolchain inside the test guest (fsdax,
# ext4 -o dax, one file), with bench/run_rusage. Figures go to bench.jsonl.
DAXPROBE_REFERENCE=0

bench_one() {
    name=$1
    shift
    run_rusage -t "$name" -n 1 -- "$@" >> $R/bench.jsonl 2>> $R/bench.stderr
}

bench_syscalls() {
    name=$1
    shift
    command -v strace > /dev/null || return 0
    strace -f -c -o $R/strace-$name.txt "$@" > /dev/null 2>&1
}

scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    F=$PMEM_MNT/file
    dd if=/dev/zero of=$F bs=1M count=32 2> /dev/null
    runs=$(arg daxprobe.bench_runs)
    names="check check-active ndctl daxctl findmnt fincore cat"
    i=0
    while [ "$i" -lt "${runs:-5}" ]; do
        # Rotate the order each round, so drift hits every command alike.
        set -- $names
        k=0
        while [ $k -lt $((i % 7)) ]; do
            first=$1
            shift
            set -- "$@" $first
            k=$((k + 1))
        done
        for n in "$@"; do
            case $n in
                check) bench_one $n daxprobe check --json --no-active --path $F ;;
                check-active) bench_one $n daxprobe check --json --path $F ;;
                ndctl) bench_one $n ndctl list -BRN ;;
                daxctl) bench_one $n daxctl list ;;
                findmnt) bench_one $n findmnt -J ;;
                fincore) bench_one $n fincore $F ;;
                cat) bench_one $n cat /proc/meminfo /proc/vmstat ;;
            esac
        done
        i=$((i + 1))
    done
    bench_syscalls check daxprobe check --json --no-active --path $F
    bench_syscalls check-active daxprobe check --json --path $F
    bench_syscalls ndctl ndctl list -BRN
    bench_syscalls daxctl daxctl list
    bench_syscalls findmnt findmnt -J
    bench_syscalls fincore fincore $F
    bench_syscalls cat cat /proc/meminfo /proc/vmstat
}
