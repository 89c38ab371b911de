# The guest side of bench/agent_bench.py (not a test scenario: the bench
# builds its own initramfs with this snippet, qemu-ga and vport_echo in it).
#
# Setup: fsdax + ext4 -o dax at /mnt/pmem (so the check has a DAX mount to
# verify), and Debian 12's qemu-ga on org.qemu.guest_agent.0 for the whole
# boot. Then the host drives phases over org.daxprobe.control:
#   agent       vport_echo exec-timed: start time, then `daxprobe agent` on
#               org.daxprobe.agent.0 (the host is already connected)
#   stop-agent  the agent's memory (status, smaps_rollup, smaps), SIGTERM
#   echo        vport_echo echo on the same port (poll-echo: the agent's I/O
#               pattern without its message handling)
#   stop-echo   stop it
#   cpu LABEL   the running process's CPU time (schedstat ns) into cpu.txt
#   done        qemu-ga's memory, stop it, ship the results
DAXPROBE_REFERENCE=0
QGA_NAME=org.qemu.guest_agent.0

scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    # Inode tables and journal written now, not by ext4lazyinit in the
    # background while the host is timing round trips (one vCPU).
    run mkfs.ext4 -F -q -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 $dev
    mount_dev ext4 $dev dax
    run dd if=/dev/zero of=$PMEM_MNT/file bs=1M count=4
    QGA_PORT=$(find_port $QGA_NAME)
    [ -n "$QGA_PORT" ] || { echo "no $QGA_NAME port" > $R/error.txt; return 1; }
    mkdir -p /var/run /tmp/qga
    qemu-ga --version > $R/qemu-ga-version.txt 2>&1
    qemu-ga -m virtio-serial -p "$QGA_PORT" -f /tmp/qga.pid -t /tmp/qga \
        -l $R/qemu-ga.log &
    QGA_PID=$!
    echo "qemu-ga pid $QGA_PID on $QGA_PORT" >> $R/commands.log
}

# memory NAME PID: what the kernel says about PID's memory, into $R/NAME.*
memory() {
    cat /proc/$2/status > $R/$1.status 2>&1
    cat /proc/$2/smaps_rollup > $R/$1.smaps_rollup 2>&1
    cat /proc/$2/smaps > $R/$1.smaps 2>&1
}

scenario_after() {
    [ -n "$AGENT_PORT" ] || { echo "no org.daxprobe.agent.0 port" > $R/error.txt; return; }
    i=0
    while :; do
        cmd=$(wait_host 900) || break
        case "$cmd" in
        agent)
            i=$((i + 1))
            vport_echo exec-timed $R/agent-start-$i.txt daxprobe agent --device "$AGENT_PORT" \
                --interval 3600 --recheck 0 2> $R/agent-$i.log &
            PID=$! ;;
        stop-agent)
            memory agent-$i $PID
            kill -TERM $PID; wait $PID
            echo $? > $R/agent-$i.rc ;;
        echo|poll-echo)
            vport_echo $cmd "$AGENT_PORT" 2> $R/$cmd-$i.log &
            PID=$! ;;
        stop-echo)
            kill -TERM $PID; wait $PID ;;
        cpu\ *) # CPU time of the running agent/echo so far (ns), labelled
            echo "${cmd#cpu } $(cut -d' ' -f1 /proc/$PID/schedstat)" >> $R/cpu.txt ;;
        done) break ;;
        *) echo "unknown bench command '$cmd'" >> $R/error.txt ;;
        esac
    done
    echo $i > $R/rounds
    memory qemu-ga $QGA_PID
    kill -TERM $QGA_PID; wait $QGA_PID
}
