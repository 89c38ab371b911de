# fsdax + ext4 -o dax, then `daxprobe agent --interval 2` on
# org.daxprobe.agent.0, talking to the real host collector
# (collector_scenario.collector_reconnect_host). The first collector stores
# the start report and goes away; while no host is connected the agent keeps
# reporting into its queue; a second collector must receive all of them
# (resent from the queue), and `daxprobe-collector query` must show the
# guest's verdict with no report lost or duplicated. Then the guest remounts
# without DAX and the agent must report the changed verdict at once.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
}

# wait_log: guest/init.

scenario_after() {
    if [ -z "$AGENT_PORT" ]; then
        echo "no org.daxprobe.agent.0 port" > $R/error.txt
        return
    fi
    ( daxprobe agent --device "$AGENT_PORT" --interval 2 --recheck 0 2>&1
      echo "DAXPROBE-AGENT-EXIT rc=$?" ) | tee $R/agent.log > /dev/console &
    # Collector 1 stores the start report, then goes away.
    wait_log 'host disconnected' 1
    # Two interval reports while no host is connected.
    wait_log 'host away' 2
    last=$(grep -o 'report [0-9]* queued' $R/agent.log | tail -1 | cut -d' ' -f2)
    echo "DAXPROBE-AWAY-REPORTS last=$last" > /dev/console
    # A verdict change: the agent re-checks when the mount table changes and
    # reports at once (reason "change"), without waiting for the interval.
    dev=$(first_pmem)
    run umount $PMEM_MNT
    run mount -t ext4 $dev $PMEM_MNT
    wait_log 'change, problems_found' 1
    # Collector 2 takes them from the queue, acks, and goes away too.
    wait_log 'host disconnected' 2
    pid=$(pidof daxprobe)
    [ -n "$pid" ] && kill -TERM $pid
    wait
}
