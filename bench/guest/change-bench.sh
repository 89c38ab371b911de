# The guest side of bench/change_bench.py (not a test scenario: the bench
# adds this snippet to the test bed's initramfs). fsdax + ext4 -o dax at
# /mnt/pmem, `daxprobe agent` with no timer that could report (interval an
# hour, re-check off), the host's collector on its port. Then the host names
# one change at a time over org.daxprobe.control; each prints
# BENCH-CMD-END KIND I RC on the console when its command has returned.
# Beside the agent, bench/change_floor.cpp on org.daxprobe.floor: the same
# kernel signals, one line per change (the floor the agent is read against).
#   remount I     umount, mount again with dax (I odd) or without (I even)
#   badblocks I   8 more sectors on /sys/block/pmem0/badblocks
#   namespace I   ndctl create-namespace -f -e namespace0.0 -m devdax|fsdax
#   daxctl I      daxctl reconfigure-device dax0.0 to system-ram|devdax
#   devdax 0      (untimed) unmount, make the namespace devdax for daxctl
#   done          stop the agent, ship the results
DAXPROBE_REFERENCE=0

scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    mkfs_dev ext4 $(first_pmem)
    mount_dev ext4 $(first_pmem) dax
    run modprobe kmem
}

change() {
    case "$1" in
    remount)
        umount $PMEM_MNT
        if [ $(($2 % 2)) -eq 1 ]; then mount -t ext4 -o dax /dev/pmem0 $PMEM_MNT
        else mount -t ext4 /dev/pmem0 $PMEM_MNT; fi ;;
    badblocks)
        echo "$((4096 + 64 * $2)) 8" > /sys/block/pmem0/badblocks ;;
    namespace)
        grep -q " $PMEM_MNT " /proc/mounts && umount $PMEM_MNT
        if [ $(($2 % 2)) -eq 0 ]; then m=devdax; else m=fsdax; fi
        ndctl create-namespace -f -e namespace0.0 -m $m > /dev/null ;;
    daxctl)
        if [ $(($2 % 2)) -eq 0 ]; then m=system-ram; else m=devdax; fi
        daxctl reconfigure-device --mode=$m --force dax0.0 > /dev/null ;;
    devdax)
        grep -q " $PMEM_MNT " /proc/mounts && umount $PMEM_MNT
        ndctl create-namespace -f -e namespace0.0 -m devdax > /dev/null ;;
    *) return 2 ;;
    esac
}

scenario_after() {
    FLOOR_PORT=$(find_port org.daxprobe.floor)
    [ -n "$FLOOR_PORT" ] || { echo "no org.daxprobe.floor port" > $R/error.txt; return 1; }
    change_floor "$FLOOR_PORT" 2> $R/floor.log &
    FLOOR_PID=$!
    ( daxprobe agent --device "$AGENT_PORT" --interval 3600 --recheck 0 2>&1
      echo "DAXPROBE-AGENT-EXIT rc=$?" ) > $R/agent.log &
    echo "BENCH-AGENT-STARTED" > /dev/console
    while line=$(wait_host 600); do
        set -- $line
        [ "$1" = done ] && break
        change "$1" "$2" >> $R/commands.log 2>&1
        echo "BENCH-CMD-END $1 $2 $?" > /dev/console
    done
    pid=$(pidof daxprobe)
    # What the floor's 10 ms poll took from the agent's one vCPU (ns).
    echo "floor $(cut -d' ' -f1 /proc/$FLOOR_PID/schedstat)" > $R/cpu.txt
    echo "agent $(cut -d' ' -f1 /proc/$pid/schedstat)" >> $R/cpu.txt
    echo "uptime $(cut -d' ' -f1 /proc/uptime)" >> $R/cpu.txt
    [ -n "$pid" ] && kill -TERM $pid
    kill -TERM $FLOOR_PID
    wait
}
