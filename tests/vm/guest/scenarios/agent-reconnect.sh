# fsdax + ext4 -o dax, then `daxprobe agent` on org.daxprobe.agent.0. The host
# (scenarios.agent_reconnect_host) connects, takes the greeting and the start
# report without acknowledging it, runs `check`, disconnects, reconnects, gets
# the unacknowledged report again and acknowledges it.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
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
    pid=$(pidof daxprobe)
    [ -n "$pid" ] && kill -TERM $pid
    wait
}
