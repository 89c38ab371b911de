# perf's "unusable" direction: perf_event_paranoid 3 (Debian's kernels: then
# only CAP_SYS_ADMIN may open perf events) and an unprivileged user (nobody,
# through setpriv). daxprobe must say perf is unusable, and why, exactly when
# the kernel refuses the same credentials (kernel-answers under the same
# setpriv); tracefs (mode 0700) is unreadable for that user too. By its path:
# busybox sh runs its own applet (no --reuid) for a bare `setpriv`.
NOBODY="/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups"

scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=8 conv=fsync
    PARANOID_WAS=$(cat /proc/sys/kernel/perf_event_paranoid)
    echo 3 > /proc/sys/kernel/perf_event_paranoid
    DAXPROBE_AS=$NOBODY
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    DAXPROBE_PROFILE="--path $PMEM_MNT/testfile"
}

scenario_after() {
    profile_cmd profile-user -- dd if=$PMEM_MNT/testfile of=/dev/null bs=1M
    echo "$PARANOID_WAS" > /proc/sys/kernel/perf_event_paranoid
}
