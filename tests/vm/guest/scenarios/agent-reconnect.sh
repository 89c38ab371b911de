# fsdax + ext4 -o dax, then `daxprobe agent` on org.daxprobe.agent.0. The host
# (scenarios.agent_reconnect_host) connects, takes the greeting and the start
# report without acknowledging it, runs `check`, disconnects, reconnects, gets
# the unacknowledged report again and acknowledges it. Then the real collector
# connects and the guest changes what the agent watches (agent_changes below,
# tests/vm/change_checks.py): each change must reach the collector as a
# `change` report, the namespace and devdax ones through the kernel's uevents.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
}

# wait_log: guest/init.

# change_step CMD...: runs CMD, then waits for the agent to queue one more
# report (every step changes a verdict or a mode, so each makes one).
change_step() {
    n=$(grep -c ' queued (' $R/agent.log)
    run "$@"
    wait_log ' queued (' $((n + 1))
}

# A remount without DAX (the mount table), a namespace made devdax and that
# devdax given to the page allocator (uevents only: no timer runs, the
# agent's interval is an hour and its re-check off).
agent_changes() {
    dev=$(first_pmem)
    change_step umount $PMEM_MNT
    change_step mount -t ext4 $dev $PMEM_MNT
    change_step umount $PMEM_MNT
    run modprobe kmem
    u=$(grep -c 'change noticed (uevent' $R/agent.log)
    run ndctl create-namespace -f -e namespace0.0 -m devdax
    wait_log 'change noticed (uevent' $((u + 1))
    u=$(grep -c 'change noticed (uevent' $R/agent.log)
    run daxctl reconfigure-device --mode=system-ram --force dax0.0
    wait_log 'change noticed (uevent' $((u + 1))
    daxctl list > $R/daxctl-after.json 2>&1
    # The host waits until the collector stored each change (a burst that
    # outlasted the agent's debounce may have made one more report).
    echo "DAXPROBE-CHANGES-DONE" > /dev/console
}

scenario_after() {
    if [ -z "$AGENT_PORT" ]; then
        echo "no org.daxprobe.agent.0 port" > $R/error.txt
        return
    fi
    # The agent's log goes to the console too: the host waits on its lines.
    ( daxprobe agent --device "$AGENT_PORT" --interval 3600 --recheck 0 2>&1
      echo "DAXPROBE-AGENT-EXIT rc=$?" ) | tee $R/agent.log > /dev/console &
    # Until the host actor is done with its connections (bounded).
    wait_host 150 > $R/host-said.txt
    if grep -q '^changes' $R/host-said.txt; then
        agent_changes
        wait_host 150 >> $R/host-said.txt
    fi
    pid=$(pidof daxprobe)
    [ -n "$pid" ] && kill -TERM $pid
    wait
}
